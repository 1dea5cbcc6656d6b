package sipua

import (
	"slices"
	"testing"
	"time"

	dmedia "github.com/emiago/diago/media"
	"github.com/pion/rtp"

	"github.com/parley-voice/parley/internal/media"
)

// virtualClock is a media clock that runs only when the leg sleeps: each
// Sleep wakes late by what late says, then calls wake (the test's world:
// RTP arriving, the agent speaking, the call ending).
type virtualClock struct {
	now    time.Time
	sleeps int
	late   func(i int) time.Duration
	wake   func()
}

func (c *virtualClock) Now() time.Time { return c.now }

func (c *virtualClock) Sleep(d time.Duration) {
	c.now = c.now.Add(max(d, 0) + c.late(c.sleeps))
	c.sleeps++
	c.wake()
}

// sentPacket is an RTP packet the leg sent, and when (on its clock).
type sentPacket struct {
	rtp.Header
	payload []byte
	at      time.Time
}

// packetLog stands for the leg's socket: it keeps the packets sent, as
// the wire has them.
type packetLog struct {
	clk  *virtualClock
	sent []sentPacket
}

func (p *packetLog) writeRTP(b []byte) error {
	var pkt rtp.Packet
	if err := pkt.Unmarshal(b); err != nil {
		return err
	}
	p.sent = append(p.sent, sentPacket{pkt.Header, slices.Clone(pkt.Payload), p.clk.now})
	return nil
}

// clockLeg is a G.711 leg with no dialog, for driving its clock by hand.
func clockLeg(clk mediaClock, w rtpSink) *Leg {
	return clockLegWith(clk, w, dmedia.CodecAudioUlaw)
}

// clockLegWith is a leg with codec and no dialog.
func clockLegWith(clk mediaClock, w rtpSink, codec dmedia.Codec) *Leg {
	return newMediaLeg(clk, codec, w)
}

// hangUp ends a clockLeg as finish would, without a dialog to close.
func (l *Leg) hangUpAt(at time.Time) {
	l.mu.Lock()
	l.ending, l.end = true, media.End{At: at}
	l.mu.Unlock()
	close(l.stop)
}

// pattern is n samples numbered from start, never 0 (0 is silence).
func pattern(start, n int, sign int16) []int16 {
	p := make([]int16, n)
	for i := range p {
		p[i] = sign * int16((start+i)%1000+1)
	}
	return p
}

func nonZero(pcm []int16) []int16 {
	return slices.DeleteFunc(slices.Clone(pcm), func(s int16) bool { return s == 0 })
}

