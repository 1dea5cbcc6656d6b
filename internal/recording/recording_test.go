package recording

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/media/audio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSignedLinks(t *testing.T) {
	s := &Store{Dir: t.TempDir(), PublicURL: "https://parley.example.com/", Key: []byte("k")}
	now := time.Unix(1_800_000_000, 0)
	link := s.URL("call-1", now)
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, "https://parley.example.com/v1/calls/call-1/recording?") {
		t.Fatalf("link %q", link)
	}
	exp, sig := u.Query().Get("expires"), u.Query().Get("signature")
	for _, tc := range []struct {
		name           string
		call, exp, sig string
		at             time.Time
		want           bool
	}{
		{"fresh", "call-1", exp, sig, now, true},
		{"last second", "call-1", exp, sig, now.Add(LinkTTL), true},
		{"expired", "call-1", exp, sig, now.Add(LinkTTL + time.Second), false},
		{"other call", "call-2", exp, sig, now, false},
		{"later expiry", "call-1", "9999999999", sig, now, false},
		{"bad signature", "call-1", exp, "00" + sig[2:], now, false},
		{"no expiry", "call-1", "", sig, now, false},
	} {
		if got := s.Verify(tc.call, tc.exp, tc.sig, tc.at); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	other := &Store{Key: []byte("other")}
	if other.Verify("call-1", exp, sig, now) {
		t.Error("another key's signature verified")
	}
}

// A recording keeps its call's rate: 8 kHz for G.711, 16 kHz for G.722.
func TestWriterMakesAStereoWAV(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		t.Run(strconv.Itoa(rate), func(t *testing.T) { testStereoWAV(t, rate) })
	}
}

func testStereoWAV(t *testing.T, rate int) {
	s := &Store{Dir: t.TempDir(), Key: []byte("k")}
	w, err := s.Create("org-1", "call-1", rate)
	if err != nil {
		t.Fatal(err)
	}
	caller, agent := audio.Tone(1000, rate, 20*time.Millisecond, 0.5), audio.Silence(rate, 20*time.Millisecond)
	for range 50 {
		w.Write(caller, agent)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Write(caller, agent) // after Close: ignored
	f, err := s.Open(context.Background(), "org-1", "call-1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wav, err := audio.ReadWAV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(wav.Channels) != 2 || wav.Rate != rate || wav.Duration() != time.Second {
		t.Fatalf("%d channels, %d Hz, %v", len(wav.Channels), wav.Rate, wav.Duration())
	}
	if !audio.DetectTone(wav.Channels[0][:rate/10], rate, 1000) || audio.RMS(wav.Channels[1]) != 0 {
		t.Error("channels swapped or garbled")
	}
	if _, err := s.Open(context.Background(), "org-1", "call-2"); !errors.Is(err, os.ErrNotExist) {
		t.Error("found a recording that does not exist")
	}
}
