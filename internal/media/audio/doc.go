// Package audio is Parley's signal-processing toolbox for call audio: mono
// 16-bit PCM as media carries it. It owns the codecs, G.711 (μ-law and
// A-law, 8 kHz) and G.722 (64 kbit/s sub-band ADPCM, 16 kHz), sample-rate
// conversion between the codecs' rates and the rates speech engines want
// (FIR filters; an exact 3:1 decimator for 24 kHz voices), the high-pass
// biquad the detectors share (its memory flushed before it can go
// subnormal on digital silence), tone generation (test tones, silence,
// hold music) and tone detection (Goertzel), and WAV files: streaming
// stereo call recordings out, and reading 16-bit PCM WAV back in.
//
// Everything here is plain computation on slices, with no goroutines and no
// I/O beyond the io.Reader or io.WriteSeeker a caller passes in.
package audio
