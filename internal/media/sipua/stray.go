package sipua

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/sipgo/sip"
)

// Stray answers: final answers to INVITEs that no transaction of this UA
// waits for, which sipgo hands to its transaction layer's handler of
// unmatched responses (RFC 3261 17.1.1.2; RFC 6026 for 2xx). The ones
// that matter answer INVITEs a process now gone sent: a server restarted
// on the same address hears the far end answer a leg that was ringing at
// the crash, and that far end retransmits its 2xx until ACKed (64*T1) and
// bills the call meanwhile. A stray 2xx is answered with ACK, confirming
// the dialog, then BYE, ending it (what a UAC that does not want a dialog
// does, 13.2.2.4 and 15); a 487 (or other final answer) to an INVITE this
// UA canceled from saved state (CancelInvite) with the ACK of its
// transaction (17.1.1.3).
//
// A 2xx whose Call-ID is one of this UA's legs, dialing or up, is left
// alone: its own transaction or dialog answers it, and a late retransmission
// must not end a live call. Any other stray 2xx must name one of our
// listening addresses in its top Via, as our INVITEs do. Each such Call-ID
// gets one BYE within 64*T1, and at most strayAtOnce BYEs are in flight: a
// forged 2xx costs one ACK and one BYE at most, and a flood of them is
// ignored past that bound.

const (
	// strayAtOnce bounds the BYEs to stray 2xx in flight.
	strayAtOnce = 32
	// strayByeWait bounds the wait for one such BYE's answer.
	strayByeWait = 10 * time.Second
)

// strays is a UA's record of stray answers: the Call-IDs of its own legs,
// the INVITEs it canceled from saved state, and the stray 2xx it answered.
type strays struct {
	ctx  context.Context // canceled by close: the BYEs in flight give up
	stop context.CancelFunc

	mu        sync.Mutex
	closed    bool
	live      map[string]int        // Call-ID -> legs of ours with it, dialing or up
	canceled  map[string]lostInvite // Call-ID -> INVITE canceled from saved state
	answered  map[string]time.Time  // Call-ID -> until when its 2xx is known answered with BYE
	inFlight  int                   // BYEs to stray 2xx under way
	lastSweep time.Time
	wg        sync.WaitGroup // BYEs to stray 2xx under way

	hungUp, failed, ignored atomic.Uint64
}

// lostInvite is an INVITE a gone process sent and this UA canceled.
type lostInvite struct {
	st    InviteState
	auth  *Credentials // the BYE of a 2xx that crossed the CANCEL answers challenges with it
	until time.Time
}

func newStrays() *strays {
	ctx, stop := context.WithCancel(context.Background())
	return &strays{ctx: ctx, stop: stop, live: map[string]int{}, canceled: map[string]lostInvite{}, answered: map[string]time.Time{}}
}

// own and disown count a leg of ours with Call-ID id in and out.
func (s *strays) own(id string) {
	s.mu.Lock()
	s.live[id]++
	s.mu.Unlock()
}

func (s *strays) disown(id string) {
	s.mu.Lock()
	if s.live[id]--; s.live[id] <= 0 {
		delete(s.live, id)
	}
	s.mu.Unlock()
}

// expect records st as canceled until until; false when its 2xx came
// first and was answered with BYE already: there is nothing to cancel.
func (s *strays) expect(st InviteState, auth *Credentials, until time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	if _, ok := s.answered[st.CallID]; ok {
		return false
	}
	s.canceled[st.CallID] = lostInvite{st: st, auth: auth, until: until}
	return true
}

// lookup says whether id is a leg of ours, and the INVITE with id this UA
// canceled, if any.
func (s *strays) lookup(id string) (live bool, lost lostInvite, canceled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	lost, canceled = s.canceled[id]
	return s.live[id] > 0, lost, canceled
}

// hangUp is what begin decides for a stray 2xx.
type hangUp int

const (
	hangUpNow  hangUp = iota // ACK and BYE: the first 2xx of its Call-ID
	hangUpDone               // ACK only: a retransmission, the BYE went out already
	hangUpBusy               // neither: too many BYEs in flight, or the UA is closing
)

// begin takes a BYE slot for the 2xx of Call-ID id.
func (s *strays) begin(id string) hangUp {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return hangUpBusy
	}
	if _, ok := s.answered[id]; ok {
		return hangUpDone
	}
	if s.inFlight >= strayAtOnce {
		return hangUpBusy
	}
	s.answered[id] = time.Now().Add(lostInviteWait)
	s.inFlight++
	s.wg.Add(1)
	return hangUpNow
}

func (s *strays) end() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	s.wg.Done()
}

// close gives up the BYEs in flight and waits for them.
func (s *strays) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
}

// sweep forgets expired entries, at most once a second.
func (s *strays) sweep(now time.Time) {
	if now.Sub(s.lastSweep) < time.Second {
		return
	}
	s.lastSweep = now
	for id, l := range s.canceled {
		if now.After(l.until) {
			delete(s.canceled, id)
		}
	}
	for id, until := range s.answered {
		if now.After(until) {
			delete(s.answered, id)
		}
	}
}

// StrayAnswers counts the stray 2xx answers to INVITEs this UA heard: hung
// up (ACK, then a BYE the far end answered 2xx), failed (the BYE was not
// answered, or refused) and ignored (a live leg's, not sent to us, or past
// the bound).
func (u *UA) StrayAnswers() (hungUp, failed, ignored uint64) {
	return u.strays.hungUp.Load(), u.strays.failed.Load(), u.strays.ignored.Load()
}

