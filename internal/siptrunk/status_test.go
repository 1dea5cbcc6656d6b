package siptrunk

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

func TestLiveStatus(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Minute), now.Add(-time.Minute)
	on, off := &model.TrunkRegistration{Enabled: true}, &model.TrunkRegistration{Enabled: false}
	for _, c := range []struct {
		name string
		reg  *model.TrunkRegistration
		st   model.RegistrationStatus
		want string
	}{
		{"never taken", on, model.RegistrationStatus{}, model.RegistrationUnregistered},
		{"registered", on, model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &later}, model.RegistrationRegistered},
		{"binding expired", on, model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &earlier}, model.RegistrationUnregistered},
		{"disabled", off, model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &later}, model.RegistrationUnregistered},
		{"failed", on, model.RegistrationStatus{State: model.RegistrationFailed}, model.RegistrationFailed},
	} {
		got := LiveStatus(c.reg, c.st, now)
		if got.State != c.want || (c.want == model.RegistrationUnregistered && got.ExpiresAt != nil) {
			t.Errorf("%s: %+v, want %s", c.name, got, c.want)
		}
	}
}
