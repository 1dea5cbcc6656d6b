package bench

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/siptest"
)

// requireTool skips when a command is missing, or fails under CI=true.
func requireTool(tb testing.TB, command, pkg string) {
	tb.Helper()
	if _, err := exec.LookPath(command); err == nil {
		return
	}
	msg := command + " is not installed: install the Debian package " + pkg + " (make deps)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// callerScript is what every caller says, in a loop, with the silences
// that shape the conversation: a long pause lets the agent answer in full;
// a short one (shorter than the agent's reply) has the caller talk over
// the agent: a barge-in. The agent's replies (llmScript, and the TTS fake's
// 50 ms per character) last about 3 s.
var callerScript = []struct {
	text  string
	after time.Duration // silence after the sentence
}{
	{"", 2500 * time.Millisecond}, // the greeting plays
	{"Do you have a table by the window?", 1200 * time.Millisecond},
	{"I would like to book a table for four people tonight.", 4500 * time.Millisecond},
	{"Actually, we would prefer somewhere quiet, please.", 2000 * time.Millisecond},
}

// speechWAV synthesizes callerScript with espeak-ng (through Parley's own
// espeak client, at 8 kHz) into the μ-law WAV uac_talk streams, and says
// how long one loop lasts and how much of it is speech.
func speechWAV(tb testing.TB) (wav []byte, loop, speech time.Duration) {
	tb.Helper()
	requireTool(tb, "espeak-ng", "espeak-ng")
	const rate = 8000
	synth := espeak.New(espeak.Config{})
	var pcm []int16
	for _, line := range callerScript {
		if line.text != "" {
			n := len(pcm)
			_, err := synth.Synthesize(context.Background(), tts.Request{Text: line.text, Language: "en"}, rate, func(p []int16) error {
				pcm = append(pcm, p...)
				return nil
			})
			if err != nil {
				tb.Fatalf("espeak-ng: %v", err)
			}
			speech += time.Duration(len(pcm)-n) * time.Second / rate
		}
		pcm = append(pcm, audio.Silence(rate, line.after)...)
	}
	return siptest.ULawWAV(pcm), time.Duration(len(pcm)) * time.Second / rate, speech
}
