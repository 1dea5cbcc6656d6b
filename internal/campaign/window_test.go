package campaign

import (
	"github.com/nyaruka/phonenumbers"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

func testZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

var allWeek = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

func testWindow(start, end string, days ...string) model.CallingWindow {
	if len(days) == 0 {
		days = allWeek
	}
	return model.CallingWindow{Days: days, Start: start, End: end}
}

func TestOpenInEachZone(t *testing.T) {
	business := []model.CallingWindow{testWindow("09:00", "17:00", "mon", "tue", "wed", "thu", "fri")}
	// Wednesday 2026-06-10 (northern summer: New York UTC−4, Los Angeles
	// UTC−7, London UTC+1; Tokyo UTC+9 and Kolkata UTC+5:30 all year).
	day := func(h, m int) time.Time { return time.Date(2026, 6, 10, h, m, 0, 0, time.UTC) }
	for _, c := range []struct {
		testZone string
		at       time.Time
		open     bool
	}{
		{"America/New_York", day(12, 59), false},
		{"America/New_York", day(13, 0), true}, // 09:00 EDT
		{"America/New_York", day(20, 59), true},
		{"America/New_York", day(21, 0), false}, // 17:00 EDT: the end is not in the window
		{"America/Los_Angeles", day(15, 59), false},
		{"America/Los_Angeles", day(16, 0), true},
		{"Europe/London", day(7, 59), false},
		{"Europe/London", day(8, 0), true},
		{"Asia/Tokyo", day(0, 0), true},     // 09:00 JST
		{"Asia/Tokyo", day(8, 0), false},    // 17:00 JST
		{"Asia/Kolkata", day(3, 29), false}, // 08:59 IST
		{"Asia/Kolkata", day(3, 30), true},  // 09:00 IST
		{"Asia/Kolkata", day(11, 29), true},
		{"Asia/Kolkata", day(11, 30), false},
		// Each zone's own weekday counts: Friday afternoon in Los Angeles is
		// already Saturday in Tokyo.
		{"Asia/Tokyo", time.Date(2026, 6, 12, 15, 30, 0, 0, time.UTC), false},         // sat 00:30 JST
		{"America/Los_Angeles", time.Date(2026, 6, 12, 23, 30, 0, 0, time.UTC), true}, // fri 16:30 PDT
		{"America/Los_Angeles", time.Date(2026, 6, 13, 17, 0, 0, 0, time.UTC), false}, // sat 10:00 PDT
	} {
		if got := Open(business, []*time.Location{testZone(t, c.testZone)}, c.at); got != c.open {
			t.Errorf("%s at %s: open = %v, want %v", c.testZone, c.at.Format(time.RFC3339), got, c.open)
		}
	}
}

func TestOpenWithoutWindowsOrZones(t *testing.T) {
	at := time.Date(2026, 6, 10, 3, 0, 0, 0, time.UTC)
	if !Open(nil, []*time.Location{time.UTC}, at) {
		t.Error("no windows: closed")
	}
	if next, ok := NextOpen(nil, nil, at); !ok || !next.Equal(at) {
		t.Errorf("no windows: next %v %v", next, ok)
	}
	w := []model.CallingWindow{testWindow("09:00", "17:00")}
	if Open(w, nil, at) || !Open(w, nil, at.Add(6*time.Hour)) {
		t.Error("no zones is not UTC")
	}
}

func TestWeekendWindows(t *testing.T) {
	ws := []model.CallingWindow{
		testWindow("09:00", "12:00", "sat"),
		testWindow("13:00", "24:00", "sun"),
		testWindow("18:00", "20:00", "mon", "tue", "wed", "thu", "fri"),
	}
	la := []*time.Location{testZone(t, "America/Los_Angeles")}
	pdt := func(d, h, m int) time.Time { return time.Date(2026, 6, d, h, m, 0, 0, la[0]) }
	for _, c := range []struct {
		from, want time.Time
	}{
		{pdt(12, 20, 0), pdt(13, 9, 0)},  // fri 20:00 → sat 09:00
		{pdt(13, 11, 0), pdt(13, 11, 0)}, // inside
		{pdt(13, 12, 0), pdt(14, 13, 0)}, // sat noon → sun 13:00
		{pdt(14, 23, 59), pdt(14, 23, 59)},
		{pdt(15, 0, 0), pdt(15, 18, 0)}, // mon midnight (24:00 ended sunday's) → mon 18:00
		{pdt(15, 18, 0).Add(-time.Second), pdt(15, 18, 0)},
	} {
		got, ok := NextOpen(ws, la, c.from)
		if !ok || !got.Equal(c.want) {
			t.Errorf("from %s: next %s %v, want %s", c.from, got, ok, c.want)
		}
	}
}

// A 09:00–17:00 window opens at 09:00 local on the days clocks change.
func TestNextOpenAcrossDST(t *testing.T) {
	ny := testZone(t, "America/New_York")
	zones := []*time.Location{ny}
	business := []model.CallingWindow{testWindow("09:00", "17:00")}
	for _, c := range []struct {
		name       string
		from, want time.Time
	}{
		// Spring forward, Sunday 2026-03-08 at 02:00 EST → 03:00 EDT.
		{"spring: from the evening before", time.Date(2026, 3, 7, 22, 0, 0, 0, ny), time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)},
		{"spring: from 01:00 EST", time.Date(2026, 3, 8, 6, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)},
		// Fall back, Sunday 2026-11-01 at 02:00 EDT → 01:00 EST.
		{"fall: from the evening before", time.Date(2026, 10, 31, 22, 0, 0, 0, ny), time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC)},
		{"fall: from the first 01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC)},
		{"fall: closing on the day", time.Date(2026, 11, 1, 17, 0, 0, 0, ny), time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC)},
	} {
		got, ok := NextOpen(business, zones, c.from)
		if !ok || !got.Equal(c.want) {
			t.Errorf("%s: next %s %v, want %s", c.name, got.In(ny), ok, c.want.In(ny))
		}
		if !Open(business, zones, got) || Open(business, zones, got.Add(-time.Minute)) {
			t.Errorf("%s: %s is not where the window opens", c.name, got.In(ny))
		}
	}
	// 17:00 local ends the window on both days.
	if Open(business, zones, time.Date(2026, 3, 8, 21, 0, 0, 0, time.UTC)) || !Open(business, zones, time.Date(2026, 3, 8, 20, 59, 0, 0, time.UTC)) {
		t.Error("spring: the window does not end at 17:00 EDT")
	}
	if Open(business, zones, time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC)) || !Open(business, zones, time.Date(2026, 11, 1, 21, 59, 0, 0, time.UTC)) {
		t.Error("fall: the window does not end at 17:00 EST")
	}

	// A window starting at 02:30, a time that does not exist on the day
	// clocks spring forward, opens when the clock jumps to 03:00.
	early := []model.CallingWindow{testWindow("02:30", "04:00")}
	got, ok := NextOpen(early, zones, time.Date(2026, 3, 8, 0, 0, 0, 0, ny))
	if want := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC); !ok || !got.Equal(want) { // 03:00 EDT
		t.Errorf("02:30 on the spring day: next %s, want %s", got.In(ny), want.In(ny))
	}
	// A window starting at 01:30, a time that happens twice when clocks
	// fall back, opens at the first.
	night := []model.CallingWindow{testWindow("01:30", "01:45")}
	got, ok = NextOpen(night, zones, time.Date(2026, 11, 1, 0, 0, 0, 0, ny))
	if want := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC); !ok || !got.Equal(want) { // 01:30 EDT
		t.Errorf("01:30 on the fall day: next %s, want %s", got, want)
	}
	// ... and, once that has passed, at the second.
	got, ok = NextOpen(night, zones, time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC))
	if want := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC); !ok || !got.Equal(want) { // 01:30 EST
		t.Errorf("second 01:30 on the fall day: next %s, want %s", got, want)
	}
	// A window that the repeated hour enters again (01:00–01:59): open
	// from the instant clocks fall back.
	got, ok = NextOpen([]model.CallingWindow{testWindow("01:00", "01:59")}, zones, time.Date(2026, 11, 1, 5, 59, 0, 0, time.UTC))
	if want := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC); !ok || !got.Equal(want) { // 01:00 EST
		t.Errorf("repeated hour: next %s, want %s", got, want)
	}
}

