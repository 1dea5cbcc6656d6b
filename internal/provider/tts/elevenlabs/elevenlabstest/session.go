package elevenlabstest

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Session is what the server saw and did on one WebSocket.
type Session struct {
	// From the handshake.
	Voice        string // the voice id in the path
	Query        url.Values
	Header       http.Header
	APIKey       string // the xi-api-key header
	Model        string // query model_id
	OutputFormat string // query output_format
	Language     string // query language_code

	// Messages are the client's messages in order, BOS and EOS included.
	Messages []Message
	// EOS: the client sent {"text":""}.
	EOS bool

	// What the server sent.
	Chunks int           // audio messages
	Audio  time.Duration // audio in them
	Final  bool          // {"isFinal":true} went out
	// Error is the error the server reported (a JSON message's text or a
	// close reason), "" if none.
	Error string
}

// Message is one client message, parsed.
type Message struct {
	Text                 string
	Flush                bool
	TryTriggerGeneration bool
	VoiceSettings        *VoiceSettings
	// Raw is the message as it came, for fields not decoded above.
	Raw json.RawMessage
}

// VoiceSettings is a BOS message's voice_settings; nil fields were absent.
type VoiceSettings struct {
	Stability       *float64 `json:"stability"`
	SimilarityBoost *float64 `json:"similarity_boost"`
	Style           *float64 `json:"style"`
	Speed           *float64 `json:"speed"`
	UseSpeakerBoost *bool    `json:"use_speaker_boost"`
}

// BOS is the first message (the zero Message if none came).
func (s Session) BOS() Message {
	if len(s.Messages) == 0 {
		return Message{}
	}
	return s.Messages[0]
}

// Texts are the texts of the messages between BOS and EOS.
func (s Session) Texts() []string {
	var out []string
	for i, m := range s.Messages {
		if i == 0 || (s.EOS && i == len(s.Messages)-1) {
			continue
		}
		out = append(out, m.Text)
	}
	return out
}

// Text is the text sent, Texts joined.
func (s Session) Text() string { return strings.Join(s.Texts(), "") }

func (s *Session) clone() Session {
	c := *s
	c.Query = url.Values(maps.Clone(map[string][]string(s.Query)))
	c.Header = s.Header.Clone()
	c.Messages = slices.Clone(s.Messages)
	return c
}

// wireMessage is a client message as the API defines it.
type wireMessage struct {
	Text                 *string        `json:"text"`
	Flush                bool           `json:"flush"`
	TryTriggerGeneration bool           `json:"try_trigger_generation"`
	VoiceSettings        *VoiceSettings `json:"voice_settings"`
	APIKey               string         `json:"xi-api-key"`
}

// parseClientMessage decodes one client message; text is required.
func parseClientMessage(b []byte) (Message, string, error) {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return Message{}, "", err
	}
	if w.Text == nil {
		return Message{}, "", errNoText
	}
	return Message{
		Text:                 *w.Text,
		Flush:                w.Flush,
		TryTriggerGeneration: w.TryTriggerGeneration,
		VoiceSettings:        w.VoiceSettings,
		Raw:                  json.RawMessage(slices.Clone(b)),
	}, w.APIKey, nil
}

type protocolError string

func (e protocolError) Error() string { return string(e) }

const errNoText = protocolError("missing field text")
