package sipua

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media"
)

// readNow reads the frame waiting for a, failing if none is.
func readNow(t *testing.T, a media.Audio) ([]int16, time.Time) {
	t.Helper()
	if a.(*legAudio).l.queued() == 0 {
		t.Fatal("no frame waiting for the reader")
	}
	f, err := a.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f, a.(media.Arrivals).Arrived()
}

// Caller audio reaches the Audio reader when its packet is decoded, not
// on a clock's tick: whole frames, in order, each with when its newest
// packet arrived, whatever the far end's packet size.
func TestCallerAudioReachesTheReaderAtOnce(t *testing.T) {
	l := clockLeg(wallClock{}, discardRTP{})
	a := l.Audio(Rate)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

	// 10 ms packets: a frame once two have come.
	l.receive(pattern(0, frame/2, 1), t0)
	if n := l.queued(); n != 0 {
		t.Fatalf("%d frames for the reader after half a frame", n)
	}
	l.receive(pattern(frame/2, frame/2, 1), t0.Add(10*time.Millisecond))
	f, at := readNow(t, a)
	if !slices.Equal(f, pattern(0, frame, 1)) || !at.Equal(t0.Add(10*time.Millisecond)) {
		t.Errorf("first frame: %d samples in order %v, arrived %v", len(f), slices.Equal(f, pattern(0, frame, 1)), at)
	}
	// A 60 ms packet: three frames at once, all of that arrival.
	late := t0.Add(80 * time.Millisecond)
	l.receive(pattern(frame, 3*frame, 1), late)
	for i := range 3 {
		f, at := readNow(t, a)
		if !slices.Equal(f, pattern((i+1)*frame, frame, 1)) || !at.Equal(late) {
			t.Errorf("frame %d of the 60 ms packet: in order %v, arrived %v", i, slices.Equal(f, pattern((i+1)*frame, frame, 1)), at)
		}
	}
	if n := l.queued(); n != 0 {
		t.Errorf("%d frames left over", n)
	}
}

// While the far end sends nothing the reader gets silence frames, marked
// as not arrived, once the caller's audio is fillAfter frames overdue, so
// reads keep real time; audio that comes after is read at once.
func TestReaderGetsSilenceWhileNothingArrives(t *testing.T) {
	clk := &virtualClock{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	l := clockLeg(clk, discardRTP{})
	a := l.Audio(Rate)
	l.t0 = clk.now
	const due = 10
	l.pace(l.t0.Add(due*media.FrameDuration - time.Millisecond))
	if n := l.queued(); n != due-fillAfter {
		t.Fatalf("%d silence frames after %d frames with no audio, want %d", n, due, due-fillAfter)
	}
	for range due - fillAfter {
		f, at := readNow(t, a)
		if len(nonZero(f)) != 0 || len(f) != frame || !at.IsZero() {
			t.Fatalf("filled-in frame: %d samples, %d not silent, arrived %v", len(f), len(nonZero(f)), at)
		}
	}
	at := l.t0.Add(due * media.FrameDuration)
	l.receive(pattern(0, frame, 1), at)
	if f, got := readNow(t, a); !slices.Equal(f, pattern(0, frame, 1)) || !got.Equal(at) {
		t.Errorf("audio after the silence: in order %v, arrived %v", slices.Equal(f, pattern(0, frame, 1)), got)
	}
	// Audio keeps coming: no more silence is filled in.
	for i := 1; i <= 5; i++ {
		now := at.Add(time.Duration(i) * media.FrameDuration)
		l.receive(pattern(i*frame, frame, 1), now)
		l.pace(now)
		if f, _ := readNow(t, a); !slices.Equal(f, pattern(i*frame, frame, 1)) {
			t.Fatalf("frame %d: not the caller's audio", i)
		}
	}
}

// queued is how many frames wait for the Audio reader.
func (l *Leg) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.in.n
}