// A clock that wakes up to 60 ms late all along and once 500 ms late, in
// the middle of the agent's speech: every due frame is recorded (the
// recording lasts as long as the call), all the caller's audio and all the
// agent's speech are in it, and every RTP packet's timestamp is that of a
// frame due at most maxBurst frames before it was sent, with continuous
// sequence numbers and the marker bit after skipped frames. A keypad digit
// sent meanwhile is one RFC 4733 event at its frame's timestamp.
func TestClockKeepsWallTimeWhenWokenLate(t *testing.T) {
	const (
		callLength = 10 * time.Second
		callerStop = 9 * time.Second // the caller's audio ends before the call
	)
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &virtualClock{now: start}
	log := &packetLog{clk: clk}
	l := clockLeg(clk, log)
	var recCaller, recOurs []int16
	l.SetRecorder(func(caller, ours []int16) {
		recCaller = append(recCaller, caller...)
		recOurs = append(recOurs, ours...)
	})

	speech := [][]int16{pattern(0, 2*Rate, -1), pattern(2*Rate, Rate, -1)}
	fed, jumped, spoke, eventLate := 0, false, 0, false
	clk.late = func(i int) time.Duration {
		elapsed := clk.now.Sub(start)
		switch {
		case !jumped && elapsed >= 2*time.Second:
			jumped = true
			return 500 * time.Millisecond
		case l.tx.sending() && !eventLate:
			eventLate = true
			return 70 * time.Millisecond // skip part of the digit's event
		}
		return time.Duration(i*37%7) * 10 * time.Millisecond
	}
	clk.wake = func() {
		elapsed := clk.now.Sub(start)
		// The caller's RTP has come in up to now.
		for ; fed < int(min(elapsed, callerStop)/media.FrameDuration)+1; fed++ {
			l.receive(pattern(fed*frame, frame, 1), clk.now)
		}
		if spoke == 0 && elapsed >= time.Second {
			l.enqueue(outItem{pcm: speech[0]})
			l.enqueue(outItem{digit: '5'})
			l.enqueue(outItem{pcm: speech[1]})
			spoke++
		}
		if elapsed >= callLength && !l.stopping() {
			l.hangUpAt(clk.now)
		}
	}
	p := newPacer(clk)
	l.loops.Add(1)
	p.add(l)
	p.run() // until the leg is over

	// The recording: every frame of the call, nothing more.
	call := l.End().At.Sub(l.t0)
	recorded := time.Duration(len(recOurs)) * time.Second / Rate
	if len(recCaller) != len(recOurs) || recorded < call-media.FrameDuration || recorded > call+media.FrameDuration {
		t.Errorf("recording %v (caller %d, ours %d samples) for a %v call", recorded, len(recCaller), len(recOurs), call)
	}
	if d := (recorded - call).Abs(); d > call/100 {
		t.Errorf("recording off the call's length by %v, more than 1%%", d)
	}
	if want := pattern(0, fed*frame, 1); !slices.Equal(nonZero(recCaller), want) {
		t.Errorf("caller audio recorded: %d samples, want all %d fed, in order", len(nonZero(recCaller)), len(want))
	}
	if want := slices.Concat(speech...); !slices.Equal(nonZero(recOurs), want) {
		t.Errorf("agent speech recorded: %d samples, want all %d queued, in order", len(nonZero(recOurs)), len(want))
	}

	// The RTP: timestamps of wall time, whatever was skipped.
	sent := log.sent
	if len(sent) == 0 {
		t.Fatal("no RTP sent")
	}
	ts0 := sent[0].Timestamp
	var prevAudio *sentPacket
	var skipped, events, eventEnds int
	var eventTS uint32
	eventSince := false
	for i := range sent {
		p := &sent[i]
		if i > 0 && p.SequenceNumber != sent[i-1].SequenceNumber+1 {
			t.Fatalf("packet %d: sequence %d after %d", i, p.SequenceNumber, sent[i-1].SequenceNumber)
		}
		n := p.Timestamp - ts0
		if n%frame != 0 {
			t.Fatalf("packet %d: timestamp %d is not on a frame", i, n)
		}
		// An event's packets all carry its start; the rest, their frame's.
		isEvent := p.PayloadType == dmedia.CodecTelephoneEvent8000.PayloadType
		due := l.t0.Add(time.Duration(n/frame) * media.FrameDuration)
		if late := p.at.Sub(due); (!isEvent || events == 0) && (late < 0 || late >= maxBurst*media.FrameDuration) {
			t.Fatalf("packet %d (timestamp of frame %d) sent %v after that frame was due", i, n/frame, late)
		}
		if isEvent {
			if events == 0 {
				eventTS = p.Timestamp
				if !p.Marker || p.payload[0] != 5 {
					t.Errorf("first event packet: marker %v, event %d", p.Marker, p.payload[0])
				}
			} else if p.Timestamp != eventTS || p.Marker {
				t.Errorf("event packet %d: timestamp %d (the event's is %d), marker %v", events, p.Timestamp, eventTS, p.Marker)
			}
			if p.payload[1]&0x80 != 0 {
				eventEnds++
			}
			events, eventSince = events+1, true
			continue
		}
		switch {
		case prevAudio == nil:
			if !p.Marker {
				t.Errorf("the first packet has no marker bit")
			}
		case eventSince:
			if p.Timestamp < eventTS+eventFrames*frame {
				t.Errorf("audio at timestamp %d within the event at %d", p.Timestamp, eventTS)
			}
		default:
			gap := p.Timestamp != prevAudio.Timestamp+frame
			if gap != p.Marker {
				t.Errorf("packet %d: marker %v after a timestamp step of %d", i, p.Marker, p.Timestamp-prevAudio.Timestamp)
			}
			if gap {
				skipped += int(p.Timestamp-prevAudio.Timestamp)/frame - 1
			}
		}
		prevAudio, eventSince = p, false
	}
	if events < 2 || eventEnds == 0 || events > eventFrames {
		t.Errorf("the digit went as %d event packets, %d of them end packets", events, eventEnds)
	}
	total := int(call / media.FrameDuration)
	t.Logf("%d frames in the call, %d sent as audio or event packets, %d skipped", total, len(sent), skipped)
	if skipped < 20 {
		t.Errorf("only %d frames skipped: the clock was not late enough to test catching up", skipped)
	}
}

