package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// PreCallTimeout is how long a pre-call webhook has to answer.
const PreCallTimeout = 3 * time.Second

// preCallMaxResponse bounds a pre-call answer; a longer one fails.
const preCallMaxResponse = 1 << 20

// PreCallPayload is what the pre-call webhook is told about an inbound
// call before it is answered.
type PreCallPayload struct {
	AgentID    string // the agent that will handle the call
	FromNumber string // the caller, E.164
	ToNumber   string // the dialed number
	// DialedAgentID is the agent the call was routed to directly; "" when
	// it was routed by phone number (sent as null).
	DialedAgentID string
}

// MarshalJSON encodes the request body:
// {"event":"pre_call","agentId":…,"fromNumber":…,"toNumber":…,"dialedAgentId":… or null}.
func (p PreCallPayload) MarshalJSON() ([]byte, error) {
	var dialed *string
	if p.DialedAgentID != "" {
		dialed = &p.DialedAgentID
	}
	return json.Marshal(struct {
		Event         string  `json:"event"`
		AgentID       string  `json:"agentId"`
		FromNumber    string  `json:"fromNumber"`
		ToNumber      string  `json:"toNumber"`
		DialedAgentID *string `json:"dialedAgentId"`
	}{EventPreCall, p.AgentID, p.FromNumber, p.ToNumber, dialed})
}

// PreCall calls an inbound call's pre-call webhook at rawURL and returns
// the variables it answers with, and the call's preCallWebhookStatus:
//
//   - "skipped" when rawURL is "" (nothing is sent);
//   - "sent" when the webhook answered 2xx within PreCallTimeout with a
//     JSON object whose "variables" member, if present and not null, is an
//     object. The variables are returned as decoded, values untouched
//     (numbers as json.Number). An answer without variables, such as {},
//     is sent with no variables (nil);
//   - "failed" otherwise (error, timeout, non-2xx, invalid JSON, a key
//     given twice in one object, a body that is not an object, variables
//     that are not an object, an answer over 1 MiB), with no variables:
//     the call goes on with its defaults.
func (s *Sender) PreCall(ctx context.Context, rawURL, secret string, p PreCallPayload) (map[string]any, string) {
	if rawURL == "" {
		return nil, model.WebhookSkipped
	}
	body, err := json.Marshal(p)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	r := s.send(ctx, Delivery{
		Event: EventPreCall, URL: rawURL, Secret: secret, Body: body,
		Timeout: s.preCallTimeout, MaxResponse: preCallMaxResponse,
	})
	var vars map[string]any
	if r.Sent {
		if vars, err = preCallVariables(r); err != nil {
			r.Sent, r.Err = false, err
		}
	}
	s.record(EventPreCall, r)
	if !r.Sent {
		return nil, model.WebhookFailed
	}
	return vars, model.WebhookSent
}

// preCallVariables reads the variables out of a pre-call answer.
func preCallVariables(r Result) (map[string]any, error) {
	if r.Truncated {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrResponse, preCallMaxResponse)
	}
	var answer map[string]json.RawMessage
	if err := opt.CheckDuplicateKeys(r.Body); err != nil { // which one counts is anyone's guess
		return nil, fmt.Errorf("%w: %v", ErrResponse, err)
	}
	if err := json.Unmarshal(r.Body, &answer); err != nil || answer == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrResponse)
	}
	raw, ok := answer["variables"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	if err := opt.CheckText(raw); err != nil { // a NUL would fail the call's record on PostgreSQL
		return nil, fmt.Errorf("%w: variables: %v", ErrResponse, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var vars map[string]any
	if err := dec.Decode(&vars); err != nil || vars == nil {
		return nil, fmt.Errorf("%w: variables is not an object", ErrResponse)
	}
	return vars, nil
}
