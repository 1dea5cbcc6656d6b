package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// cepstralMean is the mean of the 13 cepstra over every frame of the
// utterances ids (sphinx_fe's .mfc files under mfcDir: a 32-bit count of
// values, then the values as 32-bit floats, in either byte order, which
// the count tells), as pocketsphinx's -cmninit takes it: the cepstral mean
// a decoder starts from before it has heard a caller. What a live mean
// converges to on phone audio is far from the model's feat.params default
// (wideband speech).
func cepstralMean(mfcDir string, ids []string) (string, error) {
	const ceps = 13
	var sum [ceps]float64
	var frames float64
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(mfcDir, id+".mfc"))
		if err != nil {
			return "", err
		}
		if len(b) < 4 {
			return "", fmt.Errorf("%s.mfc: %d bytes", id, len(b))
		}
		var order binary.ByteOrder = binary.BigEndian
		if int(order.Uint32(b))*4+4 != len(b) {
			order = binary.LittleEndian
			if int(order.Uint32(b))*4+4 != len(b) {
				return "", fmt.Errorf("%s.mfc: its count does not match its %d bytes", id, len(b))
			}
		}
		data := b[4:]
		for i := 0; i+ceps*4 <= len(data); i += ceps * 4 {
			for j := range ceps {
				sum[j] += float64(math.Float32frombits(order.Uint32(data[i+4*j:])))
			}
			frames++
		}
	}
	if frames == 0 {
		return "", fmt.Errorf("no frames in %d utterances", len(ids))
	}
	parts := make([]string, ceps)
	for j := range parts {
		parts[j] = fmt.Sprintf("%.2f", sum[j]/frames)
	}
	return strings.Join(parts, ","), nil
}
