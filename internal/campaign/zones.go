package campaign

import (
	"sync"
	"time"

	"github.com/nyaruka/phonenumbers"
	"github.com/parley-voice/parley/internal/model"
)

// locations caches loaded zones by name: time.LoadLocation reads and
// parses the zone's data on every call, and the dispatcher asks for the
// same few zones at every dial. Only IANA names that load are kept, so it
// is bounded by the zone database.
var locations sync.Map // string → *time.Location

// location is the zone named name, or nil when it is not an IANA zone.
func location(name string) *time.Location {
	if v, ok := locations.Load(name); ok {
		return v.(*time.Location)
	}
	if name == "" || name == "Local" {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	locations.Store(name, loc)
	return loc
}

// Zones are the time zones recipient r may be in: its own Timezone; else
// every zone its number's country and area code may lie in (one for most
// numbers; many for a US toll-free number or an unknown area code, and
// calling windows must then hold in all of them); else the campaign's;
// else UTC.
func Zones(r model.CampaignRecipient, campaignTZ string) []*time.Location {
	if r.Timezone != nil {
		if loc := location(*r.Timezone); loc != nil {
			return []*time.Location{loc}
		}
	}
	if zones := numberZones(r.ToNumber); len(zones) > 0 {
		return zones
	}
	if loc := location(campaignTZ); loc != nil {
		return []*time.Location{loc}
	}
	return []*time.Location{time.UTC}
}

// numberZones are the zones of an E.164 number's prefix, nil when the
// phone-number data cannot tell.
func numberZones(e164 string) []*time.Location {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil {
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
		if loc := location(name); loc != nil {
			zones = append(zones, loc)
		}
	}
	return zones
}
