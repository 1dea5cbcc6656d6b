package espeak

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// errNoHeader means the output ended before a WAV header and data chunk:
// espeak-ng wrote nothing (an unknown voice, a crash).
var errNoHeader = errors.New("espeak: no WAV header in espeak-ng output")

// unknownSize is where a data chunk size stops being believed. espeak-ng
// writing to a pipe cannot seek back to patch the sizes, so it writes
// 0x7ffff000 (1.51) and other streaming writers write 0xffffffff; either way
// the audio runs until EOF.
const unknownSize = 0x7f000000

// readHeader reads a WAV header up to the start of the data chunk from a
// stream and returns the sample rate and the data size, -1 when unknown.
// Only mono 16-bit PCM is accepted, which is what espeak-ng writes.
func readHeader(r io.Reader) (rate int, size int64, err error) {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, 0, errNoHeader
		}
		return 0, 0, fmt.Errorf("espeak: reading WAV header: %w", err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return 0, 0, errors.New("espeak: espeak-ng output is not a WAV stream")
	}
	le := binary.LittleEndian
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return 0, 0, fmt.Errorf("%w: %w", errNoHeader, err)
		}
		id, n := string(ch[0:4]), int64(le.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if n < 16 || n > 256 {
				return 0, 0, fmt.Errorf("espeak: WAV fmt chunk of %d bytes", n)
			}
			b := make([]byte, n+n%2)
			if _, err := io.ReadFull(r, b); err != nil {
				return 0, 0, fmt.Errorf("espeak: reading WAV fmt chunk: %w", err)
			}
			format, channels := le.Uint16(b[0:2]), le.Uint16(b[2:4])
			rate = int(le.Uint32(b[4:8]))
			bits := le.Uint16(b[14:16])
			if format == 0xFFFE && n >= 40 {
				format = le.Uint16(b[24:26])
			}
			if format != 1 || channels != 1 || bits != 16 || rate <= 0 || rate > 1<<20 {
				return 0, 0, fmt.Errorf("espeak: WAV is format %d, %d channels, %d bits, %d Hz; want mono 16-bit PCM",
					format, channels, bits, rate)
			}
		case "data":
			if rate == 0 {
				return 0, 0, errors.New("espeak: WAV data chunk before fmt")
			}
			if n >= unknownSize {
				n = -1
			}
			return rate, n, nil
		default:
			if n >= unknownSize {
				return 0, 0, fmt.Errorf("espeak: WAV chunk %q of unknown size before data", id)
			}
			if _, err := io.CopyN(io.Discard, r, n+n%2); err != nil {
				return 0, 0, fmt.Errorf("espeak: skipping WAV chunk %q: %w", id, err)
			}
		}
	}
}
