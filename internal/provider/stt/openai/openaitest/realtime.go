package openaitest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// Dialect is the shape of the transcription sessions a realtime server
// speaks.
type Dialect int

const (
	// GA is OpenAI's current Realtime API: session.created of a session
	// of type "transcription" whose settings sit under audio.input.
	GA Dialect = iota
	// Beta is the beta shape as speaches speaks it: session.* events with
	// input_audio_transcription and turn_detection at the session's top
	// level; the model comes in the URL.
	Beta
	// BetaTranscription is the beta's transcription_session.* events.
	BetaTranscription
)

// RealtimeRate is the sample rate of the sessions' audio (pcm16).
const RealtimeRate = 24000

// Option changes what a Server offers.
type Option func(*Server)

// Realtime makes the server offer realtime transcription sessions at GET
// /v1/realtime in dialect d; without it the route answers 404, as a
// whisper.cpp server or an older speaches would.
func Realtime(d Dialect) Option {
	return func(s *Server) { s.dialect, s.realtime = d, true }
}

// RealtimeSession is what one realtime connection did.
type RealtimeSession struct {
	Header http.Header
	Query  url.Values
	// Updates are the session objects of the client's update events.
	Updates []map[string]any
	// The session's settings when it ended.
	Model, Language string
	VAD             bool          // the server's VAD commits segments
	Silence         time.Duration // the pause that ends a segment
	Appended        int           // samples received (at RealtimeRate)
	Commits         int           // the client's commit events
	Items           int           // items committed, by the VAD or the client
}

// vadLevel is the RMS above which a 20 ms frame is speech.
const vadLevel = 500

// minCommit is the least audio a commit takes: 100 ms.
const minCommit = RealtimeRate / 10

// rtSession is one connection's state; its fields are the reader's, the
// record is written under the server's mu.
type rtSession struct {
	s      *Server
	conn   *websocket.Conn
	rec    *RealtimeSession
	header http.Header

	buf      []int16
	inSpeech bool
	silent   time.Duration
	items    int
	queue    chan item // to the transcriber, in commit order
}

// item is a committed segment to transcribe.
type item struct {
	id      string
	samples []int16
}

func (s *Server) realtimeSession(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("intent") != "transcription" {
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, "openaitest serves transcription sessions only (intent=transcription)", "intent", "")
		return
	}
	if s.dialect == Beta && q.Get("model") == "" {
		// speaches: the model is a required query parameter.
		http.Error(w, `{"detail":[{"loc":["query","model"],"msg":"Field required"}]}`, http.StatusForbidden)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	rec := &RealtimeSession{Header: r.Header.Clone(), Query: q, Model: q.Get("model"), Language: q.Get("language"),
		VAD: true, Silence: 500 * time.Millisecond}
	s.mu.Lock()
	s.sessions = append(s.sessions, rec)
	s.mu.Unlock()
	ss := &rtSession{s: s, conn: conn, rec: rec, header: r.Header.Clone(), queue: make(chan item, 64)}

	ctx, cancel := context.WithCancel(s.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { ss.transcribe(ctx) })
	defer func() {
		close(ss.queue)
		cancel()
		wg.Wait()
	}()
	ss.send(ctx, ss.created())
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			ss.error(ctx, "invalid_request_error", "", "binary frames are not events", "")
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal(data, &ev); err != nil {
			ss.error(ctx, "invalid_request_error", "invalid_json", "The event is not valid JSON", "")
			continue
		}
		ss.handle(ctx, ev)
	}
}

// Sessions returns what every realtime connection did, in order.
func (s *Server) Sessions() []RealtimeSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RealtimeSession, len(s.sessions))
	for i, r := range s.sessions {
		out[i] = *r
		out[i].Updates = append([]map[string]any(nil), r.Updates...)
	}
	return out
}

func (ss *rtSession) send(ctx context.Context, ev map[string]any) {
	b, _ := json.Marshal(ev)
	_ = ss.conn.Write(ctx, websocket.MessageText, b)
}

