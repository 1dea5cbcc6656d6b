package campaign

import (
	"sync"
	"time"

	"github.com/nyaruka/phonenumbers"
	"github.com/parley-voice/parley/internal/model"
)

// zoneCache caches loaded zones by name: time.LoadLocation reads and
// parses the zone's data on every call, and the dispatcher asks for the
// same few zones at every dial. Only IANA names that load are kept, so it
// is bounded by the zone database.
var zoneCache sync.Map // string → *time.Location

// loadZone is the zone named name, or nil when it is not an IANA zone.
func loadZone(name string) *time.Location {
	if v, ok := zoneCache.Load(name); ok {
		return v.(*time.Location)
	}
	if name == "" || name == "Local" {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	zoneCache.Store(name, loc)
	return loc
}

// isTimezone is invalid.IsTimezone through the cache of loaded zones: a
// list of 100,000 recipients names the same few zones again and again.
func isTimezone(name string) bool { return loadZone(name) != nil }

// Zones are the time zones recipient r may be in: its own Timezone; else
// every zone its number's country and area code may lie in (one for most
// numbers; several for an area code that spans a zone line, and calling
// windows must then hold in all of them); else the campaign's; else UTC.
// A number whose place cannot be told (toll-free, premium, VoIP and other
// non-geographic numbers, or an area code the data does not know) goes by
// the campaign's zone: the data gives such numbers every zone of the
// country (42 for +1, Guam to Pago Pago), in all of which no window is
// ever open at once.
func Zones(r model.CampaignRecipient, campaignTZ string) []*time.Location {
	if r.Timezone != nil {
		if loc := loadZone(*r.Timezone); loc != nil {
			return []*time.Location{loc}
		}
	}
	if zones := numberZones(r.ToNumber); len(zones) > 0 {
		return zones
	}
	if loc := loadZone(campaignTZ); loc != nil {
		return []*time.Location{loc}
	}
	return []*time.Location{time.UTC}
}

// numberZones are the zones of an E.164 number's prefix, nil when the
// phone-number data cannot tell.
func numberZones(e164 string) []*time.Location {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil || !geographic(num) {
		return nil
	}
	names, err := phonenumbers.GetTimezonesForNumber(num)
	if err != nil {
		return nil
	}
	var zones []*time.Location
	for _, name := range names {
		if name == phonenumbers.UNKNOWN_TIMEZONE {
			continue
		}
		if loc := loadZone(name); loc != nil {
			zones = append(zones, loc)
		}
	}
	return zones
}

// geographic says whether a number's prefix places it: a valid fixed-line
// or mobile number.
func geographic(num *phonenumbers.PhoneNumber) bool {
	if !phonenumbers.IsValidNumber(num) {
		return false
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.FIXED_LINE_OR_MOBILE:
		return true
	}
	return false
}
