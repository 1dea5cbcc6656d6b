package sipua

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emiago/diago"
	dmedia "github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	"github.com/pion/rtcp"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// lateClock is the wall clock for a goroutine starved of CPU: every third
// sleep wakes 80 ms late, and one 500 ms late.
type lateClock struct{ sleeps atomic.Int64 }

func (*lateClock) Now() time.Time { return time.Now() }

func (c *lateClock) Sleep(d time.Duration) {
	switch n := c.sleeps.Add(1); {
	case n == 60:
		d += 500 * time.Millisecond
	case n%3 == 0:
		d += 80 * time.Millisecond
	}
	time.Sleep(d)
}

// heardPacket is an RTP packet as the far end got it.
type heardPacket struct {
	seq      uint16
	ts       uint32
	pt       uint8
	marker   bool
	payload0 byte // the event code, for telephone-events
	end      bool // an event's end bit
	at       time.Time
}

// rtpProbe is a far end that answers one call and keeps every RTP packet
// it gets, with its arrival time: plain diago, none of our leg's code.
type rtpProbe struct {
	addr    string
	packets chan []heardPacket      // one list, once the call is over
	reports chan *rtcp.SenderReport // RTCP sender reports as they come
}

func startRTPProbe(t *testing.T) *rtpProbe {
	t.Helper()
	port, hold, err := reservePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	hold.release() // the probe's own UA binds it next
	ua, err := sipgo.NewUA()
	if err != nil {
		t.Fatal(err)
	}
	dg := diago.NewDiago(ua, diago.WithLogger(discard()),
		diago.WithTransport(diago.Transport{Transport: "udp", BindHost: "127.0.0.1", BindPort: port}))
	p := &rtpProbe{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), packets: make(chan []heardPacket, 1),
		reports: make(chan *rtcp.SenderReport, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	var serving sync.WaitGroup
	err = dg.ServeBackground(ctx, func(d *diago.DialogServerSession) {
		serving.Add(1)
		defer serving.Done()
		if err := d.Answer(); err != nil {
			return
		}
		d.Media().RTPSession().OnReadRTCP(func(pkt rtcp.Packet, _ dmedia.RTPReadStats) {
			if sr, ok := pkt.(*rtcp.SenderReport); ok {
				select {
				case p.reports <- sr:
				default:
				}
			}
		})
		read := make(chan []heardPacket, 1)
		go func() { read <- readRTP(d.Media().RTPPacketReader) }()
		<-d.Context().Done()
		_ = d.Media().Close() // ends readRTP
		p.packets <- <-read
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		serving.Wait()
		ua.Close()
	})
	return p
}

func readRTP(r *dmedia.RTPPacketReader) []heardPacket {
	var got []heardPacket
	buf := make([]byte, dmedia.RTPBufSize)
	for {
		n, err := r.Read(buf)
		if err != nil {
			return got
		}
		h := r.PacketHeader
		p := heardPacket{seq: h.SequenceNumber, ts: h.Timestamp, pt: h.PayloadType, marker: h.Marker, at: time.Now()}
		if n >= 2 {
			p.payload0, p.end = buf[0], buf[1]&0x80 != 0
		}
		got = append(got, p)
	}
}

// On the wire, a leg whose clock wakes late (as a starved goroutine does)
// still sends RTP whose timestamps follow wall time: the far end sees
// continuous sequence numbers, timestamps on frame boundaries that do not
// drift behind the packets' arrival, and a digit as one RFC 4733 event; the
// recording lasts as long as the leg.
func TestLateClockOnTheWire(t *testing.T) {
	probe := startRTPProbe(t)
	caller := newTestUA(t, nil)
	clk := &lateClock{}
	caller.setClock(clk)
	host, port := splitHostPort(probe.addr)
	out, err := caller.Dial(context.Background(), Target{Host: host, Port: port, User: "probe", FromUser: "+15550001111", RingTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	attached := time.Now()
	var frames atomic.Int64
	out.SetRecorder(func(caller, ours []int16) {
		if len(caller) != frame || len(ours) != frame {
			t.Errorf("recorder got %d and %d samples, want a frame each", len(caller), len(ours))
		}
		frames.Add(1)
	})
	a := out.Audio(Rate)
	_ = a.Write(audio.Tone(1000, Rate, time.Second, 0.5))
	if err := out.SendDigits(context.Background(), "7"); err != nil {
		t.Fatal(err)
	}
	_ = a.Write(audio.Tone(440, Rate, time.Second, 0.5))
	// Past the 500 ms wake (the 60th sleep), and 3 s into the call.
	deadline := time.Now().Add(30 * time.Second)
	for clk.sleeps.Load() < 90 || time.Since(out.t0) < 3*time.Second {
		if time.Now().After(deadline) {
			t.Fatalf("the clock slept %d times in 30 s", clk.sleeps.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := out.Hangup(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The recording: every frame from when it was attached to the end, at
	// most those since the leg began (a frame is recorded when it starts).
	recorded := time.Duration(frames.Load()) * media.FrameDuration
	end := out.End().At
	if recorded < end.Sub(attached)-media.FrameDuration || recorded > end.Sub(out.t0)+media.FrameDuration {
		t.Errorf("recorded %v of a leg that lasted %v (%v with the recorder)", recorded, end.Sub(out.t0), end.Sub(attached))
	}

	var got []heardPacket
	select {
	case got = <-probe.packets:
	case <-time.After(10 * time.Second):
		t.Fatal("the far end did not see the call end")
	}
	if len(got) < 50 {
		t.Fatalf("the far end got %d RTP packets", len(got))
	}
	first := got[0]
	var drift []time.Duration
	var events, ends int
	for i, p := range got {
		if i > 0 && p.seq != got[i-1].seq+1 {
			t.Fatalf("packet %d: sequence %d after %d", i, p.seq, got[i-1].seq)
		}
		if (p.ts-first.ts)%frame != 0 {
			t.Fatalf("packet %d: timestamp %d is not on a frame", i, p.ts-first.ts)
		}
		if p.pt == dmedia.CodecTelephoneEvent8000.PayloadType {
			if p.payload0 != 7 {
				t.Errorf("event %d, want 7", p.payload0)
			}
			events++
			if p.end {
				ends++
			}
			continue
		}
		// How far the packet's timestamp is behind its arrival.
		drift = append(drift, p.at.Sub(first.at)-time.Duration(p.ts-first.ts)*time.Second/Rate)
	}
	if events == 0 || ends == 0 {
		t.Errorf("the digit came as %d event packets, %d with the end bit", events, ends)
	}
	// A clock that did not catch up would be behind by all the time it
	// overslept (2 s and more by now); this one is behind by at most a
	// burst, give or take the machine's scheduling.
	tail := slices.Clone(drift[len(drift)-25:])
	slices.Sort(tail)
	t.Logf("%d packets; drift of the last 25: min %v, median %v, max %v", len(got), tail[0], tail[12], tail[24])
	if tail[12] > 100*time.Millisecond {
		t.Errorf("RTP timestamps drifted %v behind wall time", tail[12])
	}
}

// A leg sends RTCP sender reports (its pacer does, in place of diago's
// goroutines) that count the RTP the far end got.
func TestSenderReports(t *testing.T) {
	probe := startRTPProbe(t)
	caller := newTestUA(t, nil)
	host, port := splitHostPort(probe.addr)
	out, err := caller.Dial(context.Background(), Target{Host: host, Port: port, User: "probe", FromUser: "+15550001111", RingTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sr *rtcp.SenderReport
	select {
	case sr = <-probe.reports:
	case <-time.After(30 * time.Second):
		t.Fatal("no sender report in 30 s")
	}
	if err := out.Hangup(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []heardPacket
	select {
	case got = <-probe.packets:
	case <-time.After(10 * time.Second):
		t.Fatal("the far end did not see the call end")
	}
	// The report came while the RTP went on: it counts some of it, not more.
	if sr.PacketCount == 0 || int(sr.PacketCount) > len(got) || sr.OctetCount != sr.PacketCount*frame {
		t.Errorf("sender report of %d packets, %d octets; the far end got %d packets", sr.PacketCount, sr.OctetCount, len(got))
	}
}

// A leg that hears no RTP for MediaTimeout ends itself and sends BYE.
func TestMediaTimeoutHangsUp(t *testing.T) {
	probe := startRTPProbe(t) // answers and never sends RTP
	caller, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MediaTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(context.Background(), func(ctx context.Context, in *Incoming) {}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caller.Close() })
	host, port := splitHostPort(probe.addr)
	out, err := caller.Dial(context.Background(), Target{Host: host, Port: port, User: "probe", FromUser: "+15550001111", RingTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-out.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the leg did not end without RTP")
	}
	if e := out.End(); e.Remote || !strings.HasPrefix(e.Reason, "media timeout") {
		t.Errorf("leg ended %+v, want a local media timeout", e)
	}
	select {
	case <-probe.packets: // the far end saw our BYE
	case <-time.After(10 * time.Second):
		t.Fatal("the far end did not see the call end")
	}
}
