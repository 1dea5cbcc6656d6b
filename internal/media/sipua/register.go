package sipua

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// RegistrationConfig is one binding to keep at a registrar: the address of
// record User@<registrar host> bound to our Contact ContactUser@<public
// host>:<SIP port>, so INVITEs to the address of record reach us with
// ContactUser as the Request-URI user.
type RegistrationConfig struct {
	Registrar   string // host, host:port or [v6]:port
	Transport   string // udp (default), tcp or tls
	User        string // address-of-record user and digest user
	Password    string
	ContactUser string
	Expires     time.Duration // asked for; the registrar's answer decides
}

// Registration sends one binding's REGISTERs: one Call-ID and a rising
// CSeq for its whole life, as RFC 3261 10.2 asks. Its methods may be called
// from one goroutine at a time each; they serialise themselves.
type Registration struct {
	ua     *UA
	cfg    RegistrationConfig
	host   string
	port   int
	callID string
	tag    string

	mu   sync.Mutex
	cseq uint32
}

// NewRegistration prepares a binding; nothing is sent yet.
func (u *UA) NewRegistration(cfg RegistrationConfig) (*Registration, error) {
	t := strings.ToLower(cfg.Transport)
	if t == "" {
		t = "udp"
	}
	switch {
	case t == "tls" && !u.tls:
		return nil, errors.New("SIP over TLS is off on this server (set --sip-tls-addr)")
	case t != "udp" && t != "tcp" && t != "tls":
		return nil, fmt.Errorf("transport %q is not supported (udp, tcp, tls)", cfg.Transport)
	}
	cfg.Transport = t
	host, port := cfg.Registrar, 5060
	if t == "tls" {
		port = 5061
	}
	if h, p, err := net.SplitHostPort(cfg.Registrar); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("registrar %q: bad port", cfg.Registrar)
		}
		host, port = h, n
	}
	if host == "" {
		return nil, errors.New("registrar: no host")
	}
	return &Registration{ua: u, cfg: cfg, host: host, port: port,
		callID: sip.GenerateBranchN(24), tag: sip.GenerateTagN(16)}, nil
}

// Register sends REGISTER (answering a digest challenge) and returns the
// expiry the registrar granted our Contact. Errors: *Rejected for a final
// non-2xx answer, ctx's error, or transport trouble. It waits for Start.
func (r *Registration) Register(ctx context.Context) (time.Duration, error) {
	res, err := r.send(ctx, r.cfg.Expires)
	if err != nil {
		return 0, err
	}
	return r.granted(res), nil
}

// Unregister removes our Contact (Expires: 0), leaving other bindings of
// the address of record (another server's) alone.
func (r *Registration) Unregister(ctx context.Context) error {
	_, err := r.send(ctx, 0)
	return err
}

func (r *Registration) send(ctx context.Context, expires time.Duration) (*sip.Response, error) {
	u := r.ua
	select {
	case <-u.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := u.client(r.cfg.Transport)
	if err != nil {
		return nil, err
	}
	r.cseq++
	req := r.request(expires)
	res, err := c.Do(ctx, req)
	// Right after Start sipgo may try to bind the listener's UDP port
	// instead of reusing its socket (see Dial): nothing was sent.
	for i := 0; err != nil && i < 5 && strings.Contains(err.Error(), "address already in use"); i++ {
		time.Sleep(20 * time.Millisecond)
		res, err = c.Do(ctx, req)
	}
	if err == nil && (res.StatusCode == 401 || res.StatusCode == 407) && r.cfg.User != "" {
		res, err = c.DoDigestAuth(ctx, req, res, sipgo.DigestAuth{Username: r.cfg.User, Password: r.cfg.Password})
		r.cseq = req.CSeq().SeqNo // the challenge's answer took the next one
	}
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("register at %s: %w", r.cfg.Registrar, err)
	case !res.IsSuccess():
		return nil, &Rejected{Code: res.StatusCode, Reason: res.Reason}
	}
	return res, nil
}

