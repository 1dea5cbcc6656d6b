package audio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"
)

// memFile is an in-memory io.WriteSeeker; bytes() is what a reader would
// find on disk at any moment, crash included.
type memFile struct {
	buf []byte
	off int64
}

func (f *memFile) Write(p []byte) (int, error) {
	if end := f.off + int64(len(p)); end > int64(len(f.buf)) {
		f.buf = append(f.buf, make([]byte, end-int64(len(f.buf)))...)
	}
	copy(f.buf[f.off:], p)
	f.off += int64(len(p))
	return len(p), nil
}

func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += int64(len(f.buf))
	}
	if offset < 0 {
		return 0, errors.New("negative offset")
	}
	f.off = offset
	return offset, nil
}

func (f *memFile) bytes() []byte { return slices.Clone(f.buf) }

func TestStereoWAVRoundTrip(t *testing.T) {
	for _, rate := range []int{8000, 16000, 48000} {
		f := &memFile{}
		w, err := NewStereoWAV(f, rate)
		if err != nil {
			t.Fatal(err)
		}
		left := Tone(440, rate, 1500*time.Millisecond, 0.5)
		right := noise(rate, 1500*time.Millisecond, 0.1, 1)
		frame := rate / 50
		for i := 0; i < len(left); i += frame {
			if err := w.Write(left[i:i+frame], right[i:i+frame]); err != nil {
				t.Fatal(err)
			}
		}
		if got := w.Duration(); got != 1500*time.Millisecond {
			t.Errorf("writer Duration = %v", got)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := w.Write(left, right); err == nil {
			t.Error("Write after Close succeeded")
		}
		if want := wavHeaderSize + 4*len(left); len(f.buf) != want {
			t.Errorf("file is %d bytes, want %d", len(f.buf), want)
		}
		got, err := ReadWAV(bytes.NewReader(f.bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if got.Rate != rate || len(got.Channels) != 2 {
			t.Fatalf("rate %d, %d channels", got.Rate, len(got.Channels))
		}
		if !slices.Equal(got.Channels[0], left) || !slices.Equal(got.Channels[1], right) {
			t.Error("samples differ")
		}
		if got.Duration() != 1500*time.Millisecond {
			t.Errorf("Duration = %v", got.Duration())
		}
	}
}

func TestStereoWAVPadsShorterSide(t *testing.T) {
	f := &memFile{}
	w, _ := NewStereoWAV(f, 8000)
	must(t, w.Write([]int16{1, 2, 3}, []int16{4}))
	must(t, w.Write(nil, []int16{5, 6}))
	must(t, w.Write([]int16{7}, nil))
	must(t, w.Close())
	got, err := ReadWAV(bytes.NewReader(f.bytes()))
	must(t, err)
	if l, r := got.Channels[0], got.Channels[1]; !slices.Equal(l, []int16{1, 2, 3, 0, 0, 7}) || !slices.Equal(r, []int16{4, 0, 0, 5, 6, 0}) {
		t.Errorf("got left %v right %v", l, r)
	}
}

// A recording whose process died after a Flush (no Close) is a valid WAV of
// what was flushed; audio written after the last header update is ignored.
func TestStereoWAVCrashAfterFlush(t *testing.T) {
	f := &memFile{}
	w, _ := NewStereoWAV(f, 8000)
	tone := Tone(1000, 8000, 500*time.Millisecond, 0.5)
	must(t, w.Write(tone, tone))
	must(t, w.Flush())
	must(t, w.Write(tone[:160], nil)) // lost: the header was not updated

	got, err := ReadWAV(bytes.NewReader(f.bytes()))
	must(t, err)
	if got.Duration() != 500*time.Millisecond || !slices.Equal(got.Channels[0], tone) {
		t.Errorf("read back %v, %d samples", got.Duration(), len(got.Channels[0]))
	}
}

// Without any Flush, the header is still rewritten every half second of
// audio.
func TestStereoWAVUpdatesHeaderEveryHalfSecond(t *testing.T) {
	f := &memFile{}
	w, _ := NewStereoWAV(f, 8000)
	frame := make([]int16, 160)
	for range 35 { // 0.7 s
		must(t, w.Write(frame, frame))
	}
	got, err := ReadWAV(bytes.NewReader(f.bytes()))
	must(t, err)
	if d := got.Duration(); d != 500*time.Millisecond {
		t.Errorf("unflushed file reads as %v, want the 0.5 s written before the automatic update", d)
	}
}

// Frames are written in blocks of half a second, not one write each:
// before half a second is held nothing but the header is on disk.
func TestStereoWAVWritesInBlocks(t *testing.T) {
	f := &memFile{}
	w, _ := NewStereoWAV(f, 8000)
	frame := make([]int16, 160)
	for range 24 {
		must(t, w.Write(frame, frame))
	}
	if n := len(f.bytes()); n != wavHeaderSize {
		t.Errorf("%d bytes on disk after 0.48 s of frames, want only the %d-byte header", n, wavHeaderSize)
	}
	must(t, w.Write(frame, frame))
	if n := len(f.bytes()); n != wavHeaderSize+4000*4 {
		t.Errorf("%d bytes on disk after half a second, want the header and the half second", n)
	}
}

func TestStereoWAVAtOffset(t *testing.T) {
	f := &memFile{}
	f.Write([]byte("prefix"))
	w, _ := NewStereoWAV(f, 16000)
	must(t, w.Write([]int16{1, 2}, []int16{3, 4}))
	must(t, w.Close())
	got, err := ReadWAV(bytes.NewReader(f.bytes()[6:]))
	must(t, err)
	if !slices.Equal(got.Channels[1], []int16{3, 4}) {
		t.Errorf("got %v", got.Channels)
	}
}

func TestReadWAV(t *testing.T) {
	mono := wavFile(1, 8000, 1, []int16{1, -2, 3})
	tests := []struct {
		name    string
		file    []byte
		want    [][]int16
		wantErr bool
	}{
		{"mono", mono, [][]int16{{1, -2, 3}}, false},
		{"three channels", wavFile(1, 22050, 3, []int16{1, 2, 3, 4, 5, 6}), [][]int16{{1, 4}, {2, 5}, {3, 6}}, false},
		{"extensible PCM", wavFile(wavFormatExtensible, 8000, 2, []int16{1, 2, 3, 4}), [][]int16{{1, 3}, {2, 4}}, false},
		{"extra chunk before data", withChunk(mono, "LIST", []byte("odd")), [][]int16{{1, -2, 3}}, false},
		{"data cut short", mono[:len(mono)-1], [][]int16{{1, -2}}, false},
		{"streaming size", withDataSize(mono, 0xFFFFFFFF), [][]int16{{1, -2, 3}}, false},
		{"not RIFF", []byte("RIFX....WAVE"), nil, true},
		{"empty", nil, nil, true},
		{"header only", mono[:12], nil, true},
		{"fmt cut short", mono[:30], nil, true},
		{"float", wavFile(3, 8000, 1, []int16{1}), nil, true},
		{"no channels", wavFile(1, 8000, 0, nil), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadWAV(bytes.NewReader(tt.file))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && !slices.EqualFunc(got.Channels, tt.want, slices.Equal) {
				t.Errorf("channels %v, want %v", got.Channels, tt.want)
			}
		})
	}
}

func FuzzReadWAV(f *testing.F) {
	valid := wavFile(1, 8000, 2, Tone(440, 8000, 20*time.Millisecond, 0.5))
	f.Add(valid)
	for _, n := range []int{0, 4, 12, 20, 36, 44, 45, 100} {
		f.Add(valid[:n])
	}
	f.Add(withDataSize(valid, 0xFFFFFFFF))         // a 4 GB data chunk
	f.Add(withChunk(valid[:12], "fmt ", nil)[:20]) // fmt claiming nothing
	f.Add(wavFile(wavFormatExtensible, 48000, 6, make([]int16, 12)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := ReadWAV(bytes.NewReader(b))
		runtime.ReadMemStats(&after)
		// The worst case is a huge channel count (65535 slice headers),
		// plus a few copies of the data while it is read and split.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20+16*uint64(len(b)) {
			t.Fatalf("%d bytes of input allocated %d bytes", len(b), alloc)
		}
		if err != nil {
			return
		}
		if w.Rate <= 0 || len(w.Channels) == 0 {
			t.Fatalf("success with rate %d and %d channels", w.Rate, len(w.Channels))
		}
		samples := 0
		for _, c := range w.Channels {
			if len(c) != len(w.Channels[0]) {
				t.Fatal("channels differ in length")
			}
			samples += len(c)
		}
		if 2*samples > len(b) {
			t.Fatalf("%d samples from %d bytes", samples, len(b))
		}
		_ = w.Duration()
	})
}

// wavFile builds a WAV file by hand, independently of StereoWAV.
func wavFile(format uint16, rate, channels int, interleaved []int16) []byte {
	le := binary.LittleEndian
	fmtChunk := le.AppendUint16(nil, format)
	fmtChunk = le.AppendUint16(fmtChunk, uint16(channels))
	fmtChunk = le.AppendUint32(fmtChunk, uint32(rate))
	fmtChunk = le.AppendUint32(fmtChunk, uint32(rate*channels*2))
	fmtChunk = le.AppendUint16(fmtChunk, uint16(channels*2))
	fmtChunk = le.AppendUint16(fmtChunk, 16)
	if format == wavFormatExtensible {
		fmtChunk = le.AppendUint16(fmtChunk, 22)
		fmtChunk = le.AppendUint16(fmtChunk, 16)
		fmtChunk = le.AppendUint32(fmtChunk, 0)
		fmtChunk = le.AppendUint16(fmtChunk, wavFormatPCM)
		fmtChunk = append(fmtChunk, "\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71"...)
	}
	var data []byte
	for _, s := range interleaved {
		data = le.AppendUint16(data, uint16(s))
	}
	b := append([]byte("RIFF\x00\x00\x00\x00WAVE"), chunk("fmt ", fmtChunk)...)
	b = append(b, chunk("data", data)...)
	le.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func chunk(id string, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32([]byte(id), uint32(len(body)))
	b = append(b, body...)
	if len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// withChunk inserts a chunk before the data chunk.
func withChunk(file []byte, id string, body []byte) []byte {
	i := bytes.Index(file, []byte("data"))
	if i < 0 {
		i = len(file)
	}
	out := slices.Clone(file[:i])
	out = append(out, chunk(id, body)...)
	return append(out, file[i:]...)
}

func withDataSize(file []byte, size uint32) []byte {
	out := slices.Clone(file)
	i := bytes.Index(out, []byte("data"))
	binary.LittleEndian.PutUint32(out[i+4:], size)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// memFileAt is a memFile that also writes in place, as an *os.File does.
type memFileAt struct{ memFile }

func (f *memFileAt) WriteAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(f.buf)) {
		return 0, errors.New("WriteAt past the end")
	}
	return copy(f.buf[off:], p), nil
}

// A writer that encodes its own blocks (AppendStereo, WriteBlock) makes the
// same file, byte for byte, as one that hands Write its frames, and each
// block leaves a valid WAV of everything written: with a file that writes
// in place and with one that can only seek.
func TestStereoWAVWriteBlockMatchesWrite(t *testing.T) {
	left := Tone(440, 8000, 700*time.Millisecond, 0.5)
	right := noise(8000, 700*time.Millisecond, 0.1, 1)
	for _, name := range []string{"seeker", "writer at"} {
		var ref, blk io.WriteSeeker = &memFile{}, &memFile{}
		if name == "writer at" {
			ref, blk = &memFileAt{}, &memFileAt{}
		}
		bytesOf := func(f io.WriteSeeker) []byte {
			if a, ok := f.(*memFileAt); ok {
				return a.bytes()
			}
			return f.(*memFile).bytes()
		}
		rw, _ := NewStereoWAV(ref, 8000)
		bw, _ := NewStereoWAV(blk, 8000)
		var block []byte
		for i := 0; i < len(left); i += 160 {
			l, r := left[i:i+160], right[i:i+160]
			if i/160%7 == 3 {
				l = l[:100] // a short side, padded
			}
			must(t, rw.Write(l, r))
			block = AppendStereo(block, l, r)
			if i/160%10 == 9 {
				must(t, bw.WriteBlock(block))
				got, err := ReadWAV(bytes.NewReader(bytesOf(blk)))
				must(t, err)
				if want := time.Duration(i/160+1) * 20 * time.Millisecond; got.Duration() != want {
					t.Errorf("%s: after a block the file reads as %v, want %v", name, got.Duration(), want)
				}
				block = block[:0]
			}
		}
		must(t, bw.WriteBlock(block))
		must(t, rw.Close())
		must(t, bw.Close())
		if !bytes.Equal(bytesOf(ref), bytesOf(blk)) {
			t.Errorf("%s: the blocks made another file than Write", name)
		}
		if err := bw.WriteBlock(block[:4]); err == nil {
			t.Errorf("%s: WriteBlock after Close succeeded", name)
		}
	}
	w, _ := NewStereoWAV(&memFile{}, 8000)
	if err := w.WriteBlock(make([]byte, 6)); err == nil {
		t.Error("a block of a frame and a half was taken")
	}
}
