package sipua

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// DialogState is what it takes to end an answered leg's dialog from another
// process, once the one that answered it is gone (RFC 3261 12.2.1.1): the
// dialog's identity, where requests in it go and how, and the next CSeq.
type DialogState struct {
	CallID    string `json:"callId"`
	LocalTag  string `json:"localTag"`
	RemoteTag string `json:"remoteTag"`
	// LocalURI and RemoteURI are the From and To URIs of our requests.
	LocalURI  string `json:"localUri"`
	RemoteURI string `json:"remoteUri"`
	// RemoteTarget is the far end's Contact: the Request-URI.
	RemoteTarget string `json:"remoteTarget"`
	// RouteSet are the Route header values, in the order they are sent:
	// the Record-Route of the INVITE as received by the callee, reversed
	// for the caller.
	RouteSet     []string `json:"routeSet,omitempty"`
	NextCSeq     uint32   `json:"nextCSeq"`
	Transport    string   `json:"transport"`
	LocalContact string   `json:"localContact,omitempty"`
	// Destination is the host:port the requests go to: the first route,
	// or the remote target.
	Destination string `json:"destination"`
}

// cseqGap is added to the saved CSeq of a BYE sent from saved state: the
// leg may have sent requests since it was saved (a REFER). A gap is no
// error to the far end (RFC 3261 12.2.2), a CSeq lower than one it saw is.
const cseqGap = 16

// Dialog is the leg's dialog state, for ending it from another process.
func (l *Leg) Dialog() DialogState { return dialogState(l.dialog) }

func dialogState(d diago.DialogSession) DialogState {
	s := d.DialogSIP()
	inv, res := s.InviteRequest, s.InviteResponse
	k := legKey(d)
	st := DialogState{
		CallID: k.callID, LocalTag: k.local, RemoteTag: k.remote,
		NextCSeq:  inv.CSeq().SeqNo + 1,
		Transport: inv.Transport(),
	}
	var records []sip.Header
	if _, caller := d.(*diago.DialogClientSession); caller {
		st.LocalURI, st.RemoteURI = inv.From().Address.String(), inv.To().Address.String()
		if c := res.Contact(); c != nil {
			st.RemoteTarget = c.Address.String()
		}
		if c := inv.Contact(); c != nil {
			st.LocalContact = c.Address.String()
		}
		records = slices.Clone(res.GetHeaders("Record-Route"))
		slices.Reverse(records)
	} else {
		st.LocalURI, st.RemoteURI = inv.To().Address.String(), inv.From().Address.String()
		if c := inv.Contact(); c != nil {
			st.RemoteTarget = c.Address.String()
		}
		if c := res.Contact(); c != nil {
			st.LocalContact = c.Address.String()
		}
		records = inv.GetHeaders("Record-Route")
	}
	for _, h := range records {
		st.RouteSet = append(st.RouteSet, h.Value())
	}
	if bye, err := st.bye(); err == nil {
		st.Destination = bye.Destination()
	}
	return st
}

// bye builds the in-dialog BYE; the client adds the Via.
func (st DialogState) bye() (*sip.Request, error) { return st.request(sip.BYE, st.NextCSeq) }

// ack builds the ACK of the 2xx that established the dialog: the INVITE's
// CSeq number, the one before NextCSeq (RFC 3261 13.2.2.4).
func (st DialogState) ack() (*sip.Request, error) { return st.request(sip.ACK, st.NextCSeq-1) }

// request builds an in-dialog request; the client adds the Via.
func (st DialogState) request(method sip.RequestMethod, seq uint32) (*sip.Request, error) {
	var target, local, remote sip.Uri
	for _, u := range []struct {
		s   string
		dst *sip.Uri
	}{{st.RemoteTarget, &target}, {st.LocalURI, &local}, {st.RemoteURI, &remote}} {
		if err := sip.ParseUri(u.s, u.dst); err != nil {
			return nil, fmt.Errorf("dialog state: uri %q: %w", u.s, err)
		}
	}
	req := sip.NewRequest(method, target)
	from := &sip.FromHeader{Address: local, Params: sip.NewParams()}
	from.Params.Add("tag", st.LocalTag)
	to := &sip.ToHeader{Address: remote, Params: sip.NewParams()}
	if st.RemoteTag != "" {
		to.Params.Add("tag", st.RemoteTag)
	}
	callID := sip.CallIDHeader(st.CallID)
	maxFwd := sip.MaxForwardsHeader(70)
	req.AppendHeader(from)
	req.AppendHeader(to)
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: seq, MethodName: method})
	req.AppendHeader(&maxFwd)
	for _, r := range st.RouteSet {
		req.AppendHeader(sip.NewHeader("Route", r))
	}
	if st.LocalContact != "" {
		var c sip.Uri
		if err := sip.ParseUri(st.LocalContact, &c); err == nil {
			req.AppendHeader(&sip.ContactHeader{Address: c})
		}
	}
	if st.Transport != "" {
		req.SetTransport(strings.ToUpper(st.Transport))
	}
	if st.Destination != "" {
		req.SetDestination(st.Destination)
	}
	req.SetBody(nil)
	return req, nil
}

