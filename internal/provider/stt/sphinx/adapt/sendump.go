package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Debian's en-us model keeps its mixture weights only as pocketsphinx's
// sendump: 8-bit quantised negative logs. Sphinxtrain's bw reads a float
// mixture_weights file, so the weights are turned back into probabilities.
// bw only uses them to weigh the Gaussians when it counts which state
// each frame belongs to; the quantisation (steps of about 10% of a weight)
// costs little there, and the weights themselves are not adapted.

// sendumpShift and sendumpBase: a stored value v stands for the weight
// 1.0001^-(v<<10) (pocketsphinx's logmath base and SENSCR_SHIFT).
const (
	sendumpShift = 10
	sendumpBase  = 1.0001
)

// mixtureWeights are weights[senone][stream][density].
type mixtureWeights struct {
	senones, streams, densities int
	w                           []float32
}

// readSendump reads a pocketsphinx sendump file, its weights renormalised.
func readSendump(path string) (mixtureWeights, error) {
	m, err := readSendumpRaw(path)
	if err == nil {
		m.normalise()
	}
	return m, err
}

// readSendumpRaw reads a pocketsphinx sendump file as it is.
func readSendumpRaw(path string) (mixtureWeights, error) {
	f, err := os.Open(path)
	if err != nil {
		return mixtureWeights{}, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	le := binary.LittleEndian
	readInt := func() (int, error) {
		var v int32
		err := binary.Read(r, le, &v)
		return int(v), err
	}
	streams := 0
	for {
		n, err := readInt()
		if err != nil {
			return mixtureWeights{}, fmt.Errorf("sendump %s: header: %w", path, err)
		}
		if n == 0 {
			break
		}
		if n < 0 || n > 1<<16 {
			return mixtureWeights{}, fmt.Errorf("sendump %s: header string of %d bytes (big-endian files are not read)", path, n)
		}
		s := make([]byte, n)
		if _, err := io.ReadFull(r, s); err != nil {
			return mixtureWeights{}, fmt.Errorf("sendump %s: header: %w", path, err)
		}
		fmt.Sscanf(string(s), "feature_count %d", &streams)
	}
	densities, err1 := readInt()
	senones, err2 := readInt()
	if err := errors.Join(err1, err2); err != nil {
		return mixtureWeights{}, fmt.Errorf("sendump %s: sizes: %w", path, err)
	}
	if streams <= 0 || densities <= 0 || senones <= 0 {
		return mixtureWeights{}, fmt.Errorf("sendump %s: %d streams, %d densities, %d senones", path, streams, densities, senones)
	}
	m := mixtureWeights{senones: senones, streams: streams, densities: densities,
		w: make([]float32, senones*streams*densities)}
	row := make([]byte, senones)
	for f := range streams {
		for d := range densities {
			if _, err := io.ReadFull(r, row); err != nil {
				return mixtureWeights{}, fmt.Errorf("sendump %s: weights: %w", path, err)
			}
			for s, v := range row {
				m.w[(s*streams+f)*densities+d] = float32(math.Pow(sendumpBase, -float64(int(v)<<sendumpShift)))
			}
		}
	}
	return m, nil
}

// normalise makes each senone's weights in each stream sum to one again
// (quantisation leaves them near, not at, one).
func (m mixtureWeights) normalise() {
	for i := 0; i < len(m.w); i += m.densities {
		var sum float64
		for _, v := range m.w[i : i+m.densities] {
			sum += float64(v)
		}
		for j := range m.w[i : i+m.densities] {
			m.w[i+j] = float32(float64(m.w[i+j]) / sum)
		}
	}
}

// write writes m as a SphinxTrain mixture_weights file (s3 binary format,
// little-endian, without the optional checksum).
func (m mixtureWeights) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	// The header is padded so the data starts 4-byte aligned, as
	// sphinxtrain's own files are.
	hdr := "s3\nversion 1.0\n"
	end := "endhdr\n"
	pad := (4 - (len(hdr)+len(end))%4) % 4
	fmt.Fprintf(w, "%s%*s%s", hdr, pad, "", end)
	le := binary.LittleEndian
	for _, v := range []uint32{0x11223344, uint32(m.senones), uint32(m.streams), uint32(m.densities), uint32(len(m.w))} {
		binary.Write(w, le, v)
	}
	binary.Write(w, le, m.w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
