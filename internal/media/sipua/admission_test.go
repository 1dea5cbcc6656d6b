package sipua

import (
	"net/netip"
	"testing"
	"time"
)

func TestAdmissionBucketPerSource(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAdmission(Admission{Rate: 2, Burst: 3})
	a.now = func() time.Time { return now }
	one, two := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	for i := range 3 {
		if ok, _ := a.allow(one); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, retry := a.allow(one)
	if ok || retry != 500*time.Millisecond {
		t.Fatalf("fourth at once: ok %v, retry %v; want refused, 500ms (one token at 2/s)", ok, retry)
	}
	// Another source has its own bucket.
	if ok, _ := a.allow(two); !ok {
		t.Fatal("another source refused")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := a.allow(one); !ok {
		t.Fatal("refused after a token came back")
	}
	if ok, _ := a.allow(one); ok {
		t.Fatal("admitted with no token")
	}
	if admitted, refused := a.admitted.Load(), a.refused.Load(); admitted != 5 || refused != 2 {
		t.Fatalf("counts %d admitted, %d refused; want 5 and 2", admitted, refused)
	}
	// Full buckets are forgotten at the next sweep.
	now = now.Add(sweepEvery)
	a.allow(two)
	if _, kept := a.buckets[one]; kept || len(a.buckets) != 1 {
		t.Fatalf("after a sweep: %d buckets (%v)", len(a.buckets), a.buckets)
	}
}

func TestAdmissionOffAndDefaults(t *testing.T) {
	if newAdmission(Admission{}) != nil {
		t.Fatal("rate 0 must turn the limit off")
	}
	if a := newAdmission(Admission{Rate: 20}); a.burst != 100 {
		t.Fatalf("default burst %v, want 5 s of rate (100)", a.burst)
	}
	if a := newAdmission(Admission{Rate: 0.01}); a.burst != 1 {
		t.Fatalf("default burst %v, want at least 1", a.burst)
	}
}

func TestAdmissionSourcesBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAdmission(Admission{Rate: 1, Burst: 1})
	a.now = func() time.Time { return now }
	for i := range maxSources {
		a.allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	// Past the bound, new sources share one bucket.
	newcomer := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{11, 0, byte(i >> 8), byte(i)}) }
	if ok, _ := a.allow(newcomer(1)); !ok {
		t.Fatal("the shared bucket's first request refused")
	}
	if ok, _ := a.allow(newcomer(2)); ok {
		t.Fatal("a second new source past the bound was not limited with the first")
	}
	if len(a.buckets) != maxSources {
		t.Fatalf("%d buckets, want at most %d", len(a.buckets), maxSources)
	}
}

func TestAdmissionExemptSources(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAdmission(Admission{Rate: 1, Burst: 1, ExemptSources: []netip.Prefix{
		netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8::7/128")}})
	a.now = func() time.Time { return now }
	// An SBC (or a load generator) sends every call from one address, far
	// over the rate: none refused, and no bucket kept for it.
	for _, src := range []string{"198.51.100.9", "198.51.100.200", "2001:db8::7"} {
		for i := range 50 {
			if ok, _ := a.allow(netip.MustParseAddr(src)); !ok {
				t.Fatalf("exempt source %s: request %d refused", src, i+1)
			}
		}
	}
	if len(a.buckets) != 0 {
		t.Fatalf("%d buckets kept for exempt sources", len(a.buckets))
	}
	// Everyone else is still limited, neighbours of the exempt range too.
	for _, src := range []string{"198.51.101.9", "2001:db8::8"} {
		if ok, _ := a.allow(netip.MustParseAddr(src)); !ok {
			t.Fatalf("%s: first request refused", src)
		}
		if ok, _ := a.allow(netip.MustParseAddr(src)); ok {
			t.Fatalf("%s: second request at once admitted over a burst of 1", src)
		}
	}
	if admitted, refused := a.admitted.Load(), a.refused.Load(); admitted != 152 || refused != 2 {
		t.Fatalf("counts %d admitted, %d refused; want 152 and 2", admitted, refused)
	}
}
