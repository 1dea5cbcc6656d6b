package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
)

// writeWAV writes mono 16-bit PCM at rate as a WAV file.
func writeWAV(path string, pcm []int16, rate int) error {
	var b bytes.Buffer
	le := binary.LittleEndian
	data := uint32(len(pcm) * 2)
	b.WriteString("RIFF")
	binary.Write(&b, le, 36+data)
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, []uint32{16})
	binary.Write(&b, le, []uint16{1, 1})
	binary.Write(&b, le, []uint32{uint32(rate), uint32(rate * 2)})
	binary.Write(&b, le, []uint16{2, 16})
	b.WriteString("data")
	binary.Write(&b, le, data)
	binary.Write(&b, le, pcm)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// readWAV reads a mono 16-bit PCM WAV file (what flite and festival write).
func readWAV(path string) ([]int16, int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(raw) < 12 || string(raw[:4]) != "RIFF" || string(raw[8:12]) != "WAVE" {
		return nil, 0, fmt.Errorf("%s: not a WAV file", path)
	}
	le := binary.LittleEndian
	rate := 0
	for p := 12; p+8 <= len(raw); {
		id, size := string(raw[p:p+4]), int(le.Uint32(raw[p+4:]))
		body := raw[p+8 : min(p+8+size, len(raw))]
		switch id {
		case "fmt ":
			if len(body) < 16 || le.Uint16(body) != 1 || le.Uint16(body[2:]) != 1 || le.Uint16(body[14:]) != 16 {
				return nil, 0, fmt.Errorf("%s: not mono 16-bit PCM", path)
			}
			rate = int(le.Uint32(body[4:]))
		case "data":
			if rate == 0 {
				return nil, 0, fmt.Errorf("%s: data before fmt", path)
			}
			pcm := make([]int16, len(body)/2)
			binary.Read(bytes.NewReader(body[:2*len(pcm)]), le, pcm)
			return pcm, rate, nil
		}
		p += 8 + size + size%2
	}
	return nil, 0, fmt.Errorf("%s: no data chunk", path)
}
