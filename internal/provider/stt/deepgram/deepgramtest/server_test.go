package deepgramtest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
)

const listenQuery = "/v1/listen?model=nova-3&language=en&encoding=linear16&sample_rate=16000&channels=1"

// dial opens a stream on s with key, failing the test on error; the
// connection is dropped when the test ends.
func dial(t *testing.T, s *Server, query, key string) *websocket.Conn {
	t.Helper()
	c, resp, err := tryDial(t, s, query, key)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	return c
}

func tryDial(t *testing.T, s *Server, query, key string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Token "+key)
	}
	c, resp, err := websocket.Dial(ctx(t), s.URL+query, &websocket.DialOptions{
		HTTPClient: &http.Client{Transport: tr},
		HTTPHeader: h,
	})
	if c != nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, resp, err
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func pcmBytes(samples ...int16) []byte {
	var b []byte
	for _, s := range samples {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// received is one decoded server message.
type received struct {
	Type         string  `json:"type"`
	IsFinal      bool    `json:"is_final"`
	SpeechFinal  bool    `json:"speech_final"`
	FromFinalize bool    `json:"from_finalize"`
	Start        float64 `json:"start"`
	Duration     float64 `json:"duration"`
	Channel      struct {
		Alternatives []struct {
			Transcript string `json:"transcript"`
			Words      []struct {
				Word           string `json:"word"`
				PunctuatedWord string `json:"punctuated_word"`
			} `json:"words"`
		} `json:"alternatives"`
	} `json:"channel"`
	Metadata struct {
		RequestID string `json:"request_id"`
	} `json:"metadata"`
	RequestID string `json:"request_id"`
	SHA256    string `json:"sha256"`
	Channels  int    `json:"channels"`
}

func (r received) transcript() string {
	if len(r.Channel.Alternatives) == 0 {
		return "<none>"
	}
	return r.Channel.Alternatives[0].Transcript
}

// readAll reads messages until the server closes, returning them and the
// close error.
func readAll(t *testing.T, c *websocket.Conn) ([]received, error) {
	t.Helper()
	var out []received
	for {
		typ, data, err := c.Read(ctx(t))
		if err != nil {
			return out, err
		}
		if typ != websocket.MessageText {
			t.Fatalf("binary message from the server")
		}
		var r received
		if json.Unmarshal(data, &r) != nil {
			// SpeechStarted and UtteranceEnd have "channel": [0].
			r = received{}
			if err := json.Unmarshal(data, &struct {
				Type *string `json:"type"`
			}{&r.Type}); err != nil {
				t.Fatalf("message %s: %v", data, err)
			}
		}
		out = append(out, r)
	}
}

func write(t *testing.T, c *websocket.Conn, typ websocket.MessageType, data string) {
	t.Helper()
	if err := c.Write(ctx(t), typ, []byte(data)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func TestStreamWire(t *testing.T) {
	var seen StreamInfo
	s := New(t, Options{Transcript: func(in StreamInfo) string {
		seen = in
		return "One two three. Four!"
	}})
	c := dial(t, s, listenQuery, DefaultAPIKey)
	audio := pcmBytes(1, -2, 300, -32768, 32767, 0)
	write(t, c, websocket.MessageBinary, string(audio[:5])) // a message may split a sample
	write(t, c, websocket.MessageText, `{"type":"KeepAlive"}`)
	write(t, c, websocket.MessageBinary, string(audio[5:]))
	write(t, c, websocket.MessageText, `{"type":"CloseStream"}`)
	msgs, err := readAll(t, c)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("the stream ended with %v, want a normal closure", err)
	}
	var types, texts []string
	for _, m := range msgs {
		types = append(types, m.Type)
		if m.Type == "Results" {
			texts = append(texts, m.transcript())
			if !m.IsFinal {
				t.Errorf("interim result %q without interim_results", m.transcript())
			}
		}
	}
	if diff := cmp.Diff([]string{"Results", "Results", "Results", "Metadata"}, types); diff != "" {
		t.Errorf("message types (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"One two three.", "Four!", ""}, texts); diff != "" {
		t.Errorf("final transcripts (-want +got):\n%s", diff)
	}
	first := msgs[0]
	if w := first.Channel.Alternatives[0].Words; len(w) != 3 || w[0].Word != "one" || w[2].PunctuatedWord != "three." {
		t.Errorf("words of the first final: %+v", w)
	}
	infos := s.Streams()
	if len(infos) != 1 {
		t.Fatalf("%d streams", len(infos))
	}
	in := infos[0]
	if first.Metadata.RequestID != in.RequestID || msgs[3].RequestID != in.RequestID {
		t.Errorf("request ids %q, %q; want %q", first.Metadata.RequestID, msgs[3].RequestID, in.RequestID)
	}
	sum := sha256.Sum256(audio)
	if msgs[3].SHA256 != hex.EncodeToString(sum[:]) || msgs[3].Channels != 1 {
		t.Errorf("Metadata %+v", msgs[3])
	}
	want := StreamInfo{
		RequestID:     in.RequestID,
		Status:        http.StatusSwitchingProtocols,
		Query:         in.Query,
		Header:        in.Header,
		Model:         "nova-3",
		Language:      "en",
		SampleRate:    16000,
		Audio:         []int16{1, -2, 300, -32768, 32767, 0},
		AudioBytes:    12,
		AudioMessages: 2,
		Controls:      []string{"KeepAlive", "CloseStream"},
		Transcript:    "One two three. Four!",
		End:           "CloseStream",
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("StreamInfo (-want +got):\n%s", diff)
	}
	if !slices.Equal(seen.Audio, want.Audio) || seen.Transcript != "" {
		t.Errorf("Transcript saw %+v", seen)
	}
}

func TestFinalizeAndInterim(t *testing.T) {
	s := New(t, Options{})
	c := dial(t, s, listenQuery+"&interim_results=true", DefaultAPIKey)
	write(t, c, websocket.MessageBinary, string(pcmBytes(make([]int16, 16000)...)))
	write(t, c, websocket.MessageText, `{"type":"Finalize"}`)
	write(t, c, websocket.MessageText, `{"type":"CloseStream"}`)
	msgs, err := readAll(t, c)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("ended with %v", err)
	}
	type got struct {
		Final, FromFinalize bool
		Text                string
	}
	var results []got
	for _, m := range msgs {
		if m.Type == "Results" {
			results = append(results, got{m.IsFinal, m.FromFinalize, m.transcript()})
		}
	}
	want := []got{
		{false, false, "Hello"},
		{true, false, "Hello there."},
		{false, false, "How can I"},
		{true, true, "How can I help you today?"},
		{true, false, ""},
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	last := msgs[len(msgs)-2] // the empty final, at the end of the audio
	if last.Start != 1 || last.Duration != 0 {
		t.Errorf("empty final at %v+%v, want 1+0", last.Start, last.Duration)
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		o           Options
		query, key  string
		status      int
		code, error string
	}{
		{"no key", Options{}, listenQuery, "", 401, "INVALID_AUTH", "Invalid credentials."},
		{"wrong key", Options{}, listenQuery, "nope", 401, "INVALID_AUTH", "Invalid credentials."},
		{"other key", Options{APIKey: "k2"}, listenQuery, DefaultAPIKey, 401, "INVALID_AUTH", "Invalid credentials."},
		{"language", Options{Languages: []string{"de"}}, listenQuery, DefaultAPIKey, 400, "Bad Request",
			"Bad Request: No such model/language/tier combination found."},
		{"status", Options{RefuseStatus: 429, RefuseMessage: "slow down"}, listenQuery, DefaultAPIKey, 429,
			"Too Many Requests", "slow down"},
		{"no sample rate", Options{}, "/v1/listen?encoding=linear16", DefaultAPIKey, 400, "Bad Request",
			"Bad Request: sample_rate is required for raw audio encodings."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t, tc.o)
			_, resp, err := tryDial(t, s, tc.query, tc.key)
			if err == nil || resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("dial: %v, %v; want status %d", err, resp, tc.status)
			}
			body, _ := io.ReadAll(resp.Body)
			var v map[string]string
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			id := resp.Header.Get("dg-request-id")
			if v["err_code"] != tc.code || v["err_msg"] != tc.error || v["request_id"] != id || id == "" {
				t.Errorf("body %s, request id %q", body, id)
			}
			if h := resp.Header.Get("dg-error"); h != tc.error {
				t.Errorf("dg-error = %q", h)
			}
			if in := s.Streams(); len(in) != 1 || in[0].Status != tc.status || in[0].RequestID != id {
				t.Errorf("Streams() = %+v", in)
			}
		})
	}
}

func TestErrorCloses(t *testing.T) {
	t.Run("after audio", func(t *testing.T) {
		s := New(t, Options{CloseCode: 1011, CloseReason: "NET-0000", CloseAfter: 4})
		c := dial(t, s, listenQuery, DefaultAPIKey)
		write(t, c, websocket.MessageBinary, "ab")
		write(t, c, websocket.MessageBinary, "cd")
		_, err := readAll(t, c)
		if ce, ok := closeError(err); !ok || ce.Code != 1011 || ce.Reason != "NET-0000" {
			t.Fatalf("ended with %v", err)
		}
		if in := s.Streams()[0]; in.AudioBytes != 4 || in.End != "closed 1011 NET-0000" {
			t.Errorf("StreamInfo %+v", in)
		}
	})
	t.Run("at once", func(t *testing.T) {
		s := New(t, Options{CloseCode: 1008, CloseReason: "DATA-0000"})
		c := dial(t, s, listenQuery, DefaultAPIKey)
		if _, err := readAll(t, c); websocket.CloseStatus(err) != 1008 {
			t.Fatalf("ended with %v", err)
		}
	})
	t.Run("no encoding", func(t *testing.T) {
		s := New(t, Options{})
		c := dial(t, s, "/v1/listen?sample_rate=8000", DefaultAPIKey)
		write(t, c, websocket.MessageBinary, "abcd")
		if _, err := readAll(t, c); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("ended with %v", err)
		}
	})
	t.Run("idle", func(t *testing.T) {
		s := New(t, Options{IdleTimeout: 100 * time.Millisecond})
		// The server's idle clock starts when it accepts the connection,
		// which is after the dial starts (a lower bound by causality) but
		// may be well before the dial returns on a loaded machine.
		start := time.Now()
		c := dial(t, s, listenQuery, DefaultAPIKey)
		_, err := readAll(t, c)
		if ce, ok := closeError(err); !ok || ce.Code != 1011 || ce.Reason != "NET-0001" {
			t.Fatalf("ended with %v", err)
		}
		if took := time.Since(start); took < 100*time.Millisecond {
			t.Errorf("idle close after %s", took)
		}
	})
}

