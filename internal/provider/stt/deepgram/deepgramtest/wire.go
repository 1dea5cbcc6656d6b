package deepgramtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode"
)

// Model identity the fake reports in Results and Metadata.
const (
	modelUUID    = "00000000-0000-4000-8000-000000000003"
	modelVersion = "2025-01-01.0"
)

// segment is one final result: a sentence of the transcript and the
// stretch of audio it is said to cover (seconds).
type segment struct {
	text       string
	start, end float64
}

// segments cuts transcript after each sentence end (. ? !) the way
// Deepgram finalizes at pauses, spreading the audio's duration over the
// pieces by word count. Joined with single spaces they give the transcript
// back, runs of white space collapsed.
func segments(transcript string, duration float64) []segment {
	words := strings.Fields(transcript)
	var out []segment
	start := 0
	for i, w := range words {
		if i == len(words)-1 || strings.ContainsAny(w[len(w)-1:], ".?!") {
			out = append(out, segment{text: strings.Join(words[start:i+1], " ")})
			start = i + 1
		}
	}
	at := 0.0
	for i := range out {
		n := len(strings.Fields(out[i].text))
		out[i].start = at
		at += duration * float64(n) / float64(len(words))
		out[i].end = at
	}
	return out
}

// resultsMessage is a Results message for seg in Deepgram's shape. An
// interim result (final false) says only the first half of the words.
func resultsMessage(seg segment, final, fromFinalize bool, requestID, model string) []byte {
	words := strings.Fields(seg.text)
	if !final && len(words) > 1 {
		words = words[:(len(words)+1)/2]
	}
	type word struct {
		Word           string  `json:"word"`
		Start          float64 `json:"start"`
		End            float64 `json:"end"`
		Confidence     float64 `json:"confidence"`
		PunctuatedWord string  `json:"punctuated_word"`
	}
	ws := make([]word, 0, len(words))
	step := 0.0
	if len(words) > 0 {
		step = (seg.end - seg.start) / float64(len(words))
	}
	for i, w := range words {
		ws = append(ws, word{
			Word:           strings.ToLower(strings.TrimFunc(w, unicode.IsPunct)),
			Start:          round(seg.start + float64(i)*step),
			End:            round(seg.start + float64(i+1)*step),
			Confidence:     0.98,
			PunctuatedWord: w,
		})
	}
	m := map[string]any{
		"type":          "Results",
		"channel_index": []int{0, 1},
		"start":         round(seg.start),
		"duration":      round(seg.end - seg.start),
		"is_final":      final,
		"speech_final":  final && seg.text != "",
		"from_finalize": fromFinalize,
		"channel": map[string]any{
			"alternatives": []any{map[string]any{
				"transcript": strings.Join(words, " "),
				"confidence": 0.98,
				"words":      ws,
			}},
		},
		"metadata": map[string]any{
			"request_id": requestID,
			"model_info": map[string]any{"name": "general-" + model, "version": modelVersion, "arch": model},
			"model_uuid": modelUUID,
		},
	}
	b, _ := json.Marshal(m)
	return b
}

// metadataMessage is the summary Deepgram sends after CloseStream.
func metadataMessage(requestID, model string, audio []byte, duration float64) []byte {
	sum := sha256.Sum256(audio)
	b, _ := json.Marshal(map[string]any{
		"type":            "Metadata",
		"transaction_key": "deprecated",
		"request_id":      requestID,
		"sha256":          hex.EncodeToString(sum[:]),
		"created":         time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"duration":        round(duration),
		"channels":        1,
		"models":          []string{modelUUID},
		"model_info": map[string]any{
			modelUUID: map[string]any{"name": "general-" + model, "version": modelVersion, "arch": model},
		},
	})
	return b
}

// errorBody is Deepgram's JSON body of a refused request.
func errorBody(code, msg, requestID string) []byte {
	b, _ := json.Marshal(map[string]string{"err_code": code, "err_msg": msg, "request_id": requestID})
	return b
}

// messageType is the "type" of a client's text message, or the whole
// text when it is not a JSON object with a type.
func messageType(data []byte) string {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &v) != nil || v.Type == "" {
		return string(data)
	}
	return v.Type
}

func round(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}
