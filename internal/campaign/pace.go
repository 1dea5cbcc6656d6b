package campaign

import "time"

// Pace is callsPerMinute as a GCRA (generic cell rate algorithm): nextDialAt
// is the theoretical time of the next dial. A dial at now is allowed when
// nextDialAt <= now + burst, burst being one second's worth of calls (at
// least one) less the one being placed; the new nextDialAt is then
// max(nextDialAt, now) + 60s/perMinute. Refused, nextDialAt stays. Idle time
// never saves up more than the burst: the theoretical time restarts at now.
func Pace(nextDialAt, now time.Time, perMinute int) (allowed bool, newNext time.Time) {
	perMinute = max(perMinute, 1)
	interval := time.Minute / time.Duration(perMinute)
	burst := time.Duration(max(perMinute/60, 1)-1) * interval
	if nextDialAt.After(now.Add(burst)) {
		return false, nextDialAt
	}
	if nextDialAt.Before(now) {
		nextDialAt = now
	}
	return true, nextDialAt.Add(interval)
}
