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

// A US toll-free number may ring anywhere the North American plan reaches,
// from Guam to Pago Pago: a window must hold in every one of its zones.
func TestZonesOfATollFreeNumber(t *testing.T) {
	zones := Zones(model.CampaignRecipient{ToNumber: "+18005550100"}, "UTC")
	names := zoneNames(zones)
	for _, want := range []string{"America/New_York", "America/Chicago", "America/Los_Angeles", "Pacific/Honolulu", "America/St_Johns"} {
		if !slices.Contains(names, want) {
			t.Errorf("zones %v lack %s", names, want)
		}
	}
	// 09:00–17:00 every day never holds from Newfoundland to Guam at once.
	ws := []model.CallingWindow{win("09:00", "17:00")}
	at := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	if next, ok := NextOpen(ws, zones, at); ok {
		t.Errorf("a business-hours window opens at %s in every zone", next)
	}
	// 08:00–21:00 does, late in the day in Newfoundland (UTC−2:30 in
	// summer), early in the morning in Guam (UTC+10).
	wide := []model.CallingWindow{win("08:00", "21:00")}
	next, ok := NextOpen(wide, zones, at)
	if !ok || !Open(wide, zones, next) {
		t.Fatalf("8–21: next %s %v", next, ok)
	}
	for _, z := range zones {
		if h := next.In(z).Hour(); h < 8 || h >= 21 {
			t.Errorf("opens at %s in %s", next.In(z).Format("15:04"), z)
		}
	}
}

func BenchmarkZones(b *testing.B) {
	r := model.CampaignRecipient{ToNumber: "+14155550100"}
	for b.Loop() {
		Zones(r, "UTC")
	}
}
