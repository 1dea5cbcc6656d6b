// Package audio is Parley's signal-processing toolbox for call audio: mono
// 16-bit PCM as media carries it. It owns the G.711 codecs (μ-law and
// A-law), sample-rate conversion between the phone network's 8 kHz and the
// rates speech engines want, tone generation (test tones, silence, hold
// music) and tone detection (Goertzel), and WAV files: streaming stereo call
// recordings out, and reading 16-bit PCM WAV back in.
//
// Everything here is plain computation on slices, with no goroutines and no
// I/O beyond the io.Reader or io.WriteSeeker a caller passes in.
package audio
