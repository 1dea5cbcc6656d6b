package openai

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/openai/openaitest"
)

// frequency estimates the pitch of a steady tone from its zero crossings.
func frequency(pcm []int16, rate int) float64 {
	crossings := 0
	for i := 1; i < len(pcm); i++ {
		if (pcm[i-1] < 0) != (pcm[i] < 0) {
			crossings++
		}
	}
	return float64(crossings) / 2 / (float64(len(pcm)) / float64(rate))
}

// checkTone asserts that pcm at rate is one second of a 440 Hz tone: the
// right length, the right pitch by zero crossings and by Goertzel, and
// not the pitch a wrong rate would give.
func checkTone(t *testing.T, what string, pcm []int16, rate, served int) {
	t.Helper()
	if d := len(pcm) - rate; d < -rate/50 || d > rate/50 {
		t.Errorf("%s: %d samples at %d Hz, want one second within 20 ms", what, len(pcm), rate)
	}
	steady := pcm[rate/10:]
	if f := frequency(steady, rate); math.Abs(f-440) > 4.4 {
		t.Errorf("%s: pitch %.1f Hz by zero crossings, want 440 Hz", what, f)
	}
	if share := audio.ToneShare(steady, rate, 440); share < 0.95 {
		t.Errorf("%s: 440 Hz share %.3f", what, share)
	}
	if wrong := 440 * float64(Rate) / float64(served); served != Rate && audio.DetectTone(steady, rate, wrong) {
		t.Errorf("%s: the tone plays at %.0f Hz, as if %d Hz audio were %d Hz", what, wrong, served, Rate)
	}
}

// TestWAVRateFromHeader: a server that answers 22,050 Hz (a Piper voice;
// Kokoro-FastAPI ignores sample_rate too) is played at the right speed at
// every line rate, whatever was asked for.
func TestWAVRateFromHeader(t *testing.T) {
	for _, served := range []int{22050, 16000, 24000, 44100} {
		s, server := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, served, time.Second, 0.5), Rate: served, ChunkBytes: 1001}))
		for _, rate := range []int{8000, 16000, 48000} {
			_, pcm, _, err := synthesize(t, s, hello, rate)
			if err != nil {
				t.Fatalf("%d Hz served, %d Hz line: %v", served, rate, err)
			}
			checkTone(t, fmt.Sprintf("%d Hz served, %d Hz line", served, rate), pcm, rate, served)
		}
		for i, r := range server.Requests() {
			if r.ResponseFormat != "wav" || r.SampleRate == nil || *r.SampleRate != []int{8000, 16000, 48000}[i] {
				t.Errorf("%d Hz served: request %d asked %q at %v", served, i, r.ResponseFormat, r.SampleRate)
			}
		}
	}
}

// TestSampleRateHonoured: speaches resamples to the sample_rate asked for.
func TestSampleRateHonoured(t *testing.T) {
	s, _ := setup(t, func(r openaitest.Request) openaitest.Reply {
		return openaitest.Reply{PCM: audio.Tone(440, *r.SampleRate, time.Second, 0.5), Rate: *r.SampleRate}
	})
	_, pcm, _, err := synthesize(t, s, hello, 16000)
	if err != nil {
		t.Fatal(err)
	}
	checkTone(t, "16 kHz asked and served", pcm, 16000, 16000)
}

// TestSampleRateRefused: a strict server refuses sample_rate; the request
// goes again without it, and later ones never carry it.
func TestSampleRateRefused(t *testing.T) {
	strict := openaitest.New(t, reply(openaitest.Reply{PCM: audio.Tone(440, 22050, time.Second, 0.5), Rate: 22050}), openaitest.Strict())
	s := New(Config{BaseURL: strict.URL, HTTPClient: testHTTPClient(t)})
	for range 2 {
		_, pcm, _, err := synthesize(t, s, hello, 8000)
		if err != nil {
			t.Fatal(err)
		}
		checkTone(t, "strict server", pcm, 8000, 22050)
	}
	reqs := strict.Requests()
	if len(reqs) != 3 || reqs[0].SampleRate == nil || reqs[1].SampleRate != nil || reqs[2].SampleRate != nil {
		t.Errorf("%d requests; want the first with sample_rate, the next two without", len(reqs))
	}
}

