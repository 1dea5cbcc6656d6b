package deepgram

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// A Results message as Deepgram sends it (trimmed word list).
const finalResults = `{"type":"Results","channel_index":[0,1],"duration":1.04,"start":0.0,
 "is_final":true,"speech_final":true,"from_finalize":false,
 "channel":{"alternatives":[{"transcript":"Hello there.","confidence":0.99,
   "words":[{"word":"hello","start":0.08,"end":0.4,"confidence":0.99,"punctuated_word":"Hello"}]},
   {"transcript":"yellow there","confidence":0.2,"words":[]}]},
 "metadata":{"request_id":"8c8ebea9","model_info":{"name":"general-nova-3","version":"x","arch":"nova-3"},"model_uuid":"u"}}`

func TestParseMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want message
	}{
		{finalResults, message{Type: "Results", Final: true, Transcript: "Hello there."}},
		{`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"Hel"}]}}`,
			message{Type: "Results", Transcript: "Hel"}},
		{`{"type":"Results","is_final":true,"channel":{"alternatives":[{"transcript":"  padded  "}]}}`,
			message{Type: "Results", Final: true, Transcript: "padded"}},
		{`{"type":"Results","is_final":true,"channel":{"alternatives":[]}}`, message{Type: "Results", Final: true}},
		{`{"type":"Results","is_final":true}`, message{Type: "Results", Final: true}},
		// Only Results carry text, whatever else a message holds.
		{`{"type":"Metadata","is_final":true,"channel":{"alternatives":[{"transcript":"x"}]},"duration":1.2}`,
			message{Type: "Metadata"}},
		{`{"type":"SpeechStarted","channel":[0],"timestamp":0.5}`, message{Type: "SpeechStarted"}},
		{`{"type":"UtteranceEnd","channel":[0,1],"last_word_end":2.1}`, message{Type: "UtteranceEnd"}},
		{`{"type":"Error","description":"Something failed.","message":"m","variant":"v"}`,
			message{Type: "Error", Error: "Something failed."}},
		{`{"type":"Error","message":"only a message"}`, message{Type: "Error", Error: "only a message"}},
		{`{}`, message{}},
	} {
		got, err := parseMessage([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("parseMessage(%.60s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{``, `null x`, `[`, `"text"`, `{"type":1}`, `{"is_final":"yes"}`} {
		if m, err := parseMessage([]byte(in)); err == nil && m != (message{}) {
			t.Errorf("parseMessage(%q) = %+v, want an error or nothing", in, m)
		}
	}
}

func TestJoinFinals(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"Hello there.", "", "How are you?", " "}, "Hello there. How are you?"},
		{[]string{" a ", "b"}, "a b"},
	} {
		if got := joinFinals(tc.in); got != tc.want {
			t.Errorf("joinFinals(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEncodePCM(t *testing.T) {
	got := encodePCM([]byte{9}, []int16{1, -1, 0x1234, -32768})
	want := []byte{9, 0x01, 0x00, 0xff, 0xff, 0x34, 0x12, 0x00, 0x80}
	if string(got) != string(want) {
		t.Errorf("encodePCM = % x, want % x", got, want)
	}
}

// FuzzParseMessage feeds parseMessage what a server (or anything between
// it and us) could send: it must not panic, must keep to its contract, and
// must read back the transcript of a well-formed final.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		finalResults,
		`{"type":"Results","is_final":false,"channel":{"alternatives":[{"transcript":"Hel"}]}}`,
		`{"type":"Metadata","request_id":"r","duration":0.5,"channels":1}`,
		`{"type":"Error","description":"d"}`,
		`{"type":"Results","channel":{"alternatives":null}}`,
		`{"type":"Results","channel":{"alternatives":[{"transcript":"\u00e9\ud83d\ude00"}]}}`,
		`{"type":"Results","is_final":true,"channel":{"alternatives":[{"transcript":null}]}}`,
		``, `{`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			if m != (message{}) {
				t.Errorf("error %v with a message %+v", err, m)
			}
		} else {
			if m.Type != "Results" && (m.Final || m.Transcript != "") {
				t.Errorf("%s message with text: %+v", m.Type, m)
			}
			if m.Type != "Error" && m.Error != "" {
				t.Errorf("%s message with an error: %+v", m.Type, m)
			}
			if m.Transcript != strings.TrimSpace(m.Transcript) {
				t.Errorf("transcript %q not trimmed", m.Transcript)
			}
		}

		// The same bytes as a transcript, the way Deepgram would frame them.
		if !utf8.Valid(data) {
			return
		}
		text := string(data)
		msg, _ := json.Marshal(map[string]any{
			"type": "Results", "is_final": true,
			"channel": map[string]any{"alternatives": []any{map[string]any{"transcript": text}}},
		})
		m, err = parseMessage(msg)
		if err != nil || !m.Final || m.Transcript != strings.TrimSpace(text) {
			t.Errorf("final with transcript %q read as %+v, %v", text, m, err)
		}
	})
}
