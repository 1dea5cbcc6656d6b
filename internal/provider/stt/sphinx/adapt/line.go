package main

import (
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
)

// The audio a transform is trained and measured on takes the runtime's
// path: the speaker's clip is resampled to the narrowband line's 8 kHz,
// G.711 μ-law encoded and decoded (what a PCMU leg delivers), padded
// with the 300 ms of silence either side the recognizer adds, and then
// conditioned by the recognizer's own sphinx.Condition (or, for the
// comparison without the band fill, only upsampled to 16 kHz).

// lineRate is a G.711 leg's rate.
const lineRate = 8000

// band says how the 8 kHz line's audio is brought to 16 kHz.
type band string

const (
	bandFill  band = "fill"  // sphinx.Condition: level, band fill, noise floor
	bandPlain band = "plain" // upsampling only
)

// overG711 returns the clip (pcm at rate) as a recognizer hears it after
// a G.711 μ-law leg: conditioned 16 kHz PCM.
func overG711(pcm []int16, rate int, b band) []int16 {
	narrow := pcm
	if rate != lineRate {
		narrow = audio.NewResampler(rate, lineRate).Process(nil, pcm)
	}
	heard := audio.DecodeULaw(nil, audio.EncodeULaw(nil, narrow))
	pad := make([]int16, lineRate*3/10)
	padded := append(append(append(make([]int16, 0, len(heard)+2*len(pad)), pad...), heard...), pad...)
	if b == bandPlain {
		return audio.NewResampler(lineRate, sphinx.ConditionedRate).Process(nil, padded)
	}
	return sphinx.Condition(padded, lineRate)
}
