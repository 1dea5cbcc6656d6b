package elevenlabs

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/elevenlabs/elevenlabstest"
)

func TestErrorMapping(t *testing.T) {
	const quota = "This request exceeds your quota of 10000. You have 0 credits remaining, while 12 credits are required for this request."
	for _, c := range []struct {
		name   string
		opts   elevenlabstest.Options
		voice  string
		key    string // "" = the fake's key
		want   error
		says   string // in the error text
		audio  bool   // some audio reached out first
		noDial bool
	}{
		{name: "wrong key closes 1008", key: "xi-wrong-key-0001", want: tts.ErrUnavailable, says: "API key rejected: closed 1008: Invalid API key"},
		{name: "wrong key refused handshake", key: "xi-wrong-key-0001", opts: elevenlabstest.Options{RejectKey: true},
			want: tts.ErrUnavailable, says: "API key rejected: handshake answered 401 Unauthorized: invalid_api_key: Invalid API key"},
		{name: "key error message", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			Message: "Invalid API key", Error: "invalid_api_key"}}},
			want: tts.ErrUnavailable, says: "API key rejected: invalid_api_key: Invalid API key"},
		{name: "unknown voice", voice: "NoSuchVoice000000000", want: tts.ErrUnknownVoice,
			says: "voice_not_found: A voice for the voice_id NoSuchVoice000000000 was not found."},
		{name: "unknown voice by close frame only", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			CloseReason: "A voice with voice_id abc does not exist."}}},
			want: tts.ErrUnknownVoice, says: "closed 1008: A voice with voice_id abc does not exist."},
		{name: "no voice id", voice: "../../v1/user", want: tts.ErrUnknownVoice, noDial: true},
		{name: "quota", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			After: 2, Message: quota, Error: "quota_exceeded"}}},
			want: tts.ErrUnavailable, says: "quota_exceeded: " + quota, audio: true},
		{name: "rate limited handshake", opts: elevenlabstest.Options{HandshakeStatus: http.StatusTooManyRequests},
			want: tts.ErrUnavailable, says: "handshake answered 429 Too Many Requests: too_many_concurrent_requests"},
		{name: "5xx handshake", opts: elevenlabstest.Options{HandshakeStatus: http.StatusServiceUnavailable},
			want: tts.ErrUnavailable, says: "handshake answered 503 Service Unavailable"},
		{name: "policy close mid-stream", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			After: 1, CloseReason: "We are sorry, something went wrong. You are not charged for this request."}}},
			want: tts.ErrUnavailable, says: "closed 1008: We are sorry, something went wrong.", audio: true},
		{name: "normal close before the end", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			After: 1, CloseCode: 1000}}},
			want: tts.ErrUnavailable, says: "closed the socket before the end (1000)", audio: true},
		{name: "connection dropped", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			After: 1, Drop: true}}},
			want: tts.ErrUnavailable, says: "the connection broke", audio: true},
		{name: "error message, then 1011", opts: elevenlabstest.Options{Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
			Message: "Unsupported model", Error: "invalid_model", CloseCode: 1011}}},
			want: tts.ErrUnavailable, says: "invalid_model: Unsupported model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, srv := setup(t, c.opts, func(cfg *Config) {
				if c.key != "" {
					cfg.APIKey = c.key
				}
			})
			res := synth(t, s, tts.Request{Text: "Hello there, how are you?", Voice: c.voice}, 16000)
			if !errors.Is(res.err, c.want) {
				t.Fatalf("error %v, want %v", res.err, c.want)
			}
			for _, other := range []error{tts.ErrUnavailable, tts.ErrUnknownVoice, tts.ErrTextTooLong} {
				if other != c.want && errors.Is(res.err, other) {
					t.Errorf("error %v is also %v", res.err, other)
				}
			}
			if !strings.Contains(res.err.Error(), c.says) {
				t.Errorf("error %q does not say %q", res.err, c.says)
			}
			if key := s.key; strings.Contains(res.err.Error(), key) {
				t.Errorf("error %q shows the API key", res.err)
			}
			if got := res.calls > 0; got != c.audio || res.stats.Audio != dur(len(res.pcm), 16000) {
				t.Errorf("%d out calls, Stats %+v; want audio %v", res.calls, res.stats, c.audio)
			}
			if n := len(srv.Sessions()); c.noDial && n != 0 {
				t.Errorf("%d sessions; want no connection", n)
			}
		})
	}
}