// Several zones: the window must hold in all of them at once.
func TestNextOpenSeveralZones(t *testing.T) {
	ws := []model.CallingWindow{testWindow("09:00", "17:00")}
	ny, la := testZone(t, "America/New_York"), testZone(t, "America/Los_Angeles")
	from := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC) // 08:00 EDT, 05:00 PDT
	got, ok := NextOpen(ws, []*time.Location{ny, la}, from)
	if want := time.Date(2026, 6, 10, 16, 0, 0, 0, time.UTC); !ok || !got.Equal(want) { // 12:00 EDT, 09:00 PDT
		t.Errorf("New York and Los Angeles: next %s, want %s", got, want)
	}
	if !Open(ws, []*time.Location{ny, la}, got.Add(4*time.Hour+59*time.Minute)) || Open(ws, []*time.Location{ny, la}, got.Add(5*time.Hour)) {
		t.Error("the shared window is not 09:00–14:00 PDT")
	}
	// Tokyo and Los Angeles never share 09:00–17:00.
	if got, ok := NextOpen(ws, []*time.Location{testZone(t, "Asia/Tokyo"), la}, from); ok {
		t.Errorf("Tokyo and Los Angeles: next %s", got)
	}
	// After today's window, tomorrow's; a window once a week is found a
	// week ahead.
	if got, ok := NextOpen(ws, []*time.Location{time.UTC}, time.Date(2026, 6, 10, 17, 0, 0, 0, time.UTC)); !ok || !got.Equal(time.Date(2026, 6, 11, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("next day: %s %v", got, ok)
	}
	monthly := []model.CallingWindow{testWindow("09:00", "17:00", "mon")}
	if _, ok := NextOpen(monthly, []*time.Location{time.UTC}, time.Date(2026, 6, 8, 17, 0, 0, 0, time.UTC)); !ok {
		t.Error("next monday (7 days less 8 hours ahead) not found")
	}
}

