package webhook

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// PostCallTimeout is how long a post-call webhook has to answer.
const PostCallTimeout = 5 * time.Second

// PostCall delivers an ended call's record (body, already encoded) to its
// post-call webhook at rawURL, once, and returns the call's
// postCallWebhookStatus: "skipped" when rawURL is "" (nothing is sent),
// "sent" when the webhook answered 2xx within PostCallTimeout (the body of
// the answer is not read), "failed" otherwise. Use Deliver with
// EventPostCall for the details of a delivery.
func (s *Sender) PostCall(ctx context.Context, rawURL, secret string, body []byte) string {
	if rawURL == "" {
		return model.WebhookSkipped
	}
	return s.Deliver(ctx, Delivery{
		Event: EventPostCall, URL: rawURL, Secret: secret, Body: body,
		Timeout: s.postCallTimeout,
	}).Status()
}
