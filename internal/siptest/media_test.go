package siptest

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tone1k_pcmu.wav")

// linearToULaw is G.711 μ-law encoding of one 16-bit sample.
func linearToULaw(s int16) byte {
	const bias, clip = 0x84, 32635
	v := int(s)
	sign := byte(0)
	if v < 0 {
		v, sign = -v, 0x80
	}
	v = min(v, clip) + bias
	exp := 7
	for mask := 0x4000; v&mask == 0 && exp > 0; mask >>= 1 {
		exp--
	}
	mant := byte(v>>(exp+3)) & 0x0f
	return ^(sign | byte(exp)<<4 | mant)
}

// uLawToLinear is G.711 μ-law decoding.
func uLawToLinear(u byte) int16 {
	u = ^u
	t := (int(u&0x0f)<<3 + 0x84) << ((u & 0x70) >> 4)
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

// toneWAVFile is one second of a 1 kHz sine at half scale, 8 kHz mono
// G.711 μ-law (WAVE format 7), as sipp's rtp_stream plays it with payload 0.
func toneWAVFile() []byte {
	const rate, n = 8000, 8000
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(0.5 * 32767 * math.Sin(2*math.Pi*1000*float64(i)/rate))
	}
	return ULawWAV(pcm)
}

// zeroCrossingHz estimates a tone's frequency from μ-law samples at 8 kHz.
func zeroCrossingHz(ulaw []byte) float64 {
	crossings := 0
	prev := uLawToLinear(ulaw[0])
	for _, u := range ulaw[1:] {
		s := uLawToLinear(u)
		if (prev < 0) != (s < 0) {
			crossings++
		}
		prev = s
	}
	return float64(crossings) / 2 / (float64(len(ulaw)) / 8000)
}

func TestToneWAV(t *testing.T) {
	want := toneWAVFile()
	if *update {
		if err := os.WriteFile("testdata/tone1k_pcmu.wav", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(toneWAV, want) {
		t.Fatal("testdata/tone1k_pcmu.wav differs from toneWAVFile(); regenerate with go test -run TestToneWAV -update")
	}
	data := toneWAV[len(toneWAV)-8000:]
	if hz := zeroCrossingHz(data); math.Abs(hz-1000) > 10 {
		t.Fatalf("tone is %.0f Hz, want 1000", hz)
	}
	for i, s := range []int16{0, 100, -100, 1000, -5000, 16000, -32768, 32767} {
		got := uLawToLinear(linearToULaw(s))
		if d := math.Abs(float64(got) - float64(s)); d > math.Abs(float64(s))/16+8 {
			t.Errorf("%d: μ-law round trip of %d gave %d", i, s, got)
		}
	}
}

func TestDTMFPcap(t *testing.T) {
	pcap, err := dtmfPcap("1#")
	if err != nil {
		t.Fatal(err)
	}
	le, be := binary.LittleEndian, binary.BigEndian
	if le.Uint32(pcap) != 0xa1b2c3d4 || le.Uint32(pcap[20:]) != 1 {
		t.Fatal("not a microsecond Ethernet pcap")
	}
	type ev struct {
		event, flags byte
		duration     uint16
		ts           uint32
		marker       bool
	}
	var got []ev
	for off := 24; off < len(pcap); {
		n := int(le.Uint32(pcap[off+8:]))
		frame := pcap[off+16 : off+16+n]
		rtp := frame[14+20+8:]
		if rtp[1]&0x7f != 101 {
			t.Fatalf("payload type %d", rtp[1]&0x7f)
		}
		got = append(got, ev{rtp[12], rtp[13], be.Uint16(rtp[14:]), be.Uint32(rtp[4:]), rtp[1]&0x80 != 0})
		off += 16 + n
	}
	if len(got) != 2*(dtmfPackets+dtmfEndRepeat) {
		t.Fatalf("%d packets, want %d", len(got), 2*(dtmfPackets+dtmfEndRepeat))
	}
	first, second := got[0], got[dtmfPackets+dtmfEndRepeat]
	if first.event != 1 || !first.marker || second.event != 11 || !second.marker {
		t.Errorf("events %+v, %+v: want 1 and 11 (#), each starting with the marker bit", first, second)
	}
	if second.ts == first.ts {
		t.Error("two events share an RTP timestamp")
	}
	last := got[dtmfPackets+dtmfEndRepeat-1]
	if last.flags&0x80 == 0 || last.duration != 800 || last.ts != first.ts {
		t.Errorf("end packet %+v: want the E bit, duration 800 and the event's timestamp", last)
	}
	if _, err := dtmfPcap("12x"); err == nil {
		t.Error("digit x accepted")
	}
}
