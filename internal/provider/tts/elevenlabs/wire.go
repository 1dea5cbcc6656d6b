package elevenlabs

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// Client messages. The API wants BOS first, text that ends with a space,
// and EOS last.
type (
	bosMessage struct {
		Text          string        `json:"text"` // a single space
		VoiceSettings voiceSettings `json:"voice_settings"`
	}
	textMessage struct {
		Text  string `json:"text"`
		Flush bool   `json:"flush"` // generate now, whatever the buffer holds
	}
	eosMessage struct {
		Text string `json:"text"` // ""
	}
)

// encode is json.Marshal without HTML escaping: text goes out as written.
func encode(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(v) // the message types above always encode
	return bytes.TrimRight(b.Bytes(), "\n")
}

// serverMessage is one message from the server, decoded.
type serverMessage struct {
	audio []byte    // PCM s16le bytes, nil when none
	final bool      // isFinal: no more audio will come
	err   *apiError // the server reported an error (audio and final unset)
}

// apiError is an error the server reported in a message or close frame.
type apiError struct {
	kind    string // the "error" field, like "voice_not_found"; may be ""
	message string
	code    string // the "code" field (1008 in practice); may be ""
}

// wireServerMessage is a server message as the API sends it. Audio and
// isFinal may be null; error and code have been seen as strings and
// numbers, so they are decoded by hand.
type wireServerMessage struct {
	Audio   *string         `json:"audio"`
	IsFinal *bool           `json:"isFinal"`
	Message json.RawMessage `json:"message"`
	Error   json.RawMessage `json:"error"`
	Code    json.RawMessage `json:"code"`
}

var errNotJSON = errors.New("not a JSON object")

// parseMessage decodes one message from the server. It reads network
// bytes, so it must take anything without panicking.
func parseMessage(data []byte) (serverMessage, error) {
	var w wireServerMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return serverMessage{}, err
	}
	if bytes.TrimSpace(data)[0] != '{' {
		return serverMessage{}, errNotJSON
	}
	kind, message, code := scalar(w.Error), scalar(w.Message), scalar(w.Code)
	if nested := nestedMessage(w.Error); nested != "" {
		kind = ""
		message = cmp.Or(message, nested)
	}
	// An error has an "error" or a "message" but no audio; a message that
	// carries audio is audio, whatever else it holds.
	if (kind != "" || message != "") && (w.Audio == nil || *w.Audio == "") {
		return serverMessage{err: &apiError{kind: kind, message: message, code: code}}, nil
	}
	var m serverMessage
	if w.Audio != nil && *w.Audio != "" {
		pcm, err := base64.StdEncoding.DecodeString(*w.Audio)
		if err != nil {
			return serverMessage{}, errors.New("audio is not base64")
		}
		m.audio = pcm
	}
	m.final = w.IsFinal != nil && *w.IsFinal
	return m, nil
}

// scalar is a JSON string or number as text, and "" for anything else.
func scalar(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := strconv.ParseFloat(string(n), 64); err == nil {
			return string(n)
		}
	}
	return ""
}

// nestedMessage is the message of an error given as an object,
// {"error":{"message":...}}.
func nestedMessage(raw json.RawMessage) string {
	var obj struct {
		Message string `json:"message"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	return strings.TrimSpace(obj.Message)
}
