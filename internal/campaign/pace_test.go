package campaign

import (
	"testing"
	"time"
)

// pacer is a campaign's nextDialAt under a fake clock.
type fakePacer struct {
	next      time.Time
	perMinute int
}

// dial tries a dial at now.
func (p *fakePacer) dial(now time.Time) bool {
	ok, next := Pace(p.next, now, p.perMinute)
	if !ok && !next.Equal(p.next) {
		panic("a refused dial moved nextDialAt")
	}
	p.next = next
	return ok
}

// burst is how many dials succeed at once at now.
func (p *fakePacer) burst(now time.Time) int {
	n := 0
	for p.dial(now) {
		n++
	}
	return n
}

func TestPaceSixtyAMinute(t *testing.T) {
	p := &fakePacer{perMinute: 60}
	now := rulesT0
	if n := p.burst(now); n != 1 {
		t.Fatalf("first burst %d, want 1", n)
	}
	if p.dial(now.Add(999 * time.Millisecond)) {
		t.Error("a second dial within the second")
	}
	// Steady: one a second.
	dials := 0
	for ms := 1000; ms <= 60_000; ms += 100 {
		if p.dial(now.Add(time.Duration(ms) * time.Millisecond)) {
			dials++
		}
	}
	if dials != 60 {
		t.Errorf("%d dials in the next minute, want 60", dials)
	}
	// An idle hour saves up no more than one second's worth: one dial.
	if n := p.burst(now.Add(time.Hour)); n != 1 {
		t.Errorf("burst after an idle hour %d, want 1", n)
	}
}

func TestPaceSixThousandAMinute(t *testing.T) {
	p := &fakePacer{perMinute: 6000}
	now := rulesT0
	if n := p.burst(now); n != 100 {
		t.Fatalf("first burst %d, want 100", n)
	}
	// Then 100 a second: one every 10 ms.
	dials := 0
	for ms := 1; ms <= 10_000; ms++ {
		if p.dial(now.Add(time.Duration(ms) * time.Millisecond)) {
			dials++
		}
	}
	if dials != 1000 {
		t.Errorf("%d dials in 10 s, want 1000", dials)
	}
	if n := p.burst(now.Add(time.Hour)); n != 100 {
		t.Errorf("burst after an idle hour %d, want 100", n)
	}
}

func TestPaceSlowAndOdd(t *testing.T) {
	// 1 a minute: 1, then nothing for 59.999 s.
	p := &fakePacer{perMinute: 1}
	if p.burst(rulesT0) != 1 || p.dial(rulesT0.Add(time.Minute-time.Millisecond)) || !p.dial(rulesT0.Add(time.Minute)) {
		t.Error("1 a minute")
	}
	// 90 a minute: one second's worth rounds down to 1; 90 in a minute.
	p = &fakePacer{perMinute: 90}
	dials := 0
	for ms := 0; ms < 60_000; ms += 10 {
		if p.dial(rulesT0.Add(time.Duration(ms) * time.Millisecond)) {
			dials++
		}
	}
	if dials != 90 {
		t.Errorf("90 a minute: %d dials", dials)
	}
	// 120 a minute allows 2 at once.
	p = &fakePacer{perMinute: 120}
	if n := p.burst(rulesT0); n != 2 {
		t.Errorf("120 a minute: burst %d", n)
	}
	// A nonsensical rate is paced as 1 a minute, not divided by zero.
	if ok, next := Pace(time.Time{}, rulesT0, 0); !ok || !next.Equal(rulesT0.Add(time.Minute)) {
		t.Errorf("rate 0: %v %s", ok, next)
	}
}
