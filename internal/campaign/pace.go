package campaign

import "time"

// Pace is callsPerMinute as a GCRA (generic cell rate algorithm): nextDialAt
// is the theoretical time of the next dial. A dial at now is allowed when
// nextDialAt <= now + burst, burst being one second's worth of calls (at
// least one) less the one being placed; the new nextDialAt is then
// max(nextDialAt, now) + 60s/perMinute. Refused, nextDialAt stays. Idle time
// never saves up more than the burst: the theoretical time restarts at now.
func Pace(nextDialAt, now time.Time, perMinute int) (allowed bool, newNext time.Time) {
	interval, burst := paceOf(perMinute)
	if nextDialAt.After(now.Add(burst)) {
		return false, nextDialAt
	}
	if nextDialAt.Before(now) {
		nextDialAt = now
	}
	return true, nextDialAt.Add(interval)
}

// PaceAllows is the first instant at which Pace allows a dial, for a
// campaign whose theoretical next dial is nextDialAt. The dispatcher looks
// again then: looking only once a second, it lost the part of each
// interval that had passed (45 a minute dialed 30).
func PaceAllows(nextDialAt time.Time, perMinute int) time.Time {
	_, burst := paceOf(perMinute)
	return nextDialAt.Add(-burst)
}

// paceOf is the interval between dials and the burst's tolerance.
func paceOf(perMinute int) (interval, burst time.Duration) {
	perMinute = max(perMinute, 1)
	interval = time.Minute / time.Duration(perMinute)
	return interval, time.Duration(max(perMinute/60, 1)-1) * interval
}
