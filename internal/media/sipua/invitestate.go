package sipua

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emiago/sipgo/sip"
)

// InviteState is what it takes to cancel an INVITE still ringing from
// another process, once the one that sent it is gone: the INVITE as it was
// sent, transport's Via included. A CANCEL carries the INVITE's
// Request-URI, Call-ID, From (with its tag), To, CSeq number and Route
// headers (RFC 3261 9.1), and its top Via, branch and sent-by, by which the
// far end finds the INVITE's transaction (9.2, 17.2.3). The ACK of the 487
// that ends that INVITE is built from the same (17.1.1.3).
type InviteState struct {
	RequestURI string `json:"requestUri"`
	// Via is the INVITE's top Via header value.
	Via    string `json:"via"`
	From   string `json:"from"`
	To     string `json:"to"`
	CallID string `json:"callId"`
	CSeq   uint32 `json:"cseq"`
	// Routes are the INVITE's Route header values, in order.
	Routes    []string `json:"routes,omitempty"`
	Transport string   `json:"transport"`
	// Destination is the host:port the INVITE went to.
	Destination string `json:"destination"`
}

// inviteState is req's state, as sent (sipgo has added its Via).
func inviteState(req *sip.Request) InviteState {
	st := InviteState{
		RequestURI:  req.Recipient.String(),
		Transport:   req.Transport(),
		Destination: req.Destination(),
	}
	if h := req.Via(); h != nil {
		st.Via = h.Value()
	}
	if h := req.From(); h != nil {
		st.From = h.Value()
	}
	if h := req.To(); h != nil {
		st.To = h.Value()
	}
	if h := req.CallID(); h != nil {
		st.CallID = h.Value()
	}
	if h := req.CSeq(); h != nil {
		st.CSeq = h.SeqNo
	}
	for _, h := range req.GetHeaders("Route") {
		st.Routes = append(st.Routes, h.Value())
	}
	return st
}

// cancel builds the CANCEL of the saved INVITE.
func (st InviteState) cancel() (*sip.Request, error) {
	return st.request(sip.CANCEL, nil)
}

// ackFinal builds the ACK of res, a final non-2xx answer to the saved
// INVITE (RFC 3261 17.1.1.3): the INVITE's Request-URI, top Via and Route
// headers, and the To of the answer, with the far end's tag.
func (st InviteState) ackFinal(res *sip.Response) (*sip.Request, error) {
	to := res.To()
	if to == nil {
		return nil, errors.New("invite state: the answer has no To")
	}
	return st.request(sip.ACK, to)
}

// request builds a request of the INVITE's transaction (CANCEL, or the ACK
// of a non-2xx answer) from the saved state; to replaces the INVITE's To.
func (st InviteState) request(method sip.RequestMethod, to *sip.ToHeader) (*sip.Request, error) {
	var uri sip.Uri
	if err := sip.ParseUri(st.RequestURI, &uri); err != nil || !token(st.RequestURI) {
		return nil, fmt.Errorf("invite state: request uri %q: not one (%v)", st.RequestURI, err)
	}
	if !token(st.CallID) || st.CSeq == 0 {
		return nil, fmt.Errorf("invite state: Call-ID %q or CSeq %d", st.CallID, st.CSeq)
	}
	if host, port, err := net.SplitHostPort(st.Destination); err != nil || host == "" || !token(host) {
		return nil, fmt.Errorf("invite state: destination %q: not host:port", st.Destination)
	} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("invite state: destination %q: bad port", st.Destination)
	}
	switch strings.ToLower(st.Transport) {
	case "udp", "tcp", "tls":
	default:
		return nil, fmt.Errorf("invite state: transport %q", st.Transport)
	}
	via, err := parseHeader[*sip.ViaHeader]("Via", st.Via)
	if err != nil {
		return nil, err
	}
	if b, _ := via.Params.Get("branch"); !strings.HasPrefix(b, sip.RFC3261BranchMagicCookie) || len(b) == len(sip.RFC3261BranchMagicCookie) {
		return nil, fmt.Errorf("invite state: Via %q has no RFC 3261 branch", st.Via)
	}
	from, err := parseHeader[*sip.FromHeader]("From", st.From)
	if err != nil {
		return nil, err
	}
	if t, _ := from.Params.Get("tag"); t == "" {
		return nil, fmt.Errorf("invite state: From %q has no tag", st.From)
	}
	if to == nil {
		if to, err = parseHeader[*sip.ToHeader]("To", st.To); err != nil {
			return nil, err
		}
	}
	req := sip.NewRequest(method, uri)
	req.AppendHeader(via)
	for _, r := range st.Routes {
		route, err := parseHeader[*sip.RouteHeader]("Route", r)
		if err != nil {
			return nil, err
		}
		req.AppendHeader(route)
	}
	maxFwd := sip.MaxForwardsHeader(70)
	callID := sip.CallIDHeader(st.CallID)
	req.AppendHeader(&maxFwd)
	req.AppendHeader(from)
	req.AppendHeader(to)
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: st.CSeq, MethodName: method})
	req.SetTransport(strings.ToUpper(st.Transport))
	req.SetDestination(st.Destination)
	req.SetBody(nil)
	// sipgo reads some values it would not write back readably: send only
	// what the far end will parse as this request.
	m, err := sip.ParseMessage([]byte(req.String()))
	if err != nil {
		return nil, fmt.Errorf("invite state: the %s would not parse: %w", method, err)
	}
	if got, ok := m.(*sip.Request); !ok || got.Method != method || len(got.GetHeaders("Via")) != 1 ||
		len(got.GetHeaders("Route")) != len(st.Routes) || got.CallID() == nil || got.CallID().Value() != st.CallID {
		return nil, fmt.Errorf("invite state: the %s would not parse as sent", method)
	}
	return req, nil
}

