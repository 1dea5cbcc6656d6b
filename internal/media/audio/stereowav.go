package audio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

const wavHeaderSize = 44

var errWAVClosed = errors.New("audio: StereoWAV is closed")

// StereoWAV writes a call recording as a 16-bit PCM stereo WAV file, as a
// stream: left is the caller, right is the agent.
//
// Samples are written in blocks, with the header's sizes rewritten after
// each block: Write holds samples in memory and writes them on every
// Flush, every half second of audio, and on Close; WriteBlock writes a
// block its caller encoded (AppendStereo) at once. A file cut short by a
// crash is a valid WAV holding everything up to the last block. A write
// and a header update per block, instead of a write per 20 ms frame, is
// what a thousand recordings at once can afford.
//
// A StereoWAV is not safe for concurrent use.
type StereoWAV struct {
	w       io.WriteSeeker
	start   int64 // offset of the RIFF header in w
	rate    int
	frames  int64  // stereo samples written
	synced  int64  // frames written to w and counted by its header
	pending []byte // frames since synced, encoded, not yet written
	err     error  // sticky: once w fails, the file is not trustworthy
	closed  bool
	head    [wavHeaderSize]byte // header() builds here: a block allocates nothing
}

// NewStereoWAV writes a WAV header at w's current offset and returns a
// writer for rate Hz stereo audio.
func NewStereoWAV(w io.WriteSeeker, rate int) (*StereoWAV, error) {
	if rate <= 0 || rate > math.MaxInt32/4 {
		return nil, fmt.Errorf("audio: NewStereoWAV: unusable rate %d", rate)
	}
	start, err := w.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("audio: NewStereoWAV: %w", err)
	}
	s := &StereoWAV{w: w, start: start, rate: rate}
	if _, err := w.Write(s.header()); err != nil {
		return nil, fmt.Errorf("audio: writing WAV header: %w", err)
	}
	return s, nil
}

func (s *StereoWAV) header() []byte {
	le := binary.LittleEndian
	h := s.head[:0]
	data := uint32(s.frames * 4)
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, 36+data)
	h = append(h, "WAVEfmt "...)
	h = le.AppendUint32(h, 16)
	h = le.AppendUint16(h, wavFormatPCM)
	h = le.AppendUint16(h, 2)
	h = le.AppendUint32(h, uint32(s.rate))
	h = le.AppendUint32(h, uint32(s.rate*4)) // bytes per second
	h = le.AppendUint16(h, 4)                // bytes per frame
	h = le.AppendUint16(h, 16)
	h = append(h, "data"...)
	h = le.AppendUint32(h, data)
	return h
}

// maxFrames keeps the RIFF size within its 32 bits.
const maxFrames = (math.MaxUint32 - 36) / 4

var errWAVTooLong = errors.New("audio: StereoWAV: recording exceeds the 4 GB WAV limit")

// Write appends one stretch of audio, caller on the left and agent on the
// right. If one side is shorter it is padded with silence to the other's
// length.
func (s *StereoWAV) Write(left, right []int16) error {
	if s.closed {
		return errWAVClosed
	}
	if s.err != nil {
		return s.err
	}
	n := max(len(left), len(right))
	if s.frames+int64(n) > maxFrames {
		return errWAVTooLong
	}
	if s.pending == nil {
		s.pending = make([]byte, 0, s.block()*4)
	}
	s.pending = AppendStereo(s.pending, left, right)
	s.frames += int64(n)
	if s.frames-s.synced >= s.block() {
		return s.Flush()
	}
	return nil
}

// AppendStereo appends left and right to dst as a WAV's 16-bit stereo
// frames (little-endian, left first), the shorter side padded with
// silence, and returns the extended slice.
func AppendStereo(dst []byte, left, right []int16) []byte {
	n := max(len(left), len(right))
	dst = slices.Grow(dst, 4*n)
	at := len(dst)
	dst = dst[:at+4*n]
	out := dst[at:]
	le := binary.LittleEndian
	if len(left) == n && len(right) == n {
		right = right[:len(left)] // lets the compiler drop the bounds checks
		for i, l := range left {
			le.PutUint32(out[4*i:], uint32(uint16(l))|uint32(uint16(right[i]))<<16)
		}
		return dst
	}
	clear(out)
	for i, l := range left {
		le.PutUint16(out[4*i:], uint16(l))
	}
	for i, r := range right {
		le.PutUint16(out[4*i+2:], uint16(r))
	}
	return dst
}

// WriteBlock appends audio its caller encoded with AppendStereo (whole
// stereo frames, after anything Write holds) and rewrites the header's
// sizes: one write and one header update, whatever the block's length.
func (s *StereoWAV) WriteBlock(p []byte) error {
	if s.closed {
		return errWAVClosed
	}
	if s.err != nil {
		return s.err
	}
	if len(p)%4 != 0 {
		return errors.New("audio: StereoWAV: a block of part of a stereo frame")
	}
	if s.frames+int64(len(p)/4) > maxFrames {
		return errWAVTooLong
	}
	s.frames += int64(len(p) / 4)
	return s.sync(p)
}

// block is how many frames are held before they are written: half a
// second.
func (s *StereoWAV) block() int64 { return int64(max(s.rate/2, 1)) }

// Flush writes the audio held and rewrites the header's sizes to cover
// everything written so far.
func (s *StereoWAV) Flush() error {
	if s.closed {
		return errWAVClosed
	}
	if s.err != nil {
		return s.err
	}
	return s.sync(nil)
}

// sync writes the audio held, then block, then the header's sizes.
func (s *StereoWAV) sync(block []byte) error {
	for _, p := range [][]byte{s.pending, block} {
		if len(p) == 0 {
			continue
		}
		if _, err := s.w.Write(p); err != nil {
			s.err = fmt.Errorf("audio: writing WAV samples: %w", err)
			return s.err
		}
	}
	s.pending = s.pending[:0]
	if err := s.patch(); err != nil {
		s.err = fmt.Errorf("audio: updating WAV header: %w", err)
		return s.err
	}
	s.synced = s.frames
	return nil
}

// patch rewrites the two size fields: in place, in one write of the
// header from the first to the last (the bytes between are unchanged),
// when w can; else by seeking to each and back to the end of the audio.
func (s *StereoWAV) patch() error {
	h := s.header()
	if wa, ok := s.w.(io.WriterAt); ok {
		_, err := wa.WriteAt(h[4:wavHeaderSize], s.start+4)
		return err
	}
	for _, off := range []int64{4, 40} {
		if _, err := s.w.Seek(s.start+off, io.SeekStart); err != nil {
			return err
		}
		if _, err := s.w.Write(h[off : off+4]); err != nil {
			return err
		}
	}
	_, err := s.w.Seek(s.start+wavHeaderSize+s.frames*4, io.SeekStart)
	return err
}

// Duration is how much audio has been written.
func (s *StereoWAV) Duration() time.Duration {
	rate := int64(s.rate)
	return time.Duration(s.frames/rate)*time.Second + time.Duration(s.frames%rate)*time.Second/time.Duration(rate)
}

// Close finalises the header. It does not close the underlying writer.
// Closing twice is harmless.
func (s *StereoWAV) Close() error {
	if s.closed {
		return nil
	}
	err := s.Flush()
	s.closed = true
	return err
}
