package campaign

import (
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

func zoneNames(zones []*time.Location) []string {
	var names []string
	for _, z := range zones {
		names = append(names, z.String())
	}
	return names
}

func TestZones(t *testing.T) {
	for _, c := range []struct {
		number string
		own    *string
		want   []string
	}{
		{"+12125550100", nil, []string{"America/New_York"}},
		{"+14155550100", nil, []string{"America/Los_Angeles"}},
		{"+442071234567", nil, []string{"Europe/London"}},
		{"+819012345678", nil, []string{"Asia/Tokyo"}},
		{"+919812345678", nil, []string{"Asia/Calcutta"}}, // the data's name for Asia/Kolkata
		// Its own zone wins over its number's.
		{"+12125550100", new("Europe/Paris"), []string{"Europe/Paris"}},
		// One its number's data cannot place: the campaign's.
		{"+80012345678", nil, []string{"America/Chicago"}},
		{"+99912345", nil, []string{"America/Chicago"}},
		// An own zone that does not load is passed over.
		{"+442071234567", new("Mars/Base"), []string{"Europe/London"}},
	} {
		got := zoneNames(Zones(model.CampaignRecipient{ToNumber: c.number, Timezone: c.own}, "America/Chicago"))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s (own %v): zones %v, want %v", c.number, c.own, got, c.want)
		}
	}
	if got := zoneNames(Zones(model.CampaignRecipient{ToNumber: "+80012345678"}, "")); !slices.Equal(got, []string{"UTC"}) {
		t.Errorf("no zone at all: %v", got)
	}
}

// A number whose place cannot be told goes by the campaign's zone: the
// data gives a US toll-free number, or an unknown area code, all 42 zones
// of the North American plan, in which 09:00–17:00 never holds at once.
func TestZonesOfNumbersThatCannotBePlaced(t *testing.T) {
	for _, n := range []string{"+18005550100", "+18885550100", "+19995550100"} {
		if got := zoneNames(Zones(model.CampaignRecipient{ToNumber: n}, "America/Chicago")); !slices.Equal(got, []string{"America/Chicago"}) {
			t.Errorf("%s: zones %v, want the campaign's", n, got)
		}
	}
}

// An area code that spans a zone line is called only while the window is
// open on both sides of it: Idaho's 208 is in Boise's zone and Los
// Angeles', so 09:00–17:00 opens at 09:00 Pacific (10:00 Mountain) and
// closes at 17:00 Mountain (16:00 Pacific).
func TestWindowOverAnAreaCodeSpanningZones(t *testing.T) {
	zones := Zones(model.CampaignRecipient{ToNumber: "+12085550100"}, "UTC")
	if got := zoneNames(zones); !slices.Equal(got, []string{"America/Boise", "America/Los_Angeles"}) {
		t.Fatalf("zones %v", got)
	}
	ws := []model.CallingWindow{testWindow("09:00", "17:00")}
	la, _ := time.LoadLocation("America/Los_Angeles")
	at := time.Date(2026, 6, 10, 8, 30, 0, 0, la)
	next, ok := NextOpen(ws, zones, at)
	if want := time.Date(2026, 6, 10, 9, 0, 0, 0, la); !ok || !next.Equal(want) {
		t.Errorf("opens at %s, want %s", next, want)
	}
	if Open(ws, zones, time.Date(2026, 6, 10, 16, 30, 0, 0, la)) {
		t.Error("open at 16:30 Pacific, 17:30 Mountain")
	}
	if !Open(ws, zones, time.Date(2026, 6, 10, 15, 59, 0, 0, la)) {
		t.Error("closed at 15:59 Pacific, 16:59 Mountain")
	}
}

func BenchmarkZones(b *testing.B) {
	r := model.CampaignRecipient{ToNumber: "+14155550100"}
	for b.Loop() {
		Zones(r, "UTC")
	}
}
