package sipua

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	dmedia "github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
)

// Config configures a UA.
type Config struct {
	// ListenAddr is host:port for SIP over UDP and TCP; port 0 picks one.
	ListenAddr string
	// PublicHost goes in Contact headers and SDP (default: the listen
	// host, or the first non-loopback IPv4 address for 0.0.0.0).
	PublicHost string
	// RTPPortMin and RTPPortMax bound the RTP ports (0: any free port).
	// The range is process-wide: diago keeps it in package variables.
	RTPPortMin, RTPPortMax int
	// MaxDialogs caps call legs at once; more INVITEs, in or out, get 503.
	MaxDialogs int
	// MediaTimeout ends a leg that received no RTP for this long (0: never).
	MediaTimeout time.Duration
	UserAgent    string
	Logger       *slog.Logger
	// Codecs are the audio codecs offered and accepted, in preference
	// order, from "G722", "PCMU" and "PCMA" (default DefaultCodecs: all
	// three, G722 first). Answering, the first of ours the offer lists
	// wins, whatever the offer's order.
	Codecs []string
	// TLSAddr, when set, listens for SIP over TLS there and lets calls go
	// out over TLS. TLSCert is the server certificate (nil: a self-signed
	// one is made, enough for calling out); TLSRoots verifies the servers
	// we call (nil: the system's roots).
	TLSAddr  string
	TLSCert  *tls.Certificate
	TLSRoots *x509.CertPool
	// Admission limits the requests each source address may start
	// (admission.go); the zero value admits all.
	Admission Admission
}

// Handler answers or refuses an inbound INVITE. It runs on its own
// goroutine and must return only when it is done with the call: when it
// returns, a call still up is hung up.
type Handler func(ctx context.Context, in *Incoming)

// UA is one SIP user agent: listener, client and the legs it carries.
type UA struct {
	cfg  Config
	log  *slog.Logger
	ua   *sipgo.UserAgent
	dg   *diago.Diago
	host string // public host
	addr string // bound listen address, once started

	active atomic.Int64 // dialog slots taken (see slot)
	legs   sync.Map     // dialogKey -> *Leg, for in-dialog INFO and Close

	clock  mediaClock // the legs' media clock: the wall's, or a test's
	pacers *pacers    // send the legs' frames on clock

	started chan struct{} // closed once listening
	strays  *strays       // answers to INVITEs no transaction waits for (stray.go)
	// clients send requests outside live dialogs (EndDialog), per transport.
	clientsMu sync.Mutex
	clients   map[string]*sipgo.Client

	auth    *diago.DigestAuthServer
	tls     bool // SIP over TLS is on
	tlsAddr string

	mu      sync.Mutex
	holds   []*portHold // ports New reserved, held until Start binds them
	cancel  context.CancelFunc
	serving sync.WaitGroup // inbound handlers
	closed  bool           // Close has begun: no handler may start (Add must not race Wait)

	admit    *admission  // nil: every request admitted
	draining atomic.Bool // Drain was called (drain.go)
}

// rtpRange: diago's RTP port range is global; set it once.
var rtpRange sync.Once

