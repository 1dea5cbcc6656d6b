package sipua

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emiago/diago"
)

// Refer asks the far end to call target itself (RFC 3515 REFER, a cold
// transfer) and waits for the outcome it reports in NOTIFY: nil once the
// new call is answered, *Rejected when the REFER or the new call failed.
// A far end that accepts the REFER (202) but reports nothing within
// notifyWait counts as done. On success the caller hangs this leg up.
func (l *Leg) Refer(ctx context.Context, target Target, notifyWait time.Duration) error {
	uri := target.uri()
	final := make(chan int, 1)
	onNotify := func(code int) {
		if code >= 200 {
			select {
			case final <- code:
			default:
			}
		}
	}
	var err error
	switch d := l.dialog.(type) {
	case *diago.DialogServerSession:
		err = d.ReferOptions(ctx, uri, diago.ReferServerOptions{OnNotify: onNotify})
	case *diago.DialogClientSession:
		err = d.ReferOptions(ctx, uri, diago.ReferClientOptions{OnNotify: onNotify})
	default:
		return errors.New("sipua: leg cannot REFER")
	}
	if err != nil {
		if rej, ok := rejection(err); ok {
			return rej
		}
		return fmt.Errorf("refer: %w", err)
	}
	t := time.NewTimer(notifyWait)
	defer t.Stop()
	select {
	case code := <-final:
		if code >= 300 {
			return &Rejected{Code: code, Reason: fmt.Sprintf("transfer target answered %d", code)}
		}
		return nil
	case <-t.C:
		return nil
	case <-l.done:
		return nil // the far end hung up on us after taking the transfer
	case <-ctx.Done():
		return ctx.Err()
	}
}
