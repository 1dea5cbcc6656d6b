package elevenlabstest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/media/audio"
)

// pcmRates are the PCM output formats the API offers.
var pcmRates = []int{8000, 16000, 22050, 24000, 44100}

// session plays the server's side of one WebSocket.
type session struct {
	srv   *Server
	c     *websocket.Conn
	rec   *Session // guarded by srv.mu
	rate  int
	reply *Reply // picked at the first generation
	sent  int    // audio messages out
}

func (s *session) run() {
	bos, key, ok := s.read()
	if !ok {
		return
	}
	rec := s.snapshot()
	if rec.APIKey != s.srv.opts.APIKey && key != s.srv.opts.APIKey {
		s.fail(Failure{CloseReason: "Invalid API key"})
		return
	}
	if !s.srv.voices[rec.Voice] {
		s.fail(Failure{Message: fmt.Sprintf("A voice for the voice_id %s was not found.", rec.Voice), Error: "voice_not_found"})
		return
	}
	rate, ok := pcmRate(rec.OutputFormat)
	if !ok {
		s.fail(Failure{Message: fmt.Sprintf("The fake speaks only PCM output formats, not %q.", rec.OutputFormat), Error: "invalid_output_format"})
		return
	}
	s.rate = rate
	if rec.Language != "" && !strings.HasSuffix(rec.Model, "_v2_5") {
		s.fail(Failure{Message: fmt.Sprintf("Model '%s' does not support language_code.", rec.Model), Error: "unsupported_language"})
		return
	}
	if bos.Text != " " {
		s.fail(Failure{Message: `The first message must have text " ".`, Error: "invalid_input_message"})
		return
	}

	var pending strings.Builder
	for {
		m, _, ok := s.read()
		if !ok {
			return
		}
		eos := m.Text == "" && !m.Flush
		pending.WriteString(m.Text)
		if m.Flush || eos {
			text := pending.String()
			pending.Reset()
			if strings.TrimSpace(text) != "" && !s.speak(text) {
				return
			}
		}
		if eos {
			break
		}
	}
	if !s.check(true) {
		return
	}
	if s.send(map[string]any{"isFinal": true}) != nil {
		return
	}
	s.update(func(r *Session) { r.Final = true })
	_ = s.c.Close(websocket.StatusNormalClosure, "")
}

// read reads and records one client message; a message that is no JSON
// or has no text is answered the way the API does, and ends the session.
func (s *session) read() (Message, string, bool) {
	_, b, err := s.c.Read(s.srv.ctx)
	if err != nil {
		return Message{}, "", false
	}
	m, key, err := parseClientMessage(b)
	if err != nil {
		s.fail(Failure{
			Message: "Could not parse input message, make sure it is a json and follows the schema outlined in protocol.",
			Error:   "invalid_input_message",
		})
		return Message{}, "", false
	}
	s.update(func(r *Session) {
		r.Messages = append(r.Messages, m)
		if len(r.Messages) > 1 && m.Text == "" && !m.Flush {
			r.EOS = true
		}
	})
	return m, key, true
}

// speak streams the audio for text; false when the session is over.
func (s *session) speak(text string) bool {
	r := s.pickReply()
	var pcm []int16
	if r.Audio != nil {
		pcm = r.Audio(s.rate, text)
	} else {
		d := time.Duration(utf8.RuneCountInString(text)) * r.PerChar
		pcm = audio.Tone(r.ToneHz, s.rate, d, 0.5)
	}
	per := max(int(int64(s.rate)*int64(r.Chunk)/int64(time.Second)), 1)
	n := (len(pcm) + per - 1) / per
	chars := []rune(text)
	for i := range n {
		if !s.check(false) {
			return false
		}
		wait := r.Gap
		if s.sent == 0 {
			wait = r.FirstDelay
		}
		if !s.wait(wait) {
			return false
		}
		chunk := pcm[i*per : min((i+1)*per, len(pcm))]
		d := time.Duration(len(chunk)) * time.Second / time.Duration(s.rate)
		al := align(chars[i*len(chars)/n:(i+1)*len(chars)/n], d)
		msg := audioMessage{Audio: encodePCM(chunk), Alignment: al, NormalizedAlignment: al}
		if s.send(msg) != nil {
			return false
		}
		s.sent++
		s.update(func(r *Session) { r.Chunks++; r.Audio += d })
	}
	return true
}

