package openaitest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// wavBytes is pcm as a mono 16-bit WAV at rate, written here independently
// of the client's own writer.
func wavBytes(pcm []int16, rate int) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	_ = binary.Write(&b, le, uint32(36+2*len(pcm)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		_ = binary.Write(&b, le, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, le, uint32(2*len(pcm)))
	_ = binary.Write(&b, le, pcm)
	return b.Bytes()
}

// post sends a form with the file and fields to the server.
func post(t *testing.T, s *Server, file []byte, fields ...string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if file != nil {
		part, _ := w.CreateFormFile("file", "a.wav")
		_, _ = part.Write(file)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		_ = w.WriteField(fields[i], fields[i+1])
	}
	_ = w.Close()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/audio/transcriptions", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type errorBody struct {
	Error struct {
		Message, Type string
		Param, Code   *string
	}
}

func decodeError(t *testing.T, resp *http.Response) errorBody {
	t.Helper()
	var e errorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestTranscribeJSON(t *testing.T) {
	s := New(t, func(r Request) Reply { return Reply{Text: "hello there"} })
	pcm := []int16{0, 1, -1, 32767, -32768, 1234}
	resp := post(t, s, wavBytes(pcm, 8000), "model", "m1", "language", "de", "response_format", "json")
	var body struct {
		Text  string
		Usage map[string]any
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || body.Text != "hello there" || body.Usage["type"] != "tokens" {
		t.Errorf("%d %+v", resp.StatusCode, body)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "m1" || r.Language != "de" || r.ResponseFormat != "json" || r.Filename != "a.wav" ||
		r.Rate != 8000 || r.Channels != 1 || !slicesEqual(r.Samples, pcm) || r.Method != "POST" || r.Path != "/v1/audio/transcriptions" {
		t.Errorf("request = %+v", r)
	}
}

func slicesEqual(a, b []int16) bool {
	return len(a) == len(b) && string(binaryBytes(a)) == string(binaryBytes(b))
}

func binaryBytes(p []int16) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, p)
	return b.Bytes()
}

func TestTranscribeText(t *testing.T) {
	s := New(t, func(r Request) Reply { return Reply{Text: "plain"} })
	resp := post(t, s, wavBytes([]int16{1}, 16000), "model", "m", "response_format", "text")
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "plain\n" {
		t.Errorf("body = %q", b)
	}
}

func TestValidation(t *testing.T) {
	s := New(t, func(r Request) Reply { t.Error("script called for an invalid request"); return Reply{} })
	good := wavBytes([]int16{1, 2}, 16000)
	for _, tc := range []struct {
		name   string
		file   []byte
		fields []string
		param  string
	}{
		{"no model", good, nil, "model"},
		{"no file", nil, []string{"model", "m"}, "file"},
		{"not a WAV", []byte("ID3 mp3 data"), []string{"model", "m"}, "file"},
		{"BCP 47 language", good, []string{"model", "m", "language", "en-US"}, "language"},
		{"three letters", good, []string{"model", "m", "language", "fil"}, "language"},
		{"format", good, []string{"model", "m", "response_format", "srt2"}, "response_format"},
	} {
		resp := post(t, s, tc.file, tc.fields...)
		e := decodeError(t, resp)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != tc.param || e.Error.Message == "" {
			t.Errorf("%s: %d %+v", tc.name, resp.StatusCode, e)
		}
	}
	if n := len(s.Requests()); n != 6 {
		t.Errorf("%d requests recorded, want all 6", n)
	}
}

func TestErrorStatus(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{Status: http.StatusTooManyRequests, Message: "slow down"} })
	resp := post(t, s, wavBytes([]int16{1}, 8000), "model", "m")
	e := decodeError(t, resp)
	if resp.StatusCode != 429 || e.Error.Message != "slow down" || e.Error.Type != "rate_limit_exceeded" {
		t.Errorf("%d %+v", resp.StatusCode, e)
	}
}

func TestUnknownPath(t *testing.T) {
	s := New(t, func(Request) Reply { t.Error("script called"); return Reply{} })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Post(s.URL+"/audio/translations", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d", resp.StatusCode)
	}
}
