package campaign

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nyaruka/phonenumbers"
)

// areaCache caches the area prefix of caller ids: parsing a number costs
// tens of microseconds, and every dial compares the recipient's number with
// each of the campaign's (up to 100) fromNumbers. A deployment has few
// caller ids; past maxAreaCache nothing more is kept.
var (
	areaCache     sync.Map // number → prefix
	areaCacheSize atomic.Int64
)

const maxAreaCache = 10000

// areaPrefix is "+", the country calling code and the national destination
// code (area code) of number: "+1415", "+4420". It is "" when the number
// cannot be parsed or has no area code (its country has none).
func areaPrefix(number string) string {
	num, err := phonenumbers.Parse(number, "")
	if err != nil {
		return ""
	}
	nsn := phonenumbers.GetNationalSignificantNumber(num)
	ndc := min(phonenumbers.GetLengthOfNationalDestinationCode(num), len(nsn))
	if ndc == 0 {
		return ""
	}
	return "+" + strconv.Itoa(int(num.GetCountryCode())) + nsn[:ndc]
}

// callerPrefix is areaPrefix of a caller id, through areaCache.
func callerPrefix(number string) string {
	if v, ok := areaCache.Load(number); ok {
		return v.(string)
	}
	p := areaPrefix(number)
	if areaCacheSize.Load() < maxAreaCache {
		if _, loaded := areaCache.LoadOrStore(number, p); !loaded {
			areaCacheSize.Add(1)
		}
	}
	return p
}

// CallerID picks the caller id for a call to `to` from `from`: the first
// with the same country calling code and area code (national destination
// code) as `to` ("local presence"); otherwise from[turn % len(from)], so
// successive dials take turns. "" when from is empty.
//
// Country codes and a country's area codes are prefix-free (no code begins
// another), so `to` has the area of a caller id exactly when it begins with
// the caller id's country and area code: the recipient's number need not be
// parsed at every dial.
func CallerID(from []string, to string, turn int) string {
	if len(from) == 0 {
		return ""
	}
	for _, f := range from {
		if p := callerPrefix(f); p != "" && strings.HasPrefix(to, p) {
			return f
		}
	}
	i := turn % len(from)
	if i < 0 {
		i += len(from)
	}
	return from[i]
}
