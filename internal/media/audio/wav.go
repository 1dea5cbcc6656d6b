package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// WAV is decoded 16-bit PCM: the sample rate and one slice of samples per
// channel (Channels[0] is the left channel of a stereo file).
type WAV struct {
	Rate     int
	Channels [][]int16
}

// Duration is how long the audio lasts.
func (w WAV) Duration() time.Duration {
	if w.Rate <= 0 || len(w.Channels) == 0 {
		return 0
	}
	n := int64(len(w.Channels[0]))
	rate := int64(w.Rate)
	return time.Duration(n/rate)*time.Second + time.Duration(n%rate)*time.Second/time.Duration(rate)
}

const (
	wavFormatPCM        = 1
	wavFormatExtensible = 0xFFFE
	// wavFmtMax is how much of a fmt chunk is parsed; the rest is skipped,
	// so a hostile size costs nothing.
	wavFmtMax = 64
)

var (
	errNotWAV      = errors.New("audio: not a RIFF WAVE file")
	errNoWAVData   = errors.New("audio: WAV file has no data chunk")
	errWAVNotPCM16 = errors.New("audio: WAV file is not 16-bit PCM")
)

// ReadWAV reads a 16-bit PCM WAV file with any number of channels at any
// rate (WAVE_FORMAT_PCM, or WAVE_FORMAT_EXTENSIBLE with a PCM subformat).
// Unknown chunks are skipped. It is lenient where streaming writers and
// crashes leave marks: the RIFF size is ignored, and a data chunk that claims
// more than the file holds yields the whole frames that are there. Sizes in
// the file are never trusted for allocation: memory is bounded by the bytes
// actually read.
func ReadWAV(r io.Reader) (WAV, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return WAV{}, fmt.Errorf("%w: %w", errNotWAV, err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return WAV{}, errNotWAV
	}
	var (
		haveFmt  bool
		channels int
		rate     int
	)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return WAV{}, errNoWAVData
			}
			return WAV{}, err
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if size < 16 {
				return WAV{}, fmt.Errorf("audio: WAV fmt chunk of %d bytes is too short", size)
			}
			buf := make([]byte, min(size, wavFmtMax))
			if _, err := io.ReadFull(r, buf); err != nil {
				return WAV{}, fmt.Errorf("audio: reading WAV fmt chunk: %w", err)
			}
			var err error
			if channels, rate, err = parseFmt(buf); err != nil {
				return WAV{}, err
			}
			haveFmt = true
			if err := skip(r, size-int64(len(buf))+size%2); err != nil {
				return WAV{}, err
			}
		case "data":
			if !haveFmt {
				return WAV{}, errors.New("audio: WAV data chunk comes before fmt")
			}
			return readData(r, size, channels, rate)
		default:
			if err := skip(r, size+size%2); err != nil {
				return WAV{}, err
			}
		}
	}
}

func parseFmt(b []byte) (channels, rate int, err error) {
	le := binary.LittleEndian
	format := le.Uint16(b[0:2])
	channels = int(le.Uint16(b[2:4]))
	rate = int(le.Uint32(b[4:8]))
	blockAlign := int(le.Uint16(b[12:14]))
	bitsPerSample := le.Uint16(b[14:16])
	if format == wavFormatExtensible {
		// cbSize, valid bits, channel mask, then the subformat GUID whose
		// first two bytes are the real format code.
		if len(b) < 40 || le.Uint16(b[18:20]) != 16 {
			return 0, 0, errWAVNotPCM16
		}
		format = le.Uint16(b[24:26])
	}
	switch {
	case format != wavFormatPCM || bitsPerSample != 16:
		return 0, 0, errWAVNotPCM16
	case channels == 0:
		return 0, 0, errors.New("audio: WAV file has no channels")
	case rate == 0 || rate > 1<<24:
		return 0, 0, fmt.Errorf("audio: WAV sample rate %d is not usable", rate)
	case blockAlign != 2*channels:
		return 0, 0, fmt.Errorf("audio: WAV block align %d does not match %d channels", blockAlign, channels)
	}
	return channels, rate, nil
}

// readData reads up to size bytes of interleaved samples, however many are
// really there, and splits them into channels.
func readData(r io.Reader, size int64, channels, rate int) (WAV, error) {
	var data bytes.Buffer
	if _, err := data.ReadFrom(io.LimitReader(r, size)); err != nil {
		return WAV{}, fmt.Errorf("audio: reading WAV data: %w", err)
	}
	b := data.Bytes()
	frames := len(b) / (2 * channels)
	all := make([]int16, frames*channels)
	w := WAV{Rate: rate, Channels: make([][]int16, channels)}
	for c := range channels {
		w.Channels[c] = all[c*frames : (c+1)*frames : (c+1)*frames]
	}
	for f := range frames {
		for c := range channels {
			i := 2 * (f*channels + c)
			w.Channels[c][f] = int16(binary.LittleEndian.Uint16(b[i:]))
		}
	}
	return w, nil
}

// skip discards n bytes of r; running out of input is an error.
func skip(r io.Reader, n int64) error {
	if n <= 0 {
		return nil
	}
	got, err := io.CopyN(io.Discard, r, n)
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("audio: WAV chunk cut short: %w", err)
	}
	return nil
}
