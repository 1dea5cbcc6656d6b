package sphinx

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Phone audio's adaptation: the en-us acoustic model was trained on
// wideband speech, and a call's conditioned audio still differs from it
// (the codec's 4 kHz band, μ-law's quantisation noise, the band fill).
// One global MLLR transform of the model's Gaussian means, trained on
// conditioned G.711 speech by ./adapt (`make stt-adapt`), moves the model
// towards that audio; pocketsphinx applies it at load with -mllr <file>.
// Pocketsphinx 0.8 applies only a transform's first regression class,
// so the transform has one.

// PhoneMLLR is the transform for narrowband (G.711) legs, in
// pocketsphinx's text format: classes, streams, then per stream its
// length and per class the matrix A, the bias b and the variance
// scaling h (mean' = A·mean + b, var' = h·var).
//
//go:embed model/phone.mllr
var PhoneMLLR []byte

// phoneMLLRFile is the name WritePhoneMLLR gives the transform.
const phoneMLLRFile = "phone.mllr"

// WritePhoneMLLR writes [PhoneMLLR] into dir (a recognizer's cache
// directory) and returns its path, for pocketsphinx's -mllr. An existing
// file with the same content is left as it is.
func WritePhoneMLLR(dir string) (string, error) {
	path, err := writeCached(dir, phoneMLLRFile, PhoneMLLR)
	if err != nil {
		return "", fmt.Errorf("stt/sphinx: mllr: %w", err)
	}
	return path, nil
}

// writeCached writes content as dir/name, through a temporary file
// renamed into place (a decoder loading it never reads half of it), and
// returns its path; an existing file with the same content is left as it
// is.
func writeCached(dir, name string, content []byte) (string, error) {
	path := filepath.Join(dir, name)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(content)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}

// MLLR is a parsed transform: Streams[s].Classes[c] transforms stream
// s's means in regression class c.
type MLLR struct {
	Streams []MLLRStream
}

// MLLRStream is one feature stream's transforms.
type MLLRStream struct {
	Len     int
	Classes []MLLRClass
}

// MLLRClass is one regression class's transform of a stream: A is Len
// rows of Len, B and H have Len values.
type MLLRClass struct {
	A    [][]float64
	B, H []float64
}

// ParseMLLR reads a transform in pocketsphinx's text format, checking
// that it is complete, finite and scales no variance to zero or below.
func ParseMLLR(text []byte) (MLLR, error) {
	f := strings.Fields(string(text))
	next := func(what string) (float64, error) {
		if len(f) == 0 {
			return 0, fmt.Errorf("mllr: ends before %s", what)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("mllr: %s: %q is not a finite number", what, f[0])
		}
		f = f[1:]
		return v, nil
	}
	count := func(what string, most int) (int, error) {
		v, err := next(what)
		if err != nil {
			return 0, err
		}
		if v != math.Trunc(v) || v < 1 || v > float64(most) {
			return 0, fmt.Errorf("mllr: %s %v: want 1 to %d", what, v, most)
		}
		return int(v), nil
	}
	classes, err := count("number of classes", 256)
	if err != nil {
		return MLLR{}, err
	}
	streams, err := count("number of streams", 16)
	if err != nil {
		return MLLR{}, err
	}
	var m MLLR
	for s := range streams {
		n, err := count(fmt.Sprintf("stream %d's length", s), 256)
		if err != nil {
			return MLLR{}, err
		}
		st := MLLRStream{Len: n}
		for c := range classes {
			var cl MLLRClass
			vec := func(what string) ([]float64, error) {
				v := make([]float64, n)
				for i := range v {
					if v[i], err = next(fmt.Sprintf("stream %d class %d %s", s, c, what)); err != nil {
						return nil, err
					}
				}
				return v, nil
			}
			for range n {
				row, err := vec("A")
				if err != nil {
					return MLLR{}, err
				}
				cl.A = append(cl.A, row)
			}
			if cl.B, err = vec("b"); err != nil {
				return MLLR{}, err
			}
			if cl.H, err = vec("h"); err != nil {
				return MLLR{}, err
			}
			for i, h := range cl.H {
				if h <= 0 {
					return MLLR{}, fmt.Errorf("mllr: stream %d class %d scales variance %d by %v", s, c, i, h)
				}
			}
			st.Classes = append(st.Classes, cl)
		}
		m.Streams = append(m.Streams, st)
	}
	if len(f) > 0 {
		return MLLR{}, fmt.Errorf("mllr: %d values after the last stream", len(f))
	}
	return m, nil
}
