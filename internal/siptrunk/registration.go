package siptrunk

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Registration limits and default.
const (
	DefaultExpiresSeconds = 3600
	MinExpiresSeconds     = 60
	MaxExpiresSeconds     = 86400
)

// contactUser is what a Contact user may be here: characters every
// registrar and Request-URI carry unescaped. "agent-" is refused as a
// prefix: that Request-URI user dials an agent.
var contactUser = regexp.MustCompile(`^[A-Za-z0-9._~+-]{1,64}$`)

var registrationTransports = []string{model.TransportUDP, model.TransportTCP, model.TransportTLS}

// RegistrationInput is the trunk's "registration" object: how it registers
// with its provider's registrar. A partial update changes the keys given.
type RegistrationInput struct {
	Registrar      opt.Field[string] `json:"registrar"`
	Transport      opt.Field[string] `json:"transport"`
	Username       opt.Field[string] `json:"username"`
	Password       opt.Field[string] `json:"password"`
	ExpiresSeconds opt.Field[int]    `json:"expiresSeconds"`
	ContactUser    opt.Field[string] `json:"contactUser"`
	Enabled        opt.Field[bool]   `json:"enabled"`
}

func (in *RegistrationInput) check(l *invalid.List) {
	for name, f := range map[string][2]bool{
		"expiresSeconds": {in.ExpiresSeconds.Set, in.ExpiresSeconds.Null},
		"enabled":        {in.Enabled.Set, in.Enabled.Null},
	} {
		if f[0] && f[1] {
			l.Add("registration."+name, "must not be null")
		}
	}
	if in.Registrar.Present() && !validRegistrar(in.Registrar.V) {
		l.Add("registration.registrar", "must be a host name or IP address with an optional :port, without scheme")
	}
	if in.Transport.Present() && !slices.Contains(registrationTransports, in.Transport.V) {
		l.Add("registration.transport", "must be one of udp, tcp, tls")
	}
	for name, f := range map[string]opt.Field[string]{"username": in.Username, "password": in.Password} {
		if f.Present() && invalid.Len(f.V) > MaxCredentialLen {
			l.Add("registration."+name, "must be at most %d characters", MaxCredentialLen)
		}
	}
	if in.ExpiresSeconds.Present() && (in.ExpiresSeconds.V < MinExpiresSeconds || in.ExpiresSeconds.V > MaxExpiresSeconds) {
		l.Add("registration.expiresSeconds", "must be between %d and %d", MinExpiresSeconds, MaxExpiresSeconds)
	}
	if in.ContactUser.Present() && !validContactUser(in.ContactUser.V) {
		l.Add("registration.contactUser", "must be 1 to 64 letters, digits or . _ ~ + - and not start with agent-")
	}
}

func validContactUser(u string) bool {
	return contactUser.MatchString(u) && !strings.HasPrefix(strings.ToLower(u), "agent-")
}

// validRegistrar accepts "host", "host:port" and "[v6]:port".
func validRegistrar(r string) bool {
	if validHost(r) {
		return true
	}
	host, port, err := net.SplitHostPort(r)
	if err != nil || !validHost(host) {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p >= 1 && p <= 65535
}

// applyRegistration sets or merges the registration settings. The contact
// user is resolved in checkRegistration, once the trunk's own username is
// known.
func (s *Service) applyRegistration(t *model.SIPTrunk, in *Input) {
	f := in.Registration
	if !f.Set {
		return
	}
	if f.Null {
		t.Registration = nil
		return
	}
	r := model.TrunkRegistration{ExpiresSeconds: DefaultExpiresSeconds, Enabled: true}
	explicitContact := false
	if t.Registration != nil {
		r = *t.Registration
		explicitContact = r.ContactUserSet
	}
	ri := f.V
	if ri.Registrar.Set {
		r.Registrar = ri.Registrar.Ptr()
	}
	if ri.Transport.Set {
		r.Transport = ri.Transport.Ptr()
	}
	if ri.Username.Set {
		r.Username = ri.Username.Ptr()
	}
	if ri.Password.Set {
		r.Password = s.Box.Seal(ri.Password.V) // null and "" both clear: the trunk's password is used
	}
	if ri.ExpiresSeconds.Present() {
		r.ExpiresSeconds = ri.ExpiresSeconds.V
	}
	if ri.Enabled.Present() {
		r.Enabled = ri.Enabled.V
	}
	if ri.ContactUser.Set {
		explicitContact = ri.ContactUser.Present()
		r.ContactUser = ri.ContactUser.V
	}
	r.ContactUserSet = explicitContact
	t.Registration = &r
}

// checkRegistration enforces the registration's rules on the trunk as it
// would be stored, and resolves a contact user left to default: the
// registration's username, else the trunk's.
func checkRegistration(t *model.SIPTrunk, l *invalid.List) {
	r := t.Registration
	if r == nil {
		return
	}
	if t.Transport == model.TransportLoopback {
		l.Add("registration", "must not be set on a loopback trunk")
		return
	}
	user := r.Username
	if user == nil {
		user = t.Username
	}
	if (user == nil || *user == "") && !l.Has("registration.username") {
		l.Add("registration.username", "is required unless the trunk has a username")
		return
	}
	if !r.ContactUserSet {
		r.ContactUser = *user
		if !validContactUser(r.ContactUser) && !l.Has("registration.contactUser") {
			l.Add("registration.contactUser", "is required: the username is not usable as a contact user (1 to 64 letters, digits or . _ ~ + -)")
		}
	}
}
