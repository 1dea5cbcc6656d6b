package openai

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// wavFormat is what a WAV header says of the samples after it.
type wavFormat struct {
	rate     int
	channels int
	bytes    int   // per sample of one channel: 2 (16-bit) or 4 (32-bit float)
	float    bool  // IEEE float samples (else signed integers)
	data     int64 // bytes of samples the data chunk holds; -1: up to the end of the answer
}

// WAV format codes.
const (
	wavPCM        = 1
	wavFloat      = 3
	wavExtensible = 0xFFFE
)

// fmtMax is how much of a fmt chunk is read; the rest is skipped.
const fmtMax = 64

// maxChannels bounds the channels taken: TTS is mono, stereo at most.
const maxChannels = 8

// wavError is a header Parley cannot read (not a cut-off stream).
type wavError string

func (e wavError) Error() string { return string(e) }

func badWAV(format string, args ...any) error { return wavError(fmt.Sprintf(format, args...)) }

// readWAVHeader reads a WAV header from r, up to the first byte of the
// samples: RIFF, WAVE, a fmt chunk and any other chunks before data (a
// streaming encoder's LIST of tags, fact, ...), which are skipped. The
// sizes a streaming encoder cannot know yet (0 or 0xFFFFFFFF for the data
// chunk, any value for the RIFF size) mean "to the end". It takes 16-bit
// integer and 32-bit float samples, mono or several channels, at any rate
// up to maxRate; anything else is an error saying what it is.
func readWAVHeader(r io.Reader) (wavFormat, error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return wavFormat{}, fmt.Errorf("reading the WAV header: %w", err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return wavFormat{}, badWAV("not a RIFF WAVE header")
	}
	var (
		f      wavFormat
		hasFmt bool
	)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return wavFormat{}, fmt.Errorf("the WAV ends before its data chunk: %w", err)
		}
		id, size := string(ch[0:4]), int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if size < 16 {
				return wavFormat{}, badWAV("the WAV fmt chunk has %d bytes, fewer than 16", size)
			}
			b := make([]byte, min(size, fmtMax))
			if _, err := io.ReadFull(r, b); err != nil {
				return wavFormat{}, fmt.Errorf("reading the WAV fmt chunk: %w", err)
			}
			var err error
			if f, err = parseFmt(b); err != nil {
				return wavFormat{}, err
			}
			hasFmt = true
			if err := discard(r, size-int64(len(b))+size%2); err != nil {
				return wavFormat{}, err
			}
		case "data":
			if !hasFmt {
				return wavFormat{}, badWAV("the WAV data chunk comes before its fmt chunk")
			}
			f.data = size
			if size == 0 || size == 0xFFFFFFFF {
				f.data = -1 // a streaming encoder's placeholder
			}
			return f, nil
		default:
			if err := discard(r, size+size%2); err != nil {
				return wavFormat{}, err
			}
		}
	}
}

// parseFmt reads a fmt chunk (at least 16 bytes).
func parseFmt(b []byte) (wavFormat, error) {
	le := binary.LittleEndian
	code := le.Uint16(b[0:2])
	f := wavFormat{
		channels: int(le.Uint16(b[2:4])),
		rate:     int(le.Uint32(b[4:8])),
	}
	align := int(le.Uint16(b[12:14]))
	bits := int(le.Uint16(b[14:16]))
	if code == wavExtensible {
		// cbSize (22), valid bits, channel mask, then the subformat GUID,
		// whose first two bytes are the real format code.
		if len(b) < 26 || le.Uint16(b[16:18]) < 22 {
			return wavFormat{}, badWAV("the WAV's extensible fmt chunk is cut short")
		}
		code = le.Uint16(b[24:26])
	}
	switch {
	case code == wavPCM && bits == 16:
		f.bytes = 2
	case code == wavFloat && bits == 32:
		f.bytes, f.float = 4, true
	default:
		return wavFormat{}, badWAV("the WAV holds %d-bit samples of format %d; Parley reads 16-bit PCM and 32-bit float", bits, code)
	}
	switch {
	case f.channels < 1 || f.channels > maxChannels:
		return wavFormat{}, badWAV("the WAV has %d channels", f.channels)
	case f.rate < 1 || f.rate > maxRate:
		return wavFormat{}, badWAV("the WAV's sample rate %d Hz is not usable", f.rate)
	case align != f.channels*f.bytes:
		return wavFormat{}, badWAV("the WAV's block align %d does not fit %d channels of %d bytes", align, f.channels, f.bytes)
	}
	return f, nil
}

// discard skips n bytes of r; running out of input is an error.
func discard(r io.Reader, n int64) error {
	if n <= 0 {
		return nil
	}
	if got, err := io.CopyN(io.Discard, r, n); got < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("the WAV header ends inside a chunk: %w", err)
	}
	return nil
}
