package campaign

import (
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// windowLookAhead is how far NextOpen looks: a week of windows, and a day more
// for a recipient whose window opens just after this time next week.
const windowLookAhead = 8 * 24 * time.Hour

// clockSpan is a calling window ready to test: its days as weekdays, start and
// end in minutes after midnight, local time.
type clockSpan struct {
	days       [7]bool // by time.Weekday
	start, end int
}

// clockSpans reads the windows as the model keeps them (checked by Apply); one
// that does not parse has no time in it.
func clockSpans(windows []model.CallingWindow) []clockSpan {
	out := make([]clockSpan, 0, len(windows))
	for _, w := range windows {
		start, ok1 := parseClock(w.Start)
		end, ok2 := parseClock(w.End)
		if !ok1 || !ok2 || start >= end {
			continue
		}
		var s clockSpan
		s.start, s.end = start, end
		for _, d := range w.Days {
			if i := slices.Index(windowDays, d); i >= 0 {
				s.days[i] = true
			}
		}
		out = append(out, s)
	}
	return out
}

// insideSpans reports whether the local time of t in loc falls in one of the
// spans. Local time is the wall clock, so a 09:00 window opens at 09:00 on
// the days clocks change too.
func insideSpans(ss []clockSpan, loc *time.Location, t time.Time) bool {
	lt := t.In(loc)
	h, m, _ := lt.Clock()
	minute, day := h*60+m, lt.Weekday()
	for _, s := range ss {
		if s.days[day] && s.start <= minute && minute < s.end {
			return true
		}
	}
	return false
}

func insideEveryZone(ss []clockSpan, zones []*time.Location, t time.Time) bool {
	for _, loc := range zones {
		if !insideSpans(ss, loc, t) {
			return false
		}
	}
	return true
}

// orUTC is zones, or UTC when there are none: a window is never ignored.
func orUTC(zones []*time.Location) []*time.Location {
	if len(zones) == 0 {
		return []*time.Location{time.UTC}
	}
	return zones
}

// Open reports whether t is inside a calling window in every zone (no
// windows: always). A window is [start, end) of local wall-clock time on
// its days; no zones counts as UTC.
func Open(windows []model.CallingWindow, zones []*time.Location, t time.Time) bool {
	if len(windows) == 0 {
		return true
	}
	return insideEveryZone(clockSpans(windows), orUTC(zones), t)
}

// NextOpen is the earliest instant ≥ t at which Open holds, looking at most
// 8 days ahead; false when there is none (zones too far apart for the
// windows, or no window).
//
// Open can only turn true at t, at the instant a window starts in one of
// the zones, or at a zone's clock change (the clock jumps into a window),
// so those instants are the only candidates: the earliest at which Open
// holds is the answer. A window whose start does not exist on the day
// clocks spring forward (02:30 in America/New_York on 2026-03-08) thus
// opens at the change, 03:00 local: the first instant whose wall clock is
// past its start. A start that happens twice when clocks fall back opens at
// the first.
func NextOpen(windows []model.CallingWindow, zones []*time.Location, t time.Time) (time.Time, bool) {
	if len(windows) == 0 {
		return t, true
	}
	ss := clockSpans(windows)
	zones = orUTC(zones)
	if insideEveryZone(ss, zones, t) {
		return t, true
	}
	limit := t.Add(windowLookAhead)
	var candidates []time.Time
	add := func(c time.Time) {
		if c.After(t) && !c.After(limit) {
			candidates = append(candidates, c)
		}
	}
	for _, loc := range zones {
		y, m, d := t.In(loc).Date()
		// Local dates from t's to limit's (8 days, and one more: limit's
		// local date may be 9 days on when clocks spring forward).
		for i := range 10 {
			noon := time.Date(y, m, d+i, 12, 0, 0, 0, loc)
			for _, s := range ss {
				if s.days[noon.Weekday()] {
					for _, c := range wallInstants(loc, noon, s.start) {
						add(c)
					}
				}
			}
		}
		for u := t; ; {
			_, end := u.In(loc).ZoneBounds()
			if end.IsZero() || end.After(limit) {
				break
			}
			add(end)
			u = end
		}
	}
	slices.SortFunc(candidates, func(a, b time.Time) int { return a.Compare(b) })
	for _, c := range candidates {
		if insideEveryZone(ss, zones, c) {
			return c, true
		}
	}
	return time.Time{}, false
}

// wallInstants are the instants at which the wall clock of loc reads minute
// (after midnight) on the local date of day: usually one, none in a gap
// when clocks spring forward, two in the hour repeated when they fall back.
// time.Date picks one instant for a time that is missing or twice; trying
// every offset the zone has that date finds them all.
func wallInstants(loc *time.Location, day time.Time, minute int) []time.Time {
	y, m, d := day.Date()
	h, mi := minute/60, minute%60
	wall := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	var out []time.Time
	offsets := make([]int, 0, 3)
	for _, probe := range []time.Time{
		time.Date(y, m, d, 0, 0, 0, 0, loc),
		time.Date(y, m, d, 23, 59, 0, 0, loc),
		time.Date(y, m, d, h, mi, 0, 0, loc),
	} {
		_, off := probe.Zone()
		if slices.Contains(offsets, off) {
			continue
		}
		offsets = append(offsets, off)
		u := wall.Add(-time.Duration(off) * time.Second)
		ly, lm, ld := u.In(loc).Date()
		lh, lmi, _ := u.In(loc).Clock()
		if ly == y && lm == m && ld == d && lh == h && lmi == mi {
			out = append(out, u)
		}
	}
	return out
}