// Credentials answer a digest challenge to a BYE (the trunk's).
type Credentials struct{ Username, Password string }

// ErrDialogGone is the far end's 481: it no longer knows the dialog.
var ErrDialogGone = errors.New("sipua: the far end no longer knows the dialog (481)")

// EndDialog sends BYE on a dialog from its saved state, for a leg whose
// process is gone, and waits for the final answer: nil on 2xx,
// ErrDialogGone on 481, *Rejected on any other, ctx's error when ctx ends
// first. Over UDP the BYE is retransmitted as any non-INVITE request
// (timer E) until an answer, timer F (32 s) or ctx. It waits for Start.
func (u *UA) EndDialog(ctx context.Context, st DialogState, auth *Credentials) error {
	select {
	case <-u.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	st.NextCSeq += cseqGap
	return u.sendBye(ctx, st, auth)
}

// sendBye sends the BYE of st and waits for its final answer, as EndDialog
// says.
func (u *UA) sendBye(ctx context.Context, st DialogState, auth *Credentials) error {
	req, err := st.bye()
	if err != nil {
		return err
	}
	return u.roundTrip(ctx, req, st.Transport, auth, ErrDialogGone)
}

// roundTrip sends req, a request outside any live dialog, over transport
// and waits for its final answer: nil on 2xx, gone on 481, *Rejected on any
// other, ctx's error when ctx ends first. A digest challenge is answered
// with auth, when given.
func (u *UA) roundTrip(ctx context.Context, req *sip.Request, transport string, auth *Credentials, gone error) error {
	c, err := u.client(transport)
	if err != nil {
		return err
	}
	res, err := c.Do(ctx, req)
	// Right after Start sipgo may try to bind the listener's UDP port
	// instead of reusing its socket (see Dial): nothing was sent.
	for i := 0; err != nil && i < 5 && strings.Contains(err.Error(), "address already in use"); i++ {
		time.Sleep(20 * time.Millisecond)
		res, err = c.Do(ctx, req)
	}
	if err == nil && (res.StatusCode == 401 || res.StatusCode == 407) && auth != nil && auth.Username != "" {
		res, err = c.DoDigestAuth(ctx, req, res, sipgo.DigestAuth{Username: auth.Username, Password: auth.Password})
	}
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s: %w", strings.ToLower(req.Method.String()), err)
	case res.IsSuccess():
		return nil
	case res.StatusCode == 481:
		return gone
	}
	return &Rejected{Code: res.StatusCode, Reason: res.Reason}
}

// client is the sipgo client for requests outside any live dialog over
// transport, made once: UDP ones leave from the listening port, as
// diago's do, when it is bound to one address.
func (u *UA) client(transport string) (*sipgo.Client, error) {
	t := strings.ToLower(transport)
	if t == "" {
		t = "udp"
	}
	u.clientsMu.Lock()
	defer u.clientsMu.Unlock()
	if c := u.clients[t]; c != nil {
		return c, nil
	}
	opts := []sipgo.ClientOption{sipgo.WithClientNAT(), sipgo.WithClientHostname(u.host), sipgo.WithClientLogger(u.log)}
	if t == "udp" {
		if host, _, err := net.SplitHostPort(u.addr); err == nil {
			if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
				opts = append(opts, sipgo.WithClientConnectionAddr(u.addr))
			}
		}
	}
	c, err := sipgo.NewClient(u.ua, opts...)
	if err != nil {
		return nil, err
	}
	if u.clients == nil {
		u.clients = map[string]*sipgo.Client{}
	}
	u.clients[t] = c
	return c, nil
}
