package siptrunk

import (
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// LiveStatus is where a trunk's registration stands as people are told:
// the status its holder last wrote, except that a disabled registration,
// and a binding past its expiry (its server stopped refreshing it), are
// unregistered whatever was written. The API and the dashboard both show
// this one.
func LiveStatus(r *model.TrunkRegistration, st model.RegistrationStatus, now time.Time) model.RegistrationStatus {
	if st.State == "" || r == nil || !r.Enabled || (st.State == model.RegistrationRegistered && st.ExpiresAt != nil && !st.ExpiresAt.After(now)) {
		st.State, st.ExpiresAt = model.RegistrationUnregistered, nil
	}
	return st
}
