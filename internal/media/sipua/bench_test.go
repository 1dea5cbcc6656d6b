package sipua

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCallSetup measures one call between two user agents on
// loopback: INVITE, 100/180/200 with SDP answer, ACK, RTP sessions up,
// then BYE. It is the SIP and media floor under every call's answer time.
func BenchmarkCallSetup(b *testing.B) {
	callee, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: 10000})
	if err != nil {
		b.Fatal(err)
	}
	err = callee.Start(context.Background(), func(ctx context.Context, in *Incoming) {
		if leg, err := in.Answer(); err == nil {
			<-leg.Done()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer callee.Close()
	caller, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: 10000})
	if err != nil {
		b.Fatal(err)
	}
	if err := caller.Start(context.Background(), func(ctx context.Context, in *Incoming) {}); err != nil {
		b.Fatal(err)
	}
	defer caller.Close()
	host, port := splitHostPort(callee.Addr())
	t := Target{Host: host, Port: port, User: "+15552223333", FromUser: "+15550001111"}
	b.ResetTimer()
	for b.Loop() {
		leg, err := caller.Dial(context.Background(), t, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = leg.Hangup(context.Background())
		b.StartTimer()
	}
}

// discardRTP is a socket that sends nowhere.
type discardRTP struct{}

func (discardRTP) writeRTP([]byte) error { return nil }

// BenchmarkLegFrame measures one 20 ms frame of a leg: hand the caller's
// audio to the reader, encode and packetize ours, record both. Issue 15 runs 1,000 legs (50,000 frames a
// second) on two cores.
func BenchmarkLegFrame(b *testing.B) {
	l := clockLeg(wallClock{}, discardRTP{})
	l.SetRecorder(func(caller, ours []int16) {})
	speech := pattern(0, frame, 1)
	a := l.Audio(Rate)
	b.ReportAllocs()
	for b.Loop() {
		l.receive(speech, time.Time{})
		l.enqueue(outItem{pcm: speech})
		if err := l.tick(true); err != nil {
			b.Fatal(err)
		}
		if _, err := a.Read(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
