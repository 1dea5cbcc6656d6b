package sipua

import (
	"github.com/emiago/sipgo/sip"
)

// Draining: a server shutting down takes no new call but carries its live
// ones to their end. From Drain on, a request that starts something (an
// INVITE outside a dialog, OPTIONS, REGISTER...) is answered 503 with
// Retry-After, so a proxy probing with OPTIONS (Kamailio's dispatcher)
// marks this server down and sends new calls to another; requests inside
// a dialog (ACK, BYE, re-INVITE, INFO) go on. The legs of our own calls
// over the loopback trunk (Admission.Exempt) are still answered: their
// outbound side was admitted before the drain began.

// drainRetryAfter is the Retry-After of a refusal while draining, in
// seconds, as every 503 of Parley (docs/operations.md, "Database outage").
const drainRetryAfter = "5"

// Drain makes the UA refuse new work, as above. It does not block.
func (u *UA) Drain() { u.draining.Store(true) }

// Draining reports whether Drain was called.
func (u *UA) Draining() bool { return u.draining.Load() }

// refuseWhileDraining answers req 503 and says true when the UA drains
// and req would start something.
func (u *UA) refuseWhileDraining(req *sip.Request, tx sip.ServerTransaction) bool {
	if !u.draining.Load() || !startsSomething(req) {
		return false
	}
	if exempt := u.cfg.Admission.Exempt; req.Method == sip.INVITE && exempt != nil && exempt(func(name string) string {
		if h := req.GetHeader(name); h != nil {
			return h.Value()
		}
		return ""
	}) {
		return false
	}
	res := sip.NewResponseFromRequest(req, 503, "Service Unavailable (draining)", nil)
	res.AppendHeader(sip.NewHeader("Retry-After", drainRetryAfter))
	_ = tx.Respond(res)
	return true
}
