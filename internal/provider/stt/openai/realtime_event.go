package openai

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parley-voice/parley/internal/provider/apierr"
)

// dialect is the shape of the session a realtime server speaks, told by
// its first event: OpenAI's current API (session.created of a session
// with type "transcription" and an audio object), its beta (the same
// events with the input_audio_* fields at the session's top level, as
// speaches speaks), or its beta's transcription sessions
// (transcription_session.*).
type dialect int

const (
	dialectGA dialect = iota
	dialectBeta
	dialectBetaTranscription
)

func (d dialect) String() string {
	return [...]string{"ga", "beta", "beta-transcription"}[d]
}

// realtimeRate is the sample rate of the API's pcm16 / audio/pcm input.
const realtimeRate = 24000

// serverEvent is what Parley reads of the server's events.
type serverEvent struct {
	Type       string          `json:"type"`
	ItemID     string          `json:"item_id"`
	Delta      string          `json:"delta"`
	Transcript string          `json:"transcript"`
	Session    json.RawMessage `json:"session"`
	Error      *eventError     `json:"error"`
}

// eventError is the error object of an error event, or of a failed
// transcription.
type eventError struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
	EventID string `json:"event_id"`
}

// describe words the error for an error message: its code and its
// message as apierr.Redact shows it with key (none when it cannot be
// shown: then the code, or the error's type, names it).
func (e *eventError) describe(key string) string {
	if e == nil {
		return "no reason given"
	}
	msg, ok := apierr.Redact(e.Message, key)
	if e.Code != "" {
		msg = e.Code + ": " + msg
	} else if !ok && e.Type != "" {
		msg = e.Type
	} else if !ok {
		msg = "no reason shown"
	}
	return strings.TrimSuffix(msg, ": ")
}

// parseEvent reads one server event. An event without a type is an
// error, which quotes the event as apierr.Redact shows it with key.
func parseEvent(data []byte, key string) (serverEvent, error) {
	var e serverEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return serverEvent{}, fmt.Errorf("not a JSON event%s", apierr.Quote(string(data), key))
	}
	if e.Type == "" {
		return serverEvent{}, fmt.Errorf("an event without a type%s", apierr.Quote(string(data), key))
	}
	return e, nil
}

// dialectOf tells the dialect from the server's first event; false when
// it is not the start of a session.
func dialectOf(e serverEvent) (dialect, bool) {
	switch e.Type {
	case "transcription_session.created":
		return dialectBetaTranscription, true
	case "session.created":
		var s struct {
			Type  string          `json:"type"`
			Audio json.RawMessage `json:"audio"`
		}
		_ = json.Unmarshal(e.Session, &s)
		if s.Type == "transcription" || len(s.Audio) > 0 && string(s.Audio) != "null" {
			return dialectGA, true
		}
		return dialectBeta, true
	}
	return 0, false
}

// sessionSettings is what Parley asks of a transcription session.
type sessionSettings struct {
	model    string
	language string // ISO-639-1, "" to let the model detect it
	silence  int    // ms of silence after which the server's VAD commits a segment
}

// updateEvent is the event that configures the session in dialect d: the
// model and language, audio as 24 kHz 16-bit PCM, and the server's VAD
// cutting the caller's speech into segments at pauses (transcribed while
// the caller goes on) without ever answering.
func updateEvent(d dialect, s sessionSettings) []byte {
	transcription := map[string]any{"model": s.model}
	if s.language != "" {
		transcription["language"] = s.language
	}
	vad := map[string]any{"type": "server_vad", "threshold": 0.5, "silence_duration_ms": s.silence}
	var ev map[string]any
	switch d {
	case dialectGA:
		vad["prefix_padding_ms"] = 300
		ev = map[string]any{"type": "session.update", "session": map[string]any{
			"type": "transcription",
			"audio": map[string]any{"input": map[string]any{
				"format":         map[string]any{"type": "audio/pcm", "rate": realtimeRate},
				"transcription":  transcription,
				"turn_detection": vad,
			}},
		}}
	case dialectBeta:
		// pcm16 at 24 kHz is the default input, and speaches refuses the
		// field (and prefix_padding_ms).
		vad["create_response"] = false
		ev = map[string]any{"type": "session.update", "session": map[string]any{
			"input_audio_transcription": transcription,
			"turn_detection":            vad,
		}}
	default:
		vad["prefix_padding_ms"] = 300
		ev = map[string]any{"type": "transcription_session.update", "session": map[string]any{
			"input_audio_format":        "pcm16",
			"input_audio_transcription": transcription,
			"turn_detection":            vad,
		}}
	}
	b, _ := json.Marshal(ev) // maps of strings and numbers
	return b
}

// updatedType is the event that confirms updateEvent in dialect d.
func updatedType(d dialect) string {
	if d == dialectBetaTranscription {
		return "transcription_session.updated"
	}
	return "session.updated"
}

// commitEventID names Parley's commit, so an error about it is known.
const commitEventID = "parley_commit"

var commitEvent = []byte(`{"type":"input_audio_buffer.commit","event_id":"` + commitEventID + `"}`)

// appendEvent is input_audio_buffer.append of pcm (24 kHz samples) into
// dst, which it returns.
func appendEvent(dst []byte, pcm []int16) []byte {
	raw := make([]byte, 0, 2*len(pcm))
	for _, s := range pcm {
		raw = binary.LittleEndian.AppendUint16(raw, uint16(s))
	}
	dst = append(dst[:0], `{"type":"input_audio_buffer.append","audio":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, `"}`...)
}
