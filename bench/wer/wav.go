package wer

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// writeWAV writes c as a mono 16-bit PCM WAV file at path.
func writeWAV(path string, c Clip) error {
	data := 2 * len(c.PCM)
	b := make([]byte, 44, 44+data)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(c.Rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(2*c.Rate))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	for _, x := range c.PCM {
		b = binary.LittleEndian.AppendUint16(b, uint16(x))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// keepAudio writes what the line delivered of each utterance of c to
// dir/<set>-<voice>-<codec>/<id>.wav, to listen to or feed to another tool.
func keepAudio(dir string, c Carried) error {
	sub := filepath.Join(dir, utteranceID(c.Set.Name+"-"+c.Set.Voice+"-"+c.Codec.Name))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return err
	}
	for i, h := range c.Heard {
		if err := writeWAV(filepath.Join(sub, c.Set.Utterances[i].ID+".wav"), h); err != nil {
			return err
		}
	}
	return nil
}