// New builds a UA; Start serves it.
func New(cfg Config) (*UA, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "Parley"
	}
	if cfg.MaxDialogs <= 0 {
		cfg.MaxDialogs = 1000
	}
	host, portStr, err := net.SplitHostPort(cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("sip listen address %q: %w", cfg.ListenAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("sip listen address %q: bad port", cfg.ListenAddr)
	}
	var holds []*portHold
	if port == 0 {
		// UDP and TCP must share the port: find one free for both, and
		// hold it until Start.
		var hold *portHold
		if port, hold, err = reservePort(host); err != nil {
			return nil, err
		}
		holds = append(holds, hold)
	}
	ok := false
	defer func() {
		if !ok {
			for _, h := range holds {
				h.release()
			}
		}
	}()
	public := cfg.PublicHost
	if public == "" {
		public = host
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			ip, _, err := sip.ResolveInterfacesIP("ip4", nil)
			if err != nil {
				return nil, fmt.Errorf("find an address for Contact and SDP (set the SIP public host): %w", err)
			}
			public = ip.String()
		}
	}
	if cfg.RTPPortMin > 0 && cfg.RTPPortMax > cfg.RTPPortMin {
		rtpRange.Do(func() {
			dmedia.RTPPortStart, dmedia.RTPPortEnd = cfg.RTPPortMin, cfg.RTPPortMax
		})
	}
	libLog := newLibraryLog(cfg.Logger) // sipgo's and diago's own logs
	var u *UA                           // set below, before anything is heard: Start listens
	strayAnswer := sip.WithTransactionLayerUnhandledResponseHandler(func(res *sip.Response) { u.strayAnswer(res) })
	uaOpts := append(libLog.uaOptions(strayAnswer), sipgo.WithUserAgent(cfg.UserAgent), sipgo.WithUserAgentHostname(public))
	if cfg.TLSAddr != "" {
		uaOpts = append(uaOpts, sipgo.WithUserAgenTLSConfig(&tls.Config{RootCAs: cfg.TLSRoots, MinVersion: tls.VersionTLS12}))
	}
	ua, err := sipgo.NewUA(uaOpts...)
	if err != nil {
		return nil, err
	}
	u = &UA{cfg: cfg, log: cfg.Logger, ua: ua, host: public, addr: net.JoinHostPort(host, strconv.Itoa(port)),
		clock: wallClock{}, pacers: newPacers(wallClock{}), auth: diago.NewDigestServer(), admit: newAdmission(cfg.Admission),
		started: make(chan struct{}), strays: newStrays()}
	codecs, err := mediaCodecs(cfg.Codecs)
	if err != nil {
		return nil, err
	}
	mediaIP := net.ParseIP(public)
	var opts []diago.DiagoOption
	for _, t := range []string{"udp", "tcp"} {
		opts = append(opts, diago.WithTransport(diago.Transport{
			Transport: t, BindHost: host, BindPort: port,
			ExternalHost: public, ExternalPort: port, MediaExternalIP: mediaIP,
		}))
	}
	if cfg.TLSAddr != "" {
		t, hold, err := tlsTransport(cfg, public, mediaIP)
		if err != nil {
			return nil, err
		}
		if hold != nil {
			holds = append(holds, hold)
		}
		opts = append(opts, diago.WithTransport(t))
		u.tls, u.tlsAddr = true, net.JoinHostPort(t.BindHost, strconv.Itoa(t.BindPort))
	}
	opts = append(opts,
		diago.WithLogger(libLog.Logger),
		diago.WithMediaConfig(diago.MediaConfig{Codecs: codecs}),
		diago.WithServerRequestMiddleware(u.middleware),
	)
	u.dg = diago.NewDiago(ua, opts...)
	u.holds, ok = holds, true
	return u, nil
}

// reservePort finds a port free on host for both UDP and TCP and keeps it
// bound until the hold is released: a port found free and let go at
// once can be taken by any other socket before the listener binds it
// (startup work runs between New and Start, and other processes bind
// ephemeral ports meanwhile; a restarted server once lost its port so).
func reservePort(host string) (int, *portHold, error) {
	for range 20 {
		tl, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, nil, err
		}
		p := tl.Addr().(*net.TCPAddr).Port
		ul, err := net.ListenPacket("udp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return p, &portHold{tcp: tl, udp: ul}, nil
		}
		tl.Close()
	}
	return 0, nil, errors.New("no port free for both UDP and TCP")
}

// portHold keeps a reserved port's sockets open.
type portHold struct {
	tcp net.Listener
	udp net.PacketConn
}

// release lets the port go (nil: nothing held).
func (h *portHold) release() {
	if h != nil {
		h.tcp.Close()
		h.udp.Close()
	}
}

// releaseHolds lets go of the ports New reserved, once: right before
// Start binds them, or at Close when Start never ran.
func (u *UA) releaseHolds() {
	u.mu.Lock()
	holds := u.holds
	u.holds = nil
	u.mu.Unlock()
	for _, h := range holds {
		h.release()
	}
}