// NextOpen agrees with Open minute by minute: it answers the first open
// minute, and false when none is open within 8 days, across the changes of
// 2026 in several zones.
func TestNextOpenAgreesWithOpen(t *testing.T) {
	zones := [][]*time.Location{
		{testZone(t, "America/New_York")},
		{testZone(t, "Europe/London"), testZone(t, "America/New_York")},
		{testZone(t, "Australia/Lord_Howe")}, // clocks change by 30 minutes
		{testZone(t, "Asia/Kolkata"), testZone(t, "Europe/Berlin")},
		{testZone(t, "Asia/Tokyo"), testZone(t, "America/Los_Angeles")},
	}
	windows := [][]model.CallingWindow{
		{testWindow("09:00", "17:00", "mon", "tue", "wed", "thu", "fri")},
		{testWindow("01:30", "02:15"), testWindow("13:00", "24:00", "sun")},
		{testWindow("00:00", "00:30", "sat", "sun"), testWindow("02:00", "03:00")},
		{testWindow("02:30", "03:30")}, // clocks springing forward jump into it
	}
	const clockSpan = 3 * 24 * 60 // minutes of starting points
	const ahead = int(windowLookAhead / time.Minute)
	for _, start := range []time.Time{
		time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC),   // United States spring forward
		time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC),  // Europe's, Lord Howe's fall back
		time.Date(2026, 10, 23, 0, 0, 0, 0, time.UTC), // Europe's fall back, then the United States'
	} {
		for _, z := range zones {
			for _, w := range windows {
				// open[i]: Open at start + i minutes.
				open := make([]bool, clockSpan+ahead+1)
				for i := range open {
					open[i] = Open(w, z, start.Add(time.Duration(i)*time.Minute))
				}
				for i := 0; i < clockSpan; i += 37 {
					at := start.Add(time.Duration(i) * time.Minute)
					want := -1
					for j := i; j <= i+ahead; j++ {
						if open[j] {
							want = j
							break
						}
					}
					got, ok := NextOpen(w, z, at)
					switch {
					case want < 0 && ok:
						t.Fatalf("%v %v from %s: next %s, want none", z, w, at, got)
					case want >= 0 && (!ok || !got.Equal(start.Add(time.Duration(want)*time.Minute))):
						t.Fatalf("%v %v from %s: next %s %v, want %s", z, w, at, got, ok, start.Add(time.Duration(want)*time.Minute))
					}
				}
			}
		}
	}
}

// BenchmarkNextOpenManyZones looks for a window in the 42 zones the data
// gives a US toll-free number (the worst a number's zones can be).
func BenchmarkNextOpenManyZones(b *testing.B) {
	num, _ := phonenumbers.Parse("+18005550100", "")
	names, _ := phonenumbers.GetTimezonesForNumber(num)
	var zones []*time.Location
	for _, n := range names {
		if loc := loadZone(n); loc != nil {
			zones = append(zones, loc)
		}
	}
	ws := []model.CallingWindow{testWindow("08:00", "21:00")}
	at := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	for b.Loop() {
		NextOpen(ws, zones, at)
	}
}