func closeError(err error) (websocket.CloseError, bool) {
	var ce websocket.CloseError
	ok := errors.As(err, &ce)
	return ce, ok
}

func TestEmptyMessageEndsStream(t *testing.T) {
	s := New(t, Options{})
	c := dial(t, s, listenQuery, DefaultAPIKey)
	write(t, c, websocket.MessageBinary, "abcd")
	write(t, c, websocket.MessageBinary, "")
	msgs, err := readAll(t, c)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure || len(msgs) != 4 {
		t.Fatalf("%d messages, ended with %v", len(msgs), err)
	}
	if in := s.Streams()[0]; in.EmptyMessages != 1 || in.AudioMessages != 1 || len(in.Controls) != 0 {
		t.Errorf("StreamInfo %+v", in)
	}
}

func TestExtra(t *testing.T) {
	s := New(t, Options{Extra: []string{`{"type":"SpeechStarted","channel":[0],"timestamp":0}`}})
	c := dial(t, s, listenQuery, DefaultAPIKey)
	write(t, c, websocket.MessageBinary, "ab")
	write(t, c, websocket.MessageBinary, "cd")
	write(t, c, websocket.MessageText, `{"type":"CloseStream"}`)
	msgs, _ := readAll(t, c)
	if len(msgs) == 0 || msgs[0].Type != "SpeechStarted" || slices.IndexFunc(msgs[1:], func(m received) bool {
		return m.Type == "SpeechStarted"
	}) >= 0 {
		t.Errorf("messages %+v, want SpeechStarted once, first", msgs)
	}
}