// token reports whether s is a non-empty word: no space or control
// character, which could end the line it goes in.
func token(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// parseHeader parses one saved header value as sipgo parses it off the
// wire, into its typed header. A value that is not exactly one such header
// (empty, several, a line break smuggled in) is refused.
func parseHeader[H sip.Header](name, value string) (H, error) {
	var zero H
	if value == "" || strings.ContainsAny(value, "\r\n\x00") {
		return zero, fmt.Errorf("invite state: %s %q is not one header value", name, value)
	}
	hs, err := sip.HeadersParser(sip.DefaultHeadersParser()).ParseHeader(nil, []byte(name+": "+value))
	if err != nil {
		return zero, fmt.Errorf("invite state: %s %q: %w", name, value, err)
	}
	if len(hs) != 1 {
		return zero, fmt.Errorf("invite state: %s %q is %d header values", name, value, len(hs))
	}
	h, ok := hs[0].(H)
	if !ok {
		return zero, fmt.Errorf("invite state: %s %q did not parse as a %s header", name, value, name)
	}
	return h, nil
}

// ErrInviteGone is the far end's 481 to a CANCEL: it no longer has the
// INVITE's transaction (it answered, or gave up, already).
var ErrInviteGone = errors.New("sipua: the far end no longer has the INVITE (481)")

// lostInviteWait is how long the answers to a canceled INVITE (its 487, or
// a 2xx that crossed the CANCEL) are known as its: 64*T1, the longest a
// UAS retransmits a final answer (RFC 3261 17.2.1).
var lostInviteWait = 64 * sip.T1

// CancelInvite cancels an INVITE still ringing from its saved state, for a
// leg whose process is gone, and waits for the CANCEL's answer: nil on 2xx,
// ErrInviteGone on 481, *Rejected on any other, ctx's error when ctx ends
// first. The INVITE's own final answer, should it reach this UA (a
// restarted server on the same address), is answered too, for 64*T1: a 487
// with ACK, a 2xx with ACK and BYE, that BYE answering a digest challenge
// with auth. An INVITE this UA already answered so (its 2xx came first)
// is not canceled. Over UDP the CANCEL is retransmitted as any non-INVITE
// request. It waits for Start.
func (u *UA) CancelInvite(ctx context.Context, st InviteState, auth *Credentials) error {
	select {
	case <-u.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	req, err := st.cancel()
	if err != nil {
		return err
	}
	// Known before the CANCEL leaves: the 487 may overtake the CANCEL's 200.
	if !u.strays.expect(st, auth, time.Now().Add(lostInviteWait)) {
		return nil // its 2xx came first, and was answered with ACK and BYE
	}
	return u.roundTrip(ctx, req, st.Transport, nil, ErrInviteGone) // a CANCEL answers no challenge (RFC 3261 22.1)
}
