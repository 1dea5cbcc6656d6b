package openaitest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// post sends body to the server's speech endpoint.
func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/audio/speech", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func samples(b []byte) []int16 {
	out := make([]int16, len(b)/2)
	for i := range out {
		out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

func TestSpeechStream(t *testing.T) {
	pcm := []int16{0, 1, -1, 32767, -32768, 258, -258}
	s := New(t, func(Request) Reply { return Reply{PCM: pcm, ChunkBytes: 3, ChunkGap: time.Millisecond} })
	resp := post(t, s, `{"model":"gpt-4o-mini-tts","input":"Hi","voice":"nova","response_format":"pcm","speed":1.5,"instructions":"calm"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/pcm" || resp.ContentLength != -1 {
		t.Fatalf("%d %q length %d, want a 200 audio/pcm stream", resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	// Chunks of 3 bytes arrive one by one.
	first := make([]byte, 10)
	if n, err := resp.Body.Read(first); n != 3 || err != nil {
		t.Errorf("first read: %d bytes, %v; want the 3-byte chunk", n, err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := samples(append(first[:3], rest...)); !slices.Equal(got, pcm) {
		t.Errorf("samples %v, want %v", got, pcm)
	}
	r := s.Requests()[0]
	if r.Model != "gpt-4o-mini-tts" || r.Input != "Hi" || r.Voice != "nova" || r.ResponseFormat != "pcm" ||
		r.Speed == nil || *r.Speed != 1.5 || r.Instructions != "calm" || r.Header.Get("Authorization") != "Bearer k" ||
		r.Method != "POST" || r.Path != "/v1/audio/speech" || len(r.Body) != 6 {
		t.Errorf("request = %+v", r)
	}
	if s.Done() != 1 {
		t.Errorf("Done = %d", s.Done())
	}
}

func TestDefaultSpeech(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{} })
	resp := post(t, s, `{"model":"m","input":"Hello, world","voice":"alloy","response_format":"pcm"}`)
	b, _ := io.ReadAll(resp.Body)
	if got, want := samples(b), Speech("Hello, world"); !slices.Equal(got, want) || len(want) != Rate*600/1000 {
		t.Errorf("%d samples, want Speech's %d (600 ms)", len(got), len(want))
	}
}

func TestValidation(t *testing.T) {
	s := New(t, func(Request) Reply { t.Error("script called for an invalid request"); return Reply{} })
	for _, tc := range []struct{ body, param string }{
		{`{"input":"x","voice":"alloy","response_format":"pcm"}`, "model"},
		{`{"model":"m","voice":"alloy","response_format":"pcm"}`, "input"},
		{`{"model":"m","input":"` + strings.Repeat("ä", 4097) + `","voice":"alloy","response_format":"pcm"}`, "input"},
		{`{"model":"m","input":"x","voice":"bob","response_format":"pcm"}`, "voice"},
		{`{"model":"m","input":"x","voice":{"id":"voice_1"},"response_format":"pcm"}`, "voice"},
		{`{"model":"m","input":"x","voice":"alloy"}`, "response_format"},
		{`{"model":"m","input":"x","voice":"alloy","response_format":"mp3"}`, "response_format"},
		{`{"model":"m","input":"x","voice":"alloy","response_format":"pcm","speed":4.5}`, "speed"},
	} {
		resp := post(t, s, tc.body)
		var e struct {
			Error struct {
				Message string
				Param   *string
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 400 || e.Error.Param == nil || *e.Error.Param != tc.param || e.Error.Message == "" {
			t.Errorf("%.80s: %d %+v", tc.body, resp.StatusCode, e)
		}
	}
	resp := post(t, s, `{"model":"m","input":"x","voice":"bob","response_format":"pcm"}`)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "Invalid value: 'bob'. Supported values are: 'alloy'") {
		t.Errorf("unknown voice: %s", b)
	}
	resp = post(t, s, `not json`)
	if resp.StatusCode != 400 {
		t.Errorf("not JSON: %d", resp.StatusCode)
	}
}

func TestErrorStatus(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{Status: 503, Message: "overloaded"} })
	resp := post(t, s, `{"model":"m","input":"x","voice":"alloy","response_format":"pcm"}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || !strings.Contains(string(b), `"message":"overloaded"`) || !strings.Contains(string(b), `"server_error"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestHangHeadersOnly(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{Hang: true} })
	resp := post(t, s, `{"model":"m","input":"x","voice":"alloy","response_format":"pcm"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := make(chan int, 1)
	go func() {
		n, _ := resp.Body.Read(make([]byte, 8))
		got <- n
	}()
	select {
	case n := <-got:
		t.Errorf("read %d bytes from a hanging answer", n)
	case <-time.After(100 * time.Millisecond):
	}
	resp.Body.Close()
	<-got
}

func TestSpeechWAV(t *testing.T) {
	pcm := []int16{1, -2, 3}
	s := New(t, func(r Request) Reply { return Reply{PCM: pcm, Rate: *r.SampleRate / 2, ChunkBytes: 7} })
	resp := post(t, s, `{"model":"m","input":"Hi","voice":"alloy","response_format":"wav","sample_rate":44100}`)
	b, _ := io.ReadAll(resp.Body)
	w, err := audio.ReadWAV(bytes.NewReader(b))
	if resp.Header.Get("Content-Type") != "audio/wav" || err != nil || w.Rate != 22050 || !slices.Equal(w.Channels[0], pcm) {
		t.Errorf("%q: %+v, %v; want a 22050 Hz WAV of %v", resp.Header.Get("Content-Type"), w, err, pcm)
	}
	if binary.LittleEndian.Uint32(b[4:]) != 0xFFFFFFFF || !bytes.Contains(b, []byte("LIST")) {
		t.Errorf("header %q: want a streaming encoder's", b[:min(len(b), 80)])
	}
	if r := s.Requests()[0]; r.SampleRate == nil || *r.SampleRate != 44100 {
		t.Errorf("sample_rate %v", r.SampleRate)
	}
	// A server that ignores the format asked for.
	s = New(t, func(Request) Reply { return Reply{PCM: pcm, Format: FormatPCM} })
	resp = post(t, s, `{"model":"m","input":"Hi","voice":"alloy","response_format":"wav"}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Type") != "audio/pcm" || !slices.Equal(samples(b), pcm) {
		t.Errorf("%q %v", resp.Header.Get("Content-Type"), samples(b))
	}
}

func TestStrict(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{} }, Strict())
	resp := post(t, s, `{"model":"m","input":"Hi","voice":"alloy","response_format":"wav","sample_rate":8000}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Unrecognized request argument supplied: sample_rate") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
	if resp := post(t, s, `{"model":"m","input":"Hi","voice":"alloy","response_format":"wav","speed":1,"instructions":"x"}`); resp.StatusCode != 200 {
		t.Errorf("the API's own fields: %d", resp.StatusCode)
	}
}
