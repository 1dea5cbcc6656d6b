package campaign

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nyaruka/phonenumbers"
)

// areaCache caches the area (country calling code and national destination
// code) of numbers: parsing and formatting a number costs microseconds, and
// every dial asks for the area of each of a campaign's fromNumbers. A
// deployment's caller ids are few; past maxAreas numbers (say, recipients
// asked about once each) nothing more is kept.
var (
	areaCache     sync.Map // number → area
	areaCacheSize atomic.Int64
)

const maxAreaCache = 10000

// numberArea is a number's country calling code and national destination code
// ("1/415", "44/20"), or "" when the number cannot be parsed.
func numberArea(number string) string {
	if v, ok := areaCache.Load(number); ok {
		return v.(string)
	}
	a := ""
	if num, err := phonenumbers.Parse(number, ""); err == nil {
		nsn := phonenumbers.GetNationalSignificantNumber(num)
		ndc := min(phonenumbers.GetLengthOfNationalDestinationCode(num), len(nsn))
		a = strconv.Itoa(int(num.GetCountryCode())) + "/" + nsn[:ndc]
	}
	if areaCacheSize.Load() < maxAreaCache {
		if _, loaded := areaCache.LoadOrStore(number, a); !loaded {
			areaCacheSize.Add(1)
		}
	}
	return a
}

// CallerID picks the caller id for a call to `to` from `from`: the first
// with the same country calling code and area code (national destination
// code) as `to` ("local presence"); otherwise from[turn % len(from)], so
// successive dials take turns. "" when from is empty.
func CallerID(from []string, to string, turn int) string {
	if len(from) == 0 {
		return ""
	}
	if want := numberArea(to); want != "" {
		for _, f := range from {
			if numberArea(f) == want {
				return f
			}
		}
	}
	i := turn % len(from)
	if i < 0 {
		i += len(from)
	}
	return from[i]
}
