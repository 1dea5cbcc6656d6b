package deepgram

import (
	"encoding/binary"
	"encoding/json"
	"strings"
)

// Control messages the client sends as text frames (Deepgram reads a
// binary frame as audio, even one holding this JSON).
var (
	msgKeepAlive   = []byte(`{"type":"KeepAlive"}`)
	msgCloseStream = []byte(`{"type":"CloseStream"}`)
)

// message is what the client needs of one message from the server.
type message struct {
	Type       string // Results, Metadata, SpeechStarted, UtteranceEnd, Error, ...
	Final      bool   // a Results message with is_final: its text will not change
	Transcript string // the first alternative of a Results message
	Error      string // an Error message's description (or message)
}

// parseMessage decodes one text frame from the server. It is the only
// code that reads the server's JSON, so it is fuzzed (FuzzParseMessage).
// Fields that do not apply to the message's type are left empty.
func parseMessage(data []byte) (message, error) {
	// "channel" is an object in Results and an array of indexes in
	// SpeechStarted and UtteranceEnd: it is decoded by type.
	var v struct {
		Type        string          `json:"type"`
		IsFinal     bool            `json:"is_final"`
		Channel     json.RawMessage `json:"channel"`
		Description string          `json:"description"`
		Message     string          `json:"message"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return message{}, err
	}
	m := message{Type: v.Type}
	switch v.Type {
	case "Results":
		var ch struct {
			Alternatives []struct {
				Transcript string `json:"transcript"`
			} `json:"alternatives"`
		}
		if len(v.Channel) > 0 {
			if err := json.Unmarshal(v.Channel, &ch); err != nil {
				return message{}, err
			}
		}
		m.Final = v.IsFinal
		if alts := ch.Alternatives; len(alts) > 0 {
			m.Transcript = strings.TrimSpace(alts[0].Transcript)
		}
	case "Error":
		m.Error = v.Description
		if m.Error == "" {
			m.Error = v.Message
		}
	}
	return m, nil
}

// encodePCM appends pcm to dst as little-endian 16-bit samples, the byte
// order of encoding=linear16.
func encodePCM(dst []byte, pcm []int16) []byte {
	for _, s := range pcm {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(s))
	}
	return dst
}

// joinFinals is the utterance's text: the final transcripts in order, with
// single spaces between them (empty finals, sent for silence, dropped).
func joinFinals(finals []string) string {
	var b strings.Builder
	for _, f := range finals {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}