// TestPCMFormat: raw samples at the configured rate, asked for; at OpenAI's
// 24 kHz, not asked, when no rate is configured.
func TestPCMFormat(t *testing.T) {
	s, server := setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 22050, time.Second, 0.5)}),
		func(c *Config) { c.Format, c.PCMRate = FormatPCM, 22050 })
	_, pcm, _, err := synthesize(t, s, hello, 8000)
	if err != nil {
		t.Fatal(err)
	}
	checkTone(t, "pcm at 22050 Hz", pcm, 8000, 22050)
	if r := server.Requests()[0]; r.ResponseFormat != "pcm" || r.SampleRate == nil || *r.SampleRate != 22050 {
		t.Errorf("asked %q at %v", r.ResponseFormat, r.SampleRate)
	}

	s, server = setup(t, reply(openaitest.Reply{PCM: audio.Tone(440, 24000, time.Second, 0.5)}),
		func(c *Config) { c.Format = FormatPCM })
	_, pcm, _, err = synthesize(t, s, hello, 16000)
	if err != nil {
		t.Fatal(err)
	}
	checkTone(t, "pcm at 24 kHz", pcm, 16000, 24000)
	if r := server.Requests()[0]; r.ResponseFormat != "pcm" || r.SampleRate != nil {
		t.Errorf("asked %q at %v, want OpenAI's pcm without a rate", r.ResponseFormat, r.SampleRate)
	}
}

// TestContentTypeRate: raw samples whose Content-Type names their rate
// are read at it, even when a WAV was asked for.
func TestContentTypeRate(t *testing.T) {
	tone := audio.Tone(440, 16000, time.Second, 0.5)
	body := make([]byte, 0, 2*len(tone))
	for _, x := range tone {
		body = binary.LittleEndian.AppendUint16(body, uint16(x))
	}
	s := New(Config{BaseURL: newRawServer(t, http.StatusOK, "audio/pcm;rate=16000;channels=1", string(body)), HTTPClient: testHTTPClient(t)})
	_, pcm, _, err := synthesize(t, s, hello, 8000)
	if err != nil {
		t.Fatal(err)
	}
	checkTone(t, "rate in the Content-Type", pcm, 8000, 16000)
}

// TestStereoFloatWAV: 32-bit float stereo is mixed down and scaled.
func TestStereoFloatWAV(t *testing.T) {
	tone := audio.Tone(440, 44100, time.Second, 0.5)
	le := binary.LittleEndian
	head := []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00")
	head = le.AppendUint16(head, 3)
	head = le.AppendUint16(head, 2)
	head = le.AppendUint32(head, 44100)
	head = le.AppendUint32(head, 44100*8)
	head = le.AppendUint16(head, 8)
	head = le.AppendUint16(head, 32)
	head = append(head, "data"...)
	head = le.AppendUint32(head, uint32(8*len(tone)))
	for _, x := range tone {
		f := math.Float32bits(float32(x) / 32767)
		head = le.AppendUint32(le.AppendUint32(head, f), f)
	}
	head = append(head, "LISTtrailing chunk, not samples"...)
	s := New(Config{BaseURL: newRawServer(t, http.StatusOK, "audio/wav", string(head)), HTTPClient: testHTTPClient(t)})
	_, pcm, _, err := synthesize(t, s, hello, 16000)
	if err != nil {
		t.Fatal(err)
	}
	checkTone(t, "float stereo", pcm, 16000, 44100)
}

// TestRateUnknown: what cannot be played at a known rate, or at all, is
// refused with an error that says why; nothing is handed out.
func TestRateUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		format                  string
		want                    string
	}{
		{"raw for a WAV", "audio/pcm", "\x01\x00\x02\x00", "", "--tts-format pcm --tts-sample-rate"},
		{"octets for a WAV", "", "\x01\x00\x02\x00", "", "without a header"},
		{"wav without header", "audio/wav", "\x01\x00\x02\x00", FormatPCM, "does not start with a WAV header"},
		{"mp3", "audio/mpeg", "ID3\x04", "", "audio/mpeg, which Parley cannot decode"},
		{"8-bit WAV", "audio/wav", "RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x40\x1f\x00\x00\x01\x00\x08\x00data\x04\x00\x00\x00\x80\x80\x80\x80", "",
			"8-bit samples"},
		{"cut header", "audio/wav", "RIFF\x00\x00\x00\x00WAVEfm", "", "WAV header"},
		{"absurd rate", "audio/pcm; rate=0", "\x01\x00", FormatPCM, "0 Hz"},
	} {
		s := New(Config{BaseURL: newRawServer(t, http.StatusOK, tc.contentType, tc.body), HTTPClient: testHTTPClient(t), Format: tc.format})
		_, pcm, _, err := synthesize(t, s, hello, 8000)
		if !errors.Is(err, tts.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) || len(pcm) != 0 {
			t.Errorf("%s: %v with %d samples, want ErrUnavailable saying %q", tc.name, err, len(pcm), tc.want)
		}
	}
	// The fake, ignoring the WAV asked for.
	s, _ := setup(t, reply(openaitest.Reply{Format: openaitest.FormatPCM}))
	if _, _, _, err := synthesize(t, s, hello, 8000); !errors.Is(err, tts.ErrUnavailable) || !strings.Contains(err.Error(), "audio/pcm without a header") {
		t.Errorf("format ignored: %v", err)
	}
}
