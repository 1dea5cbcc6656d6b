package sipua

import (
	"sync/atomic"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// slot is one dialog's share of Config.MaxDialogs. Whoever takes it hands
// it to the leg it becomes, and both free it when they are done with it: the
// first free counts, so a slot is freed exactly once whatever ends the call.
type slot struct {
	ua    *UA
	freed atomic.Bool
}

// takeSlot takes a dialog slot; nil at the limit.
func (u *UA) takeSlot() *slot {
	if u.active.Add(1) > int64(u.cfg.MaxDialogs) {
		u.active.Add(-1)
		return nil
	}
	return &slot{ua: u}
}

func (s *slot) free() {
	if s.freed.CompareAndSwap(false, true) {
		s.ua.active.Add(-1)
	}
}

// dialogKey names our side of one dialog. The Call-ID alone does not: both
// legs of a loopback call live in this UA with the same Call-ID, one as the
// caller and one as the callee, and only the tags tell them apart.
type dialogKey struct{ callID, local, remote string }

// legKey is the key of an established dialog, from its INVITE and the 2xx
// that answered it (the local tag is the From tag for the caller, the To
// tag for the callee).
func legKey(d diago.DialogSession) dialogKey {
	s := d.DialogSIP()
	k := dialogKey{callID: s.InviteRequest.CallID().Value()}
	from, to := fromTag(s.InviteRequest.From()), ""
	if s.InviteResponse != nil {
		to = toTag(s.InviteResponse.To())
	}
	if _, caller := d.(*diago.DialogClientSession); caller {
		k.local, k.remote = from, to
	} else {
		k.local, k.remote = to, from
	}
	return k
}

// requestKey is the key of the dialog an in-dialog request we received
// belongs to: its To tag is ours, its From tag the far end's.
func requestKey(req *sip.Request) dialogKey {
	return dialogKey{callID: req.CallID().Value(), local: toTag(req.To()), remote: fromTag(req.From())}
}

func fromTag(h *sip.FromHeader) string {
	if h == nil {
		return ""
	}
	t, _ := h.Params.Get("tag")
	return t
}

func toTag(h *sip.ToHeader) string {
	if h == nil {
		return ""
	}
	t, _ := h.Params.Get("tag")
	return t
}

// register makes l findable by in-dialog requests and by Close, and its
// Call-ID one whose stray answers are left alone.
func (u *UA) register(l *Leg) {
	u.strays.own(l.key.callID)
	u.legs.Store(l.key, l)
}

// forget removes l (and only l) from the registry.
func (u *UA) forget(l *Leg) {
	if u.legs.CompareAndDelete(l.key, l) {
		u.strays.disown(l.key.callID)
	}
}

// legFor is the leg an in-dialog request is for.
func (u *UA) legFor(req *sip.Request) (*Leg, bool) {
	v, ok := u.legs.Load(requestKey(req))
	if !ok {
		return nil, false
	}
	return v.(*Leg), true
}