// check fires the reply's Hang and Fail when their After has come, or
// before the final message at the latest; false when the session is over.
func (s *session) check(final bool) bool {
	r := s.pickReply()
	if f := r.Fail; f != nil && (final || s.sent >= f.After) {
		s.fail(*f)
		return false
	}
	if r.Hang && (final || s.sent >= r.HangAfter) {
		// Keep reading (and recording) until the client goes away.
		for {
			if _, _, ok := s.read(); !ok {
				return false
			}
		}
	}
	return true
}

// fail reports an error the way the API does.
func (s *session) fail(f Failure) {
	reason := f.CloseReason
	if reason == "" {
		reason = f.Message
	}
	s.update(func(r *Session) { r.Error = reason })
	if f.Message != "" {
		_ = s.send(errorMessage{Message: f.Message, Error: f.Error, Code: int(websocket.StatusPolicyViolation)})
	}
	if f.Drop {
		_ = s.c.CloseNow()
		return
	}
	code := websocket.StatusCode(f.CloseCode)
	if code == 0 {
		code = websocket.StatusPolicyViolation
	}
	// A close reason is at most 123 bytes.
	if len(reason) > 123 {
		reason = strings.ToValidUTF8(reason[:123], "")
	}
	_ = s.c.Close(code, reason)
}

func (s *session) pickReply() Reply {
	if s.reply == nil {
		r := s.srv.opts.Reply
		if s.srv.opts.Script != nil {
			r = s.srv.opts.Script(s.snapshot())
		}
		if r.ToneHz == 0 {
			r.ToneHz = DefaultToneHz
		}
		if r.PerChar <= 0 {
			r.PerChar = DefaultPerChar
		}
		if r.Chunk <= 0 {
			r.Chunk = DefaultChunk
		}
		s.reply = &r
	}
	return *s.reply
}

func (s *session) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.c.Write(s.srv.ctx, websocket.MessageText, b)
}

// wait sleeps d unless the server is closing (false).
func (s *session) wait(d time.Duration) bool {
	if d <= 0 {
		return s.srv.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.srv.ctx.Done():
		return false
	}
}

func (s *session) update(f func(*Session)) {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	f(s.rec)
}

func (s *session) snapshot() Session {
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	return s.rec.clone()
}

// audioMessage is the API's AudioOutput message.
type audioMessage struct {
	Audio               string     `json:"audio"`
	IsFinal             *bool      `json:"isFinal"`
	NormalizedAlignment *alignment `json:"normalizedAlignment"`
	Alignment           *alignment `json:"alignment"`
}

// alignment gives each character's timing within its chunk.
type alignment struct {
	CharStartTimesMs []int    `json:"charStartTimesMs"`
	CharDurationsMs  []int    `json:"charDurationsMs"`
	Chars            []string `json:"chars"`
}

type errorMessage struct {
	Message string `json:"message"`
	Error   string `json:"error"`
	Code    int    `json:"code"`
}

// align spreads chars evenly over a chunk of duration d.
func align(chars []rune, d time.Duration) *alignment {
	if len(chars) == 0 {
		return nil
	}
	a := &alignment{}
	each := int(d.Milliseconds()) / len(chars)
	for i, c := range chars {
		a.Chars = append(a.Chars, string(c))
		a.CharStartTimesMs = append(a.CharStartTimesMs, i*each)
		a.CharDurationsMs = append(a.CharDurationsMs, each)
	}
	return a
}

func encodePCM(pcm []int16) string {
	b := make([]byte, 2*len(pcm))
	for i, x := range pcm {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// pcmRate is the sample rate of a PCM output format like "pcm_16000".
func pcmRate(format string) (int, bool) {
	r, err := strconv.Atoi(strings.TrimPrefix(format, "pcm_"))
	if err != nil || !strings.HasPrefix(format, "pcm_") {
		return 0, false
	}
	for _, ok := range pcmRates {
		if r == ok {
			return r, true
		}
	}
	return 0, false
}