// Bridged audio that comes in a burst (the peer's clock caught up) is kept
// to maxCallerBacklog, oldest dropped; the agent's queued audio is not.
func TestBridgedAudioDoesNotPileUp(t *testing.T) {
	l := clockLeg(wallClock{}, nil)
	l.enqueue(outItem{pcm: pattern(0, Rate, -1)}) // 1 s of the agent
	for i := range 30 {
		l.enqueue(outItem{pcm: pattern(i*frame, frame, 1), live: true})
	}
	var agent, live int
	for _, it := range l.out {
		if it.live {
			live += len(it.pcm)
		} else {
			agent += len(it.pcm)
		}
	}
	if agent != Rate || live != maxCallerBacklog || l.outLive != live {
		t.Errorf("queued: %d agent samples, %d bridged (counted %d); want %d and %d", agent, live, l.outLive, Rate, maxCallerBacklog)
	}
	// What is left is the newest, in order.
	var got []int16
	for _, it := range l.out[1:] {
		got = append(got, it.pcm...)
	}
	if want := pattern(30*frame-maxCallerBacklog, maxCallerBacklog, 1); !slices.Equal(got, want) {
		t.Errorf("the bridged audio kept is not the newest")
	}
}

// setClock puts a UA's legs on clk.
func (u *UA) setClock(clk mediaClock) {
	u.clock, u.pacers = clk, newPacers(clk)
}

// Bridged audio comes as the peer's packets arrive, not on our clock: it
// starts playing once jitterDepth of it is queued, and after running dry
// waits for that much again, so packets a little late play in order
// instead of as gaps.
func TestBridgedAudioWaitsForJitterDepth(t *testing.T) {
	l := clockLeg(wallClock{}, nil)
	f := make([]int16, frame)
	take := func() []int16 {
		t.Helper()
		if _, isDigit := l.takeOurs(f); isDigit {
			t.Fatal("a digit where audio was queued")
		}
		return nonZero(f)
	}
	l.enqueue(outItem{pcm: pattern(0, frame, 1), live: true})
	if got := take(); len(got) != 0 {
		t.Fatalf("one bridged frame played at once (%d samples): no room for jitter", len(got))
	}
	l.enqueue(outItem{pcm: pattern(frame, frame, 1), live: true})
	for i := range 2 {
		if got := take(); !slices.Equal(got, pattern(i*frame, frame, 1)) {
			t.Fatalf("bridged frame %d: %d samples, not in order", i, len(got))
		}
	}
	// Dry: the next frame waits for a second one again.
	l.enqueue(outItem{pcm: pattern(2*frame, frame, 1), live: true})
	if got := take(); len(got) != 0 {
		t.Fatalf("after running dry a lone bridged frame played at once")
	}
}