// Start listens and serves inbound calls with h until Close.
func (u *UA) Start(ctx context.Context, h Handler) error {
	ctx, cancel := context.WithCancel(ctx)
	u.mu.Lock()
	u.cancel = cancel
	u.mu.Unlock()
	u.releaseHolds()
	err := u.dg.ServeBackground(ctx, func(d *diago.DialogServerSession) {
		if !u.enter() {
			_ = d.Respond(503, "Service Unavailable", nil)
			return
		}
		defer u.serving.Done()
		u.serveInvite(ctx, d, h)
	})
	if err != nil {
		cancel()
		return fmt.Errorf("sip listen on %s: %w", u.addr, err)
	}
	close(u.started)
	return nil
}

// TLS reports whether calls can go out (and come in) over TLS.
func (u *UA) TLS() bool { return u.tls }

// TLSAddr is the SIP-over-TLS listen address ("" when TLS is off).
func (u *UA) TLSAddr() string { return u.tlsAddr }

// Addr is the SIP listen address (host:port).
func (u *UA) Addr() string { return u.addr }

// PublicHost is the host in our Contact headers and SDP.
func (u *UA) PublicHost() string { return u.host }

// Active is the number of call legs up or being set up.
func (u *UA) Active() int { return int(u.active.Load()) }

// enter counts an inbound handler in, unless Close has begun.
func (u *UA) enter() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return false
	}
	u.serving.Add(1)
	return true
}

// Close hangs up every leg, stops listening and waits for handlers; an
// INVITE arriving meanwhile gets 503.
func (u *UA) Close() error {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.legs.Range(func(_, v any) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = v.(*Leg).Hangup(ctx)
		cancel()
		return true
	})
	u.mu.Lock()
	cancel := u.cancel
	u.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	u.strays.close()
	u.serving.Wait()
	u.releaseHolds()
	u.auth.Close()
	return u.ua.Close()
}

// middleware refuses new INVITEs at the dialog limit and takes SIP INFO
// keypad digits, which diago refuses.
func (u *UA) middleware(next sipgo.RequestHandler) sipgo.RequestHandler {
	return func(req *sip.Request, tx sip.ServerTransaction) {
		// diago assumes these headers (a request without From crashed it,
		// found by FuzzSIPDatagram): refuse such requests here.
		if req.From() == nil || req.To() == nil || req.CallID() == nil || req.CSeq() == nil || req.Via() == nil {
			_ = tx.Respond(sip.NewResponseFromRequest(req, 400, "Bad Request (missing From, To, Call-ID, CSeq or Via)", nil))
			return
		}
		if u.admit != nil && !u.admit.admits(req, tx) {
			return
		}
		if u.refuseWhileDraining(req, tx) {
			return
		}
		switch req.Method {
		case sip.INFO:
			u.handleInfo(req, tx)
			return
		case sip.INVITE:
			if to := req.To(); to != nil && !to.Params.Has("tag") && u.Active() >= u.cfg.MaxDialogs {
				res := sip.NewResponseFromRequest(req, 503, "Service Unavailable", nil)
				res.AppendHeader(sip.NewHeader("Retry-After", "5"))
				_ = tx.Respond(res)
				return
			}
		}
		next(req, tx)
	}
}

func (u *UA) handleInfo(req *sip.Request, tx sip.ServerTransaction) {
	l, ok := u.legFor(req)
	if !ok {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 481, "Call/Transaction Does Not Exist", nil))
		return
	}
	ct := ""
	if h := req.ContentType(); h != nil {
		ct = h.Value()
	}
	d, ok := ParseDTMFInfo(ct, req.Body())
	if !ok {
		_ = tx.Respond(sip.NewResponseFromRequest(req, 415, "Unsupported Media Type", nil))
		return
	}
	// The digit first, then the answer: a peer that waits for the 200
	// before its next INFO gets its digits in order (each INFO is handled
	// on its own goroutine, so answering first let the next overtake it).
	l.digit(d)
	_ = tx.Respond(sip.NewResponseFromRequest(req, 200, "OK", nil))
}