// request builds a REGISTER; the client adds the Via.
func (r *Registration) request(expires time.Duration) *sip.Request {
	u := r.ua
	recipient := sip.Uri{Scheme: "sip", Host: r.host, Port: r.port}
	aor := sip.Uri{Scheme: "sip", User: r.cfg.User, Host: r.host}
	req := sip.NewRequest(sip.REGISTER, recipient)
	from := &sip.FromHeader{Address: aor, Params: sip.NewParams()}
	from.Params.Add("tag", r.tag)
	callID := sip.CallIDHeader(r.callID)
	maxFwd := sip.MaxForwardsHeader(70)
	exp := sip.ExpiresHeader(uint32(expires / time.Second))
	req.AppendHeader(from)
	req.AppendHeader(&sip.ToHeader{Address: aor, Params: sip.NewParams()})
	req.AppendHeader(&callID)
	req.AppendHeader(&sip.CSeqHeader{SeqNo: r.cseq, MethodName: sip.REGISTER})
	req.AppendHeader(&maxFwd)
	req.AppendHeader(&sip.ContactHeader{Address: r.contact()})
	req.AppendHeader(&exp)
	req.AppendHeader(sip.NewHeader("User-Agent", u.cfg.UserAgent))
	req.SetTransport(strings.ToUpper(r.cfg.Transport))
	req.SetDestination(net.JoinHostPort(r.host, strconv.Itoa(r.port)))
	return req
}

// contact is our Contact URI: the public host and the port of the
// transport the registrar is reached over.
func (r *Registration) contact() sip.Uri {
	u := r.ua
	addr := u.addr
	if r.cfg.Transport == "tls" {
		addr = u.tlsAddr
	}
	port := 5060
	if _, p, err := net.SplitHostPort(addr); err == nil {
		port, _ = strconv.Atoi(p)
	}
	c := sip.Uri{Scheme: "sip", User: r.cfg.ContactUser, Host: u.host, Port: port}
	if r.cfg.Transport != "udp" {
		c.UriParams = sip.NewParams()
		c.UriParams.Add("transport", r.cfg.Transport)
	}
	return c
}

var contactExpires = regexp.MustCompile(`(?i);\s*expires\s*=\s*(\d+)`)

// granted is the expiry the registrar gave our Contact.
func (r *Registration) granted(res *sip.Response) time.Duration {
	var contacts []string
	for _, h := range res.GetHeaders("Contact") {
		contacts = append(contacts, h.Value())
	}
	expires := ""
	if h := res.GetHeader("Expires"); h != nil {
		expires = h.Value()
	}
	return grantedExpiry(contacts, expires, "sip:"+r.cfg.ContactUser+"@"+r.ua.host, r.cfg.Expires)
}

// maxGranted bounds what a registrar may grant (a year): longer is taken
// as a year, so a refresh is never scheduled beyond any timer's range.
const maxGranted = 365 * 24 * time.Hour

// grantedExpiry reads a 2xx to REGISTER (untrusted bytes): the expires
// parameter of our contact (ours, "sip:user@host") among the Contact
// header values, each of which may list several contacts; else the
// Expires header; else asked.
func grantedExpiry(contacts []string, expires, ours string, asked time.Duration) time.Duration {
	ours = strings.ToLower(ours)
	for _, v := range contacts {
		for _, c := range strings.Split(v, ",") {
			if !strings.Contains(strings.ToLower(c), ours) {
				continue
			}
			if m := contactExpires.FindStringSubmatch(c); m != nil {
				return seconds(m[1])
			}
		}
	}
	if e := strings.TrimSpace(expires); e != "" {
		if _, err := strconv.ParseUint(e, 10, 64); err == nil {
			return seconds(e)
		}
	}
	return asked
}

func seconds(digits string) time.Duration {
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > uint64(maxGranted/time.Second) {
		return maxGranted
	}
	return time.Duration(n) * time.Second
}