func TestKeyIsNeverShown(t *testing.T) {
	const key = "sk_secret_0123456789"
	s, _ := setup(t, elevenlabstest.Options{APIKey: key, Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
		Message: "Invalid API key " + key + " for this workspace", Error: "invalid_api_key"}}},
		func(c *Config) { c.APIKey = key })
	res := synth(t, s, tts.Request{Text: "Hi."}, 8000)
	if !errors.Is(res.err, tts.ErrUnavailable) || strings.Contains(res.err.Error(), key) || !strings.Contains(res.err.Error(), "Invalid API key [redacted] for this workspace") {
		t.Errorf("error %q: want ErrUnavailable with the key redacted", res.err)
	}
	// A key too short to cut out of the text ("xi" is in "Invalid"): the
	// server's words are not shown, its error kind names the failure.
	const short = "xi"
	s, _ = setup(t, elevenlabstest.Options{APIKey: short, Reply: elevenlabstest.Reply{Fail: &elevenlabstest.Failure{
		Message: "Invalid API key " + short + " for this workspace", Error: "invalid_api_key"}}},
		func(c *Config) { c.APIKey = short })
	res = synth(t, s, tts.Request{Text: "Hi."}, 8000)
	if !errors.Is(res.err, tts.ErrUnavailable) || res.err.Error() != "tts: engine unavailable: elevenlabs: API key rejected: invalid_api_key" {
		t.Errorf("short key: error %q", res.err)
	}
}

func TestTextTooLong(t *testing.T) {
	// A short answer whatever the text: 5000 characters of speech is minutes.
	short := func(rate int, _ string) []int16 { return make([]int16, rate/10) }
	s, srv := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Audio: short}})
	res := synth(t, s, tts.Request{Text: strings.Repeat("é", MaxText+1)}, 8000)
	if !errors.Is(res.err, tts.ErrTextTooLong) || res.stats != (tts.Stats{}) {
		t.Errorf("%v, %+v: want ErrTextTooLong and no stats", res.err, res.stats)
	}
	if n := len(srv.Sessions()); n != 0 {
		t.Errorf("%d sessions: want no connection", n)
	}
	// The limit counts runes of cleaned text: MaxText runes plus space pass.
	res = synth(t, s, tts.Request{Text: " " + strings.Repeat("é", MaxText) + "\n"}, 8000)
	if res.err != nil || res.stats.Characters != MaxText {
		t.Errorf("%d characters: %v, %+v", MaxText, res.err, res.stats)
	}
}

func TestTimeouts(t *testing.T) {
	short := func(c *Config) { c.FirstAudioTimeout, c.StallTimeout = 250*time.Millisecond, 250*time.Millisecond }
	for _, c := range []struct {
		name  string
		reply elevenlabstest.Reply
		says  string
		audio bool
	}{
		{name: "late first audio", reply: elevenlabstest.Reply{FirstDelay: 3 * time.Second}, says: "no audio within 250ms"},
		{name: "hang before audio", reply: elevenlabstest.Reply{Hang: true}, says: "no audio within 250ms"},
		{name: "stall", reply: elevenlabstest.Reply{Gap: 3 * time.Second}, says: "no message for 250ms", audio: true},
		{name: "hang mid-stream", reply: elevenlabstest.Reply{Hang: true, HangAfter: 2}, says: "no message for 250ms", audio: true},
		{name: "hang before isFinal", reply: elevenlabstest.Reply{Hang: true, HangAfter: 1000}, says: "no message for 250ms", audio: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := setup(t, elevenlabstest.Options{Reply: c.reply}, short)
			res := synth(t, s, tts.Request{Text: "Hello there."}, 16000)
			if !errors.Is(res.err, tts.ErrUnavailable) || !strings.Contains(res.err.Error(), c.says) {
				t.Fatalf("error %v: want ErrUnavailable saying %q", res.err, c.says)
			}
			if (res.calls > 0) != c.audio {
				t.Errorf("%d out calls, want audio %v", res.calls, c.audio)
			}
			if res.took > 2*time.Second {
				t.Errorf("took %s", res.took)
			}
		})
	}
}

// TestSteadyStreamOutlastsFirstAudioTimeout: once audio flows, only the
// gaps count, not how long the whole utterance takes.
func TestSteadyStreamOutlastsFirstAudioTimeout(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Gap: 60 * time.Millisecond}},
		func(c *Config) { c.FirstAudioTimeout, c.StallTimeout = 150*time.Millisecond, 300*time.Millisecond })
	res := synth(t, s, tts.Request{Text: "Hello there."}, 16000) // 7 messages, 360 ms of gaps
	if res.err != nil || res.stats.Audio != 650*time.Millisecond || !onlySession(t, srv).Final {
		t.Errorf("%v, %+v: want all 650 ms", res.err, res.stats)
	}
}

