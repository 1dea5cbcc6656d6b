package sphinx

import (
	"encoding/binary"
	"io"
)

// writeWAV writes pcm as a mono 16-bit PCM WAV file (44-byte header).
func writeWAV(w io.Writer, pcm []int16, rate int) error {
	data := uint64(len(pcm)) * 2
	if data > 0xFFFFFFFF-36 {
		return errWAVTooLong
	}
	var h [44]byte
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+data))
	copy(h[8:], "WAVE")
	copy(h[12:], "fmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:], 1) // mono
	binary.LittleEndian.PutUint32(h[24:], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(h[32:], 2)
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(data))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	buf := make([]byte, 0, 8192)
	for i, s := range pcm {
		buf = binary.LittleEndian.AppendUint16(buf, uint16(s))
		if len(buf) == cap(buf) || i == len(pcm)-1 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return nil
}
