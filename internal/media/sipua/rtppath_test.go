package sipua

import (
	"context"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"

	dmedia "github.com/emiago/diago/media"
)

// udpConn is a UDP socket on loopback, closed with the test.
func udpConn(tb testing.TB) *net.UDPConn {
	tb.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// socketLegs are two legs at codec, no dialog, each on its own loopback
// socket sending its RTP to the other's: the media path of a call as the
// pacer and the RTP reader drive it, without SIP.
func socketLegs(tb testing.TB, codec dmedia.Codec) (a, b *Leg) {
	tb.Helper()
	ca, cb := udpConn(tb), udpConn(tb)
	leg := func(own, far *net.UDPConn) *Leg {
		s := newUDPSink(own, *far.LocalAddr().(*net.UDPAddr), false)
		l := newMediaLeg(wallClock{}, codec, s)
		l.conn = own
		return l
	}
	return leg(ca, cb), leg(cb, ca)
}

// The steady media path allocates nothing per frame: each leg's pacer
// sends a frame of queued speech and records both sides, each leg's RTP
// reader reads the other's packet off its socket, decodes it and queues it
// for the Audio reader (and the recording). The Audio reader's Read makes
// one allocation a frame, the frame it returns (media.Audio lets the
// engine keep it), and no more.
func TestSteadyMediaPathAllocations(t *testing.T) {
	for _, codec := range []dmedia.Codec{codecG722, dmedia.CodecAudioUlaw} {
		t.Run(codec.Name, func(t *testing.T) {
			a, b := socketLegs(t, codec)
			speech := pattern(0, 60*a.rate, 1) // a minute: it never runs out
			scratch := make([]int16, a.frame)
			for _, l := range []*Leg{a, b} {
				l.SetRecorder(func(caller, ours []int16) {})
				l.enqueue(outItem{pcm: speech})
			}
			frame := func() {
				for _, l := range []*Leg{a, b} {
					if err := l.tick(true); err != nil {
						t.Fatal(err)
					}
				}
				for _, l := range []*Leg{a, b} {
					if err := l.readPacket(); err != nil {
						t.Fatal(err)
					}
					l.trimBacklog()
					l.mu.Lock()
					l.in.pop(scratch)
					l.mu.Unlock()
				}
			}
			frame() // the first packets: RTP state set up
			if n := testing.AllocsPerRun(500, frame); n != 0 {
				t.Errorf("%.1f allocations a frame on the steady path, want 0", n)
			}
			// Read at the leg's rate (resampling allocates the same one frame).
			r := b.Audio(b.rate)
			read := func() {
				if err := a.tick(true); err != nil {
					t.Fatal(err)
				}
				if err := b.readPacket(); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Read(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if n := testing.AllocsPerRun(500, read); n != 1 {
				t.Errorf("%.1f allocations a frame read, want 1 (the frame returned)", n)
			}
		})
	}
}

// BenchmarkRTPSend is the pacer's cost of one frame of a leg's speech on
// the wire: take it from the queue, encode it into the packet, send it on
// the leg's socket.
func BenchmarkRTPSend(b *testing.B) {
	l, _ := socketLegs(b, dmedia.CodecAudioUlaw)
	benchSpeechTicks(b, l)
}

// benchSpeechTicks times l's pacer sending ten minutes of speech, a frame
// an op.
func benchSpeechTicks(b *testing.B, l *Leg) {
	l.enqueue(outItem{pcm: pattern(0, 600*l.rate, 1)})
	b.ReportAllocs()
	m := startCPU()
	for b.Loop() {
		if err := l.tick(true); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b)
}

// BenchmarkRTPReceive is the cost of one frame of the caller's from the
// wire to the engine: read its packet off the leg's socket, parse and
// decode it, queue it, and the Audio reader's Read. Packets are sent
// (untimed) in batches the socket's buffer holds.
func BenchmarkRTPReceive(b *testing.B) {
	far, l := socketLegs(b, dmedia.CodecAudioUlaw)
	far.enqueue(outItem{pcm: pattern(0, 600*far.rate, 1)})
	r := l.Audio(l.rate)
	const batch = 64
	b.ReportAllocs()
	m := startCPU()
	i := 0
	for b.Loop() {
		if i%batch == 0 {
			m.pause()
			b.StopTimer()
			for range batch {
				if err := far.tick(true); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			m.resume()
		}
		i++
		if err := l.readPacket(); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Read(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b)
}

// BenchmarkRTPPacketize is BenchmarkRTPSend without the system call: what
// the leg itself spends on a packet of speech.
func BenchmarkRTPPacketize(b *testing.B) {
	benchSpeechTicks(b, newMediaLeg(wallClock{}, dmedia.CodecAudioUlaw, discardRTP{}))
}

// BenchmarkSendto is the floor under BenchmarkRTPSend: one sendto of a
// packet's size on loopback.
func BenchmarkSendto(b *testing.B) {
	c, far := udpConn(b), udpConn(b)
	to := far.LocalAddr().(*net.UDPAddr).AddrPort()
	pkt := make([]byte, rtpHeaderLen+frame)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.WriteToUDPAddrPort(pkt, to); err != nil {
			b.Fatal(err)
		}
	}
}

// threadCPU is the CPU time, user and system, of the calling OS thread
// (RUSAGE_THREAD): benchmarks report it per op, as it is less at the mercy
// of other processes on a shared machine than the wall time.
func threadCPU() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(1, &r) // RUSAGE_THREAD
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

// cpuMeter adds up a benchmark's thread CPU time while it runs.
type cpuMeter struct {
	total, mark time.Duration
}

func startCPU() *cpuMeter {
	runtime.LockOSThread()
	return &cpuMeter{mark: threadCPU()}
}
func (m *cpuMeter) pause()  { m.total += threadCPU() - m.mark }
func (m *cpuMeter) resume() { m.mark = threadCPU() }
func (m *cpuMeter) report(b *testing.B) {
	m.pause()
	runtime.UnlockOSThread()
	b.ReportMetric(float64(m.total.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
