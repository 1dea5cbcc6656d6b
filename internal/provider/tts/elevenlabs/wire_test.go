package elevenlabs

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func TestParseMessage(t *testing.T) {
	pcm := []byte{1, 0, 0xff, 0x7f, 0, 0x80}
	b64 := base64.StdEncoding.EncodeToString(pcm)
	for _, c := range []struct {
		in    string
		audio []byte
		final bool
		err   *apiError
		bad   bool
	}{
		{in: `{"audio":"` + b64 + `","isFinal":null,"normalizedAlignment":{"chars":["H"],"charStartTimesMs":[0],"charDurationsMs":[50]},"alignment":null}`, audio: pcm},
		{in: `{"isFinal":true}`, final: true},
		{in: `{"audio":null,"isFinal":true,"normalizedAlignment":null}`, final: true},
		{in: `{"audio":"","isFinal":false}`},
		{in: `{"audio":"` + b64 + `","isFinal":true}`, audio: pcm, final: true},
		{in: `{"message":"Invalid API key","error":"invalid_api_key","code":1008}`, err: &apiError{kind: "invalid_api_key", message: "Invalid API key", code: "1008"}},
		{in: `{"error":"quota_exceeded"}`, err: &apiError{kind: "quota_exceeded"}},
		{in: `{"error":{"message":"nested"},"code":"1008"}`, err: &apiError{message: "nested", code: "1008"}},
		{in: `{"message":"Something went wrong","audio":null}`, err: &apiError{message: "Something went wrong"}},
		{in: `{}`},
		{in: `{"audio":"not base64!"}`, bad: true},
		{in: `{"audio":42}`, bad: true},
		{in: `null`, bad: true},
		{in: `[1,2]`, bad: true},
		{in: `"text"`, bad: true},
		{in: ``, bad: true},
		{in: `{"audio":"AAA=`, bad: true},
	} {
		m, err := parseMessage([]byte(c.in))
		if (err != nil) != c.bad {
			t.Errorf("%s: error %v, want error %v", c.in, err, c.bad)
			continue
		}
		if !bytes.Equal(m.audio, c.audio) || m.final != c.final || (m.err == nil) != (c.err == nil) || (m.err != nil && *m.err != *c.err) {
			t.Errorf("%s: got %+v (err %+v), want audio %v final %v err %+v", c.in, m, m.err, c.audio, c.final, c.err)
		}
	}
}

// FuzzParseMessage: parseMessage reads network bytes; whatever they are,
// it must not panic, and what it returns must hang together.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"audio":"AAEC","isFinal":null,"normalizedAlignment":{"chars":["a"],"charStartTimesMs":[0],"charDurationsMs":[1]}}`,
		`{"isFinal":true}`,
		`{"message":"A voice for the voice_id x was not found.","error":"voice_not_found","code":1008}`,
		`{"error":{"message":"m"},"code":1e400}`,
		`{"audio":"AA==","message":"both"}`,
		`null`, `{}`, `[`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			if m.audio != nil || m.final || m.err != nil {
				t.Fatalf("error %v with a message %+v", err, m)
			}
			return
		}
		if m.err != nil && (m.audio != nil || m.final || m.err.kind == "" && m.err.message == "") {
			t.Fatalf("error message %+v mixed with audio or empty", m)
		}
		if m.audio != nil && (len(m.audio) == 0 || len(m.audio) > len(data)) {
			t.Fatalf("%d audio bytes from a %d-byte message", len(m.audio), len(data))
		}
	})
}

func TestBodyMessage(t *testing.T) {
	for in, want := range map[string][2]string{
		`{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}`: {"invalid_api_key", "Invalid API key"},
		`{"detail":"Not Found"}`:                      {"", "Not Found"},
		`{"message":"busy","error":"system_busy"}`:    {"system_busy", "busy"},
		"<html>\n<body>Bad   Gateway</body></html>\n": {"", "<html> <body>Bad Gateway</body></html>"},
		``: {"", ""},
	} {
		kind, msg := bodyMessage([]byte(in))
		if kind != want[0] || msg != want[1] {
			t.Errorf("bodyMessage(%q) = %q, %q; want %q, %q", in, kind, msg, want[0], want[1])
		}
	}
}

func TestEncodeKeepsText(t *testing.T) {
	got := string(encode(textMessage{Text: "<b>Tom & Jerry</b> ", Flush: true}))
	if want := `{"text":"<b>Tom & Jerry</b> ","flush":true}`; got != want {
		t.Errorf("encode = %s, want %s", got, want)
	}
}