// strayAnswer answers res, a response no client transaction took.
func (u *UA) strayAnswer(res *sip.Response) {
	cseq, callID := res.CSeq(), res.CallID()
	if cseq == nil || callID == nil || cseq.MethodName != sip.INVITE || res.IsProvisional() {
		return // only a final answer to an INVITE waits for ours
	}
	id := callID.Value()
	live, lost, canceled := u.strays.lookup(id)
	canceled = canceled && sameBranch(res.Via(), lost.st.Via)
	log := u.log.With("sip_call_id", id, "status", res.StatusCode)
	switch {
	case live:
		if res.IsSuccess() {
			u.strays.ignored.Add(1)
		}
		return
	case !res.IsSuccess():
		if canceled {
			u.ackFinal(lost.st, res, log)
		}
		return
	case !canceled && !u.sentByUs(res.Via()):
		u.strays.ignored.Add(1)
		log.Debug("ignored a stray 2xx to an INVITE not sent from this server's address")
		return
	}
	st, err := strayDialog(res)
	if err != nil {
		u.strays.ignored.Add(1)
		log.Warn("a stray 2xx to an INVITE cannot be answered", "err", err)
		return
	}
	what := u.strays.begin(id)
	if what == hangUpBusy {
		u.strays.ignored.Add(1)
		return
	}
	if err := u.writeAck(st); err != nil {
		log.Warn("ACK of a stray 2xx not sent", "err", err)
	}
	if what == hangUpDone {
		return
	}
	go func() {
		defer u.strays.end()
		ctx, cancel := context.WithTimeout(u.strays.ctx, strayByeWait)
		defer cancel()
		if err := u.sendBye(ctx, st, lost.auth); err != nil {
			u.strays.failed.Add(1)
			log.Warn("BYE on a stray 2xx failed", "err", err)
			return
		}
		u.strays.hungUp.Add(1)
		log.Info("answered a stray 2xx with ACK and BYE: its INVITE was sent before a restart, or its call is over")
	}()
}

// writeAck sends the ACK of the 2xx that established st's dialog.
func (u *UA) writeAck(st DialogState) error {
	ack, err := st.ack()
	if err != nil {
		return err
	}
	c, err := u.client(st.Transport)
	if err != nil {
		return err
	}
	return c.WriteRequest(ack) // the client adds a Via of a new branch
}

// ackFinal sends the ACK of res, a final non-2xx answer to the INVITE st
// that this UA canceled.
func (u *UA) ackFinal(st InviteState, res *sip.Response, log *slog.Logger) {
	ack, err := st.ackFinal(res)
	if err != nil {
		log.Warn("ACK of a canceled INVITE's answer not built", "err", err)
		return
	}
	c, err := u.client(st.Transport)
	if err == nil {
		err = c.WriteRequest(ack) // the INVITE's Via is kept: the ACK is of its transaction
	}
	if err != nil {
		log.Warn("ACK of a canceled INVITE's answer not sent", "err", err)
	}
}

// strayDialog is the dialog a stray 2xx establishes, as the caller's side
// (RFC 3261 12.1.2): the remote target is its Contact, the route set its
// Record-Route reversed.
func strayDialog(res *sip.Response) (DialogState, error) {
	from, to, contact, via := res.From(), res.To(), res.Contact(), res.Via()
	if from == nil || to == nil || contact == nil || via == nil {
		return DialogState{}, errors.New("no From, To, Contact or Via")
	}
	st := DialogState{
		CallID: res.CallID().Value(), LocalTag: fromTag(from), RemoteTag: toTag(to),
		LocalURI: from.Address.String(), RemoteURI: to.Address.String(), RemoteTarget: contact.Address.String(),
		NextCSeq: res.CSeq().SeqNo + 1, Transport: strings.ToLower(via.Transport),
	}
	if st.LocalTag == "" || st.RemoteTag == "" {
		return DialogState{}, fmt.Errorf("a tag is missing (From %q, To %q)", st.LocalTag, st.RemoteTag)
	}
	records := slices.Clone(res.GetHeaders("Record-Route"))
	slices.Reverse(records)
	for _, h := range records {
		st.RouteSet = append(st.RouteSet, h.Value())
	}
	return st, nil
}

// sameBranch reports whether via, a response's top Via, is saved, the
// Via of an INVITE we sent.
func sameBranch(via *sip.ViaHeader, saved string) bool {
	if via == nil {
		return false
	}
	s, err := parseHeader[*sip.ViaHeader]("Via", saved)
	if err != nil {
		return false
	}
	a, _ := via.Params.Get("branch")
	b, _ := s.Params.Get("branch")
	return a != "" && a == b
}

// sentByUs reports whether via's sent-by is one of our listening
// addresses, as in the Via of every INVITE we send.
func (u *UA) sentByUs(via *sip.ViaHeader) bool {
	if via == nil {
		return false
	}
	bind, port, _ := net.SplitHostPort(u.addr)
	host := strings.Trim(via.Host, "[]")
	if host != u.host && host != bind {
		return false
	}
	p := via.Port
	if p == 0 {
		p = sip.DefaultPort(via.Transport)
	}
	if strconv.Itoa(p) == port {
		return true
	}
	if u.tlsAddr != "" {
		_, tlsPort, _ := net.SplitHostPort(u.tlsAddr)
		return strconv.Itoa(p) == tlsPort
	}
	return false
}