func TestHangAndFinalDelay(t *testing.T) {
	t.Run("hang", func(t *testing.T) {
		s := New(t, Options{Hang: true})
		c := dial(t, s, listenQuery, DefaultAPIKey)
		write(t, c, websocket.MessageBinary, "ab")
		write(t, c, websocket.MessageText, `{"type":"CloseStream"}`)
		rctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if _, data, err := c.Read(rctx); err == nil {
			t.Fatalf("a hanging server sent %s", data)
		}
		c.CloseNow()
		waitFor(t, func() bool { return s.Streams()[0].End == "client gone" })
		if in := s.Streams()[0]; in.AudioBytes != 2 || !slices.Equal(in.Controls, []string{"CloseStream"}) {
			t.Errorf("StreamInfo %+v", in)
		}
	})
	t.Run("delay", func(t *testing.T) {
		s := New(t, Options{FinalDelay: 150 * time.Millisecond})
		c := dial(t, s, listenQuery, DefaultAPIKey)
		start := time.Now()
		write(t, c, websocket.MessageText, `{"type":"CloseStream"}`)
		if _, err := readAll(t, c); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Fatal(err)
		}
		if took := time.Since(start); took < 150*time.Millisecond {
			t.Errorf("answered after %s", took)
		}
	})
}

// A test that ends with a stream open does not wait for it.
func TestShutdownDropsStreams(t *testing.T) {
	var s *Server
	t.Run("inner", func(t *testing.T) {
		s = New(t, Options{Hang: true})
		dial(t, s, listenQuery, DefaultAPIKey)
		waitFor(t, func() bool { return len(s.Streams()) == 1 && s.Streams()[0].Status == 101 })
	})
	if end := s.Streams()[0].End; end != "server shut down" && end != "client gone" {
		t.Errorf("End = %q", end)
	}
}

func TestSetOptions(t *testing.T) {
	s := New(t, Options{})
	s.SetOptions(Options{APIKey: "new"})
	if _, _, err := tryDial(t, s, listenQuery, DefaultAPIKey); err == nil {
		t.Error("old key accepted")
	}
	dial(t, s, listenQuery, "new")
}

func TestSegments(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"hello", []string{"hello"}},
		{"  Hi.  How are\tyou? Fine! ok ", []string{"Hi.", "How are you?", "Fine!", "ok"}},
		{"Dr. Who", []string{"Dr.", "Who"}},
	} {
		segs := segments(tc.in, 2)
		var got []string
		for _, s := range segs {
			got = append(got, s.text)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("segments(%q) (-want +got):\n%s", tc.in, diff)
		}
		if len(segs) > 0 && (segs[0].start != 0 || segs[len(segs)-1].end < 1.999) {
			t.Errorf("segments(%q) cover %v to %v, want 0 to 2", tc.in, segs[0].start, segs[len(segs)-1].end)
		}
		if strings.Join(got, " ") != strings.Join(strings.Fields(tc.in), " ") {
			t.Errorf("segments(%q) do not join back", tc.in)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
