package webhook

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
)

func TestPublicAddresses(t *testing.T) {
	refused := []string{
		"10.0.0.1", "10.255.255.255",
		"172.16.0.1", "172.20.1.1", "172.31.255.255",
		"192.168.0.1", "192.168.255.254",
		"127.0.0.1", "127.1.2.3",
		"::1", "fe80::1", "fe80::1%eth0", "febf::1",
		"169.254.169.254", "169.254.0.1",
		"100.64.0.1", "100.127.255.255",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.1.1",
		"0.0.0.0", "0.1.2.3", "::",
		"fc00::1", "fd12:3456:789a::1",
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff0e::1",
		"255.255.255.255", "240.0.0.1",
		"192.0.0.8", "198.18.0.1", "192.0.2.1", "198.51.100.7", "203.0.113.9",
		"::127.0.0.1",                           // IPv4-compatible
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of 127.0.0.1, 169.254.169.254
		"64:ff9b:1::1",                    // local-use NAT64
		"2002:7f00:1::1", "2002:a00:1::1", // 6to4 of 127.0.0.1, 10.0.0.1
		"2001::1", // Teredo
		"fec0::1", "100::1", "2001:db8::1",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.0",
		"172.15.255.255", "172.32.0.0", "169.253.255.255", "11.0.0.1", "223.255.255.255",
		"2606:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8",
		"64:ff9b::808:808", // NAT64 of 8.8.8.8
		"2002:808:808::1",  // 6to4 of 8.8.8.8
	}
	for _, s := range refused {
		if public(netip.MustParseAddr(s)) {
			t.Errorf("%s: allowed, want refused", s)
		}
	}
	for _, s := range allowed {
		if !public(netip.MustParseAddr(s)) {
			t.Errorf("%s: refused, want allowed", s)
		}
	}
	if public(netip.Addr{}) {
		t.Error("the zero Addr is allowed")
	}
}

func TestRefusePrivateOnDial(t *testing.T) {
	for addr, want := range map[string]error{
		"8.8.8.8:443":           nil,
		"[2606:4700::1111]:443": nil,
		"10.0.0.1:80":           ErrPrivateAddress,
		"[fe80::1%eth0]:443":    ErrPrivateAddress,
		"[::ffff:127.0.0.1]:80": ErrPrivateAddress,
		"not an address":        ErrPrivateAddress,
		"example.com:80":        ErrPrivateAddress, // only resolved addresses reach it
	} {
		if err := refusePrivate("tcp", addr, nil); err != want {
			t.Errorf("%s: %v, want %v", addr, err, want)
		}
	}
}

func TestPrivateAddressRefused(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newSender(t, Options{}) // the operator did not allow private webhooks
	port := rc.Listener.Addr().(*net.TCPAddr).Port
	for _, u := range []string{
		rc.URL + "/hook?token=s3cret",
		strings.Replace(rc.URL, "127.0.0.1", "localhost", 1), // a name resolving to loopback
		"http://[::ffff:127.0.0.1]:" + strconv.Itoa(port),
	} {
		r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: u, Body: []byte(`{}`)})
		if r.Sent || !errors.Is(r.Err, ErrPrivateAddress) {
			t.Fatalf("%s: Sent %v, Err %v; want ErrPrivateAddress", u, r.Sent, r.Err)
		}
		// The text says what and how to allow it, and nothing more.
		if r.Err.Error() != ErrPrivateAddress.Error() {
			t.Errorf("%s: Err %q, want exactly %q", u, r.Err, ErrPrivateAddress)
		}
	}
	if !strings.Contains(ErrPrivateAddress.Error(), "private") || !strings.Contains(ErrPrivateAddress.Error(), "--allow-private-webhooks") {
		t.Errorf("ErrPrivateAddress %q does not name the problem and the flag", ErrPrivateAddress)
	}
	if status := s.PostCall(t.Context(), rc.URL, "", []byte(`{}`)); status != model.WebhookFailed {
		t.Errorf("PostCall: %q, want failed", status)
	}
	if vars, status := s.PreCall(t.Context(), rc.URL, "", PreCallPayload{AgentID: "a"}); status != model.WebhookFailed || vars != nil {
		t.Errorf("PreCall: %v, %q, want failed", vars, status)
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestRedirectToPrivateNotFollowed(t *testing.T) {
	inside := newReceiver(t, nil)
	outside := newReceiver(t, func(_ *receiver, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL, http.StatusTemporaryRedirect)
	})
	s := loopbackSender(t)
	if r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: outside.URL}); r.Sent || r.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("Sent %v, StatusCode %d", r.Sent, r.StatusCode)
	}
	outside.only(t)
	if n := len(inside.got()); n != 0 {
		t.Errorf("redirect target got %d requests, want 0", n)
	}
}

func TestProxyIgnored(t *testing.T) {
	// Go's environment proxy skips loopback hosts, so no loopback receiver
	// can show a proxy in use: check the transport has none.
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	if s := newSender(t, Options{}); s.transport.Proxy != nil {
		t.Fatal("the transport uses a proxy, which would connect past the address check")
	}
}