// TestFirstAudioMayTakeLongerThanAStall: the wait for the first audio has
// its own, longer, timeout.
func TestFirstAudioMayTakeLongerThanAStall(t *testing.T) {
	s, _ := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{FirstDelay: 300 * time.Millisecond}},
		func(c *Config) { c.FirstAudioTimeout, c.StallTimeout = time.Second, 150*time.Millisecond })
	if res := synth(t, s, tts.Request{Text: "Hi."}, 16000); res.err != nil || res.calls == 0 {
		t.Errorf("%v after %d calls", res.err, res.calls)
	}
}

// TestStallDoesNotCountOut: the stall clock runs while waiting for the
// server, not while out works.
func TestStallDoesNotCountOut(t *testing.T) {
	s, _ := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Chunk: 250 * time.Millisecond}},
		func(c *Config) { c.StallTimeout = 100 * time.Millisecond })
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	// out taking longer than StallTimeout is the caller's time, not a stall.
	_, err := s.Synthesize(ctx, tts.Request{Text: "Hello there."}, 16000, func([]int16) error {
		time.Sleep(150 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDialTimeout(t *testing.T) {
	// A listener that never accepts: TCP connects, the handshake never ends.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New(Config{BaseURL: "ws://" + ln.Addr().String(), DialTimeout: 200 * time.Millisecond, Logger: quiet()})
	res := synth(t, s, tts.Request{Text: "Hi."}, 8000)
	if !errors.Is(res.err, tts.ErrUnavailable) || !strings.Contains(res.err.Error(), "no handshake within 200ms") || res.took > 2*time.Second {
		t.Errorf("%v after %s: want ErrUnavailable, no handshake within 200ms", res.err, res.took)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for base, says := range map[string]string{
		"http://" + addr:        "cannot connect",
		"ftp://" + addr:         "scheme must be",
		"ws://" + addr + "?x=1": "scheme://host[/path] only",
	} {
		s := New(Config{BaseURL: base, Logger: quiet()})
		res := synth(t, s, tts.Request{Text: "Hi."}, 8000)
		if !errors.Is(res.err, tts.ErrUnavailable) || !strings.Contains(res.err.Error(), says) {
			t.Errorf("BaseURL %s: %v, want ErrUnavailable saying %q", base, res.err, says)
		}
	}
}

func TestCancel(t *testing.T) {
	s, srv := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Gap: 5 * time.Second}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls int
	start := time.Now()
	st, err := s.Synthesize(ctx, tts.Request{Text: "Hello there."}, 16000, func([]int16) error {
		calls++
		time.AfterFunc(50*time.Millisecond, cancel) // while it waits for the next message
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 || st.Audio != 100*time.Millisecond {
		t.Errorf("%v, %d calls, %+v: want context.Canceled after one message", err, calls, st)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("returned %s after the cancel", took)
	}
	if ss := onlySession(t, srv); ss.Final {
		t.Error("the server finished")
	}

	// Canceled before it starts: no connection.
	if _, err := s.Synthesize(ctx, tts.Request{Text: "Hi."}, 16000, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled ctx: %v", err)
	}
	if n := len(srv.Sessions()); n != 1 {
		t.Errorf("%d sessions, want no new one", n)
	}
}

// TestCancelDropsWhatIsBuffered: after a cancel, messages already received
// do not reach out.
func TestCancelDropsWhatIsBuffered(t *testing.T) {
	s, _ := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Chunk: 20 * time.Millisecond}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls int
	_, err := s.Synthesize(ctx, tts.Request{Text: "Hello there."}, 16000, func([]int16) error {
		calls++
		cancel()
		time.Sleep(20 * time.Millisecond) // let more messages arrive
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("%v after %d calls: want context.Canceled after 1", err, calls)
	}
}

func TestOutErrorStops(t *testing.T) {
	s, _ := setup(t, elevenlabstest.Options{Reply: elevenlabstest.Reply{Gap: 20 * time.Millisecond}})
	stop := errors.New("caller hung up")
	var calls int
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	st, err := s.Synthesize(ctx, tts.Request{Text: "Hello there."}, 8000, func([]int16) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("%v after %d calls: want out's error as it is, after 2", err, calls)
	}
	if st.Audio != 200*time.Millisecond || st.Characters != len("Hello there.") {
		t.Errorf("Stats %+v: want the 200 ms out got, all characters", st)
	}
}