// error sends an error event; eventID is the client event it answers.
func (ss *rtSession) error(ctx context.Context, typ, code, msg, eventID string) {
	e := map[string]any{"type": typ, "message": msg, "code": nullable(code), "param": nil, "event_id": nullable(eventID)}
	ss.send(ctx, map[string]any{"type": "error", "event_id": "event_err", "error": e})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// created is the session's first event.
func (ss *rtSession) created() map[string]any {
	if ss.s.dialect == BetaTranscription {
		return map[string]any{"type": "transcription_session.created", "session": ss.session()}
	}
	return map[string]any{"type": "session.created", "session": ss.session()}
}

// session is the session object in the server's dialect.
func (ss *rtSession) session() map[string]any {
	ss.s.mu.Lock()
	r := *ss.rec
	ss.s.mu.Unlock()
	var vad any
	if r.VAD {
		vad = map[string]any{"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": r.Silence.Milliseconds()}
	}
	transcription := map[string]any{"model": r.Model, "language": nullable(r.Language), "prompt": ""}
	if ss.s.dialect == GA {
		return map[string]any{"object": "realtime.transcription_session", "type": "transcription", "id": "sess_1",
			"audio": map[string]any{"input": map[string]any{
				"format": map[string]any{"type": "audio/pcm", "rate": RealtimeRate}, "transcription": transcription,
				"turn_detection": vad, "noise_reduction": nil,
			}}}
	}
	return map[string]any{"id": "sess_1", "object": "realtime.session", "modalities": []string{"audio", "text"},
		"input_audio_format": "pcm16", "input_audio_transcription": transcription, "turn_detection": vad}
}

func (ss *rtSession) handle(ctx context.Context, ev map[string]any) {
	typ, _ := ev["type"].(string)
	eventID, _ := ev["event_id"].(string)
	update := "session.update"
	if ss.s.dialect == BetaTranscription {
		update = "transcription_session.update"
	}
	switch typ {
	case update:
		session, _ := ev["session"].(map[string]any)
		ss.s.mu.Lock()
		ss.rec.Updates = append(ss.rec.Updates, session)
		ss.s.mu.Unlock()
		if ok := ss.configure(ctx, session, eventID); !ok {
			return
		}
		ss.send(ctx, map[string]any{"type": strings.TrimSuffix(update, "update") + "updated", "session": ss.session()})
	case "input_audio_buffer.append":
		s, _ := ev["audio"].(string)
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(raw)%2 != 0 {
			ss.error(ctx, "invalid_request_error", "invalid_value", "Invalid 'audio'. Expected base64-encoded pcm16 audio.", eventID)
			return
		}
		pcm := make([]int16, len(raw)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		ss.s.mu.Lock()
		ss.rec.Appended += len(pcm)
		vad, silence := ss.rec.VAD, ss.rec.Silence
		ss.s.mu.Unlock()
		ss.listen(ctx, pcm, vad, silence)
	case "input_audio_buffer.commit":
		ss.s.mu.Lock()
		ss.rec.Commits++
		ss.s.mu.Unlock()
		if len(ss.buf) < minCommit {
			msg := fmt.Sprintf("Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has %.2fms of audio.",
				float64(len(ss.buf))*1000/RealtimeRate)
			if ss.s.dialect == Beta { // speaches names no code nor event
				ss.error(ctx, "invalid_request_error", "", msg, "")
				return
			}
			ss.error(ctx, "invalid_request_error", "input_audio_buffer_commit_empty", msg, eventID)
			return
		}
		ss.commit(ctx)
	case "input_audio_buffer.clear":
		ss.buf, ss.inSpeech, ss.silent = nil, false, 0
		ss.send(ctx, map[string]any{"type": "input_audio_buffer.cleared"})
	default:
		ss.error(ctx, "invalid_request_error", "invalid_value", fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s', 'input_audio_buffer.append', "+
			"'input_audio_buffer.commit' and 'input_audio_buffer.clear'.", typ, update), eventID)
	}
}

// configure applies a session update as the dialect reads it; false when
// it was refused (an error event went out).
func (ss *rtSession) configure(ctx context.Context, session map[string]any, eventID string) bool {
	var transcription, vad any
	var hasVAD bool
	switch ss.s.dialect {
	case GA:
		for _, k := range []string{"input_audio_transcription", "turn_detection", "input_audio_format", "modalities"} {
			if _, ok := session[k]; ok {
				ss.error(ctx, "invalid_request_error", "unknown_parameter", fmt.Sprintf("Unknown parameter: 'session.%s'.", k), eventID)
				return false
			}
		}
		if session["type"] != "transcription" {
			ss.error(ctx, "invalid_request_error", "invalid_value", "Invalid value for 'session.type': a transcription session takes 'transcription'.", eventID)
			return false
		}
		audio, _ := session["audio"].(map[string]any)
		input, _ := audio["input"].(map[string]any)
		if f, ok := input["format"].(map[string]any); ok && (f["type"] != "audio/pcm" || f["rate"] != float64(RealtimeRate)) {
			ss.error(ctx, "invalid_request_error", "invalid_value", "Invalid 'session.audio.input.format': audio/pcm takes a rate of 24000.", eventID)
			return false
		}
		transcription = input["transcription"]
		vad, hasVAD = input["turn_detection"]
	case Beta:
		// speaches says what it does not support, and applies the rest.
		if _, ok := session["input_audio_format"]; ok {
			ss.error(ctx, "invalid_request_error", "", "Specifying `session.input_audio_format` is not supported. The server either does not support this field or it is not configurable.", "")
		}
		if td, ok := session["turn_detection"].(map[string]any); ok {
			if _, ok := td["prefix_padding_ms"]; ok {
				ss.error(ctx, "invalid_request_error", "", "Specifying `session.turn_detection.prefix_padding_ms` is not supported. The server either does not support this field or it is not configurable.", "")
			}
		}
		transcription = session["input_audio_transcription"]
		vad, hasVAD = session["turn_detection"]
	case BetaTranscription:
		if f, ok := session["input_audio_format"]; ok && f != "pcm16" {
			ss.error(ctx, "invalid_request_error", "invalid_value", "Invalid 'session.input_audio_format': openaitest takes pcm16.", eventID)
			return false
		}
		transcription = session["input_audio_transcription"]
		vad, hasVAD = session["turn_detection"]
	}
	if t, ok := transcription.(map[string]any); ok {
		if l, ok := t["language"].(string); ok && !iso6391.MatchString(l) {
			ss.error(ctx, "invalid_request_error", "invalid_language_format",
				fmt.Sprintf("Invalid language '%s'. Language parameter must be specified in ISO-639-1 format.", l), eventID)
			return false
		}
	}
	ss.s.mu.Lock()
	defer ss.s.mu.Unlock()
	if t, ok := transcription.(map[string]any); ok {
		if m, ok := t["model"].(string); ok {
			ss.rec.Model = m
		}
		if l, ok := t["language"].(string); ok {
			ss.rec.Language = l
		}
	}
	if hasVAD {
		td, _ := vad.(map[string]any)
		ss.rec.VAD = td != nil
		if ms, ok := td["silence_duration_ms"].(float64); ok {
			ss.rec.Silence = time.Duration(ms) * time.Millisecond
		}
	}
	return true
}

// listen buffers pcm and, with the VAD on, commits a segment after each
// pause of silence that follows speech.
func (ss *rtSession) listen(ctx context.Context, pcm []int16, vad bool, silence time.Duration) {
	const frame = RealtimeRate / 50
	for len(pcm) > 0 {
		// Frames are counted from the buffer's start, so a frame split
		// between appends is judged whole.
		n := min(len(pcm), frame-len(ss.buf)%frame)
		ss.buf = append(ss.buf, pcm[:n]...)
		pcm = pcm[n:]
		if !vad || len(ss.buf)%frame != 0 {
			continue
		}
		loud := rms(ss.buf[len(ss.buf)-frame:]) > vadLevel
		ms := len(ss.buf) * 1000 / RealtimeRate
		switch {
		case loud && !ss.inSpeech:
			ss.inSpeech, ss.silent = true, 0
			ss.send(ctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": ms - 20, "item_id": ss.nextID()})
		case loud:
			ss.silent = 0
		case ss.inSpeech:
			ss.silent += 20 * time.Millisecond
			if ss.silent >= silence {
				ss.send(ctx, map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": ms, "item_id": ss.nextID()})
				ss.commit(ctx)
			}
		}
	}
}

func (ss *rtSession) nextID() string { return fmt.Sprintf("item_%d", ss.items+1) }

// commit makes the buffer an item and queues it for transcription.
func (ss *rtSession) commit(ctx context.Context) {
	id := ss.nextID()
	prev := any(nil)
	if ss.items > 0 {
		prev = fmt.Sprintf("item_%d", ss.items)
	}
	ss.items++
	ss.s.mu.Lock()
	ss.rec.Items++
	ss.s.mu.Unlock()
	ss.send(ctx, map[string]any{"type": "input_audio_buffer.committed", "item_id": id, "previous_item_id": prev})
	ss.queue <- item{id: id, samples: ss.buf}
	ss.buf, ss.inSpeech, ss.silent = nil, false, 0
}

// transcribe answers the committed items in order from the script: the
// text word by word in deltas, then completed; or failed.
func (ss *rtSession) transcribe(ctx context.Context) {
	for it := range ss.queue {
		ss.s.mu.Lock()
		req := Request{Method: http.MethodGet, Path: "/v1/realtime", Header: ss.header, Model: ss.rec.Model, Language: ss.rec.Language,
			Rate: RealtimeRate, Channels: 1, Samples: it.samples}
		ss.s.requests = append(ss.s.requests, req)
		ss.s.mu.Unlock()
		reply := ss.s.script(req)
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-ctx.Done():
				return
			}
		}
		if reply.Hang {
			<-ctx.Done()
			return
		}
		if reply.Status != 0 && reply.Status != http.StatusOK {
			ss.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.failed", "item_id": it.id, "content_index": 0,
				"error": map[string]any{"type": "transcription_error", "code": "audio_unintelligible", "message": reply.Message}})
			continue
		}
		for i, w := range strings.Fields(reply.Text) {
			if i > 0 {
				w = " " + w
			}
			ss.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.delta", "item_id": it.id, "content_index": 0, "delta": w})
		}
		ss.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": it.id, "content_index": 0,
			"transcript": reply.Text, "usage": map[string]any{"type": "duration", "seconds": float64(len(it.samples)) / RealtimeRate}})
	}
}

func rms(pcm []int16) float64 {
	var sum float64
	for _, x := range pcm {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum / float64(max(len(pcm), 1)))
}
