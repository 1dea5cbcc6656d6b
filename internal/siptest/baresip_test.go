package siptest

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func waitFor(t *testing.T, ch <-chan struct{}, what string, p *Phone) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("baresip never reported %s:\n%s", what, p.Output())
	}
}

func TestBaresipAnswersACall(t *testing.T) {
	t.Parallel()
	phone := Baresip(t)
	uac := UAC(t, "uac_call", phone.Addr(), Options{Service: "parley", Keys: keys("hold", "500")})
	waitFor(t, phone.Answered(), "the call established", phone)
	waitFor(t, phone.Closed(), "the call closed", phone)
	mustPass(t, uac)
	ok := received(uac, "SIP/2.0 200")
	for _, want := range []string{"CSeq: 1 INVITE", "c=IN IP4 127.0.0.1", "a=rtpmap:0 PCMU/8000", "a=rtpmap:101 telephone-event/8000"} {
		if !strings.Contains(ok, want) {
			t.Errorf("baresip's 200 lacks %q:\n%s", want, ok)
		}
	}
	if strings.Contains(ok, "opus") {
		t.Errorf("baresip offered more than G.711:\n%s", ok)
	}
}

func TestBaresipReceivesDTMF(t *testing.T) {
	t.Parallel()
	requireRawSocket(t)
	phone := Baresip(t)
	uri := phone.URI("agent") // a user baresip has no account for yet
	if uri != "sip:agent@"+phone.Addr() {
		t.Fatalf("URI = %q", uri)
	}
	const digits = "159#*0A"
	hold := strconv.Itoa(int(DTMFDuration(digits).Milliseconds()) + 300)
	uac := UAC(t, "uac_dtmf", phone.Addr(), Options{Service: "agent", Keys: keys("digits", digits, "hold", hold)})
	waitFor(t, phone.Answered(), "the call established", phone)

	var got []rune
	timeout := time.After(10 * time.Second)
	for len(got) < len(digits) {
		select {
		case d := <-phone.Digits():
			got = append(got, d)
		case <-timeout:
			t.Fatalf("digits %q, want %q; baresip said:\n%s", string(got), digits, phone.Output())
		}
	}
	if string(got) != digits {
		t.Errorf("digits %q, want %q", string(got), digits)
	}
	mustPass(t, uac)
	waitFor(t, phone.Closed(), "the call closed", phone)
	select {
	case d := <-phone.Digits():
		t.Errorf("an extra digit %q", d)
	default:
	}
}

func TestBaresipRejectsUnknownUser(t *testing.T) {
	t.Parallel()
	phone := Baresip(t)
	uac := UAC(t, "uac_reject", phone.Addr(), Options{Service: "nobody", Keys: keys("code", "404")})
	mustPass(t, uac)
	if !strings.Contains(phone.Output(), "UA not found: nobody") {
		t.Errorf("baresip said:\n%s", phone.Output())
	}
}
