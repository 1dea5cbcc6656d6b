package registration

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// TestStatusSurvivesFaults: a registration's status the database refuses
// a few times (busy, an I/O error, a full disk) is on the trunk once it
// takes it, long before the next REGISTER (the registrar grants an hour).
func TestStatusSurvivesFaults(t *testing.T) {
	for _, err := range []error{storefault.Busy, storefault.IOError, storefault.DiskFull} {
		t.Run(fmt.Sprint(err), func(t *testing.T) {
			b := setup(t)
			fs := storefault.Wrap(b.st)
			b.st = fs
			fs.Inject(storefault.Rule{Op: "SetSIPRegistrationStatus", To: model.RegistrationRegistered, Times: 3, Err: err})
			b.run("a", true)
			st := b.waitFor("registered", registeredBy("a"))
			if st.ExpiresAt == nil || time.Until(*st.ExpiresAt) < 50*time.Minute {
				t.Errorf("registered until %v", st.ExpiresAt)
			}
			if n := fs.Fails("SetSIPRegistrationStatus"); n != 3 {
				t.Errorf("the fault struck %d times, want 3", n)
			}
			if n := b.reg.count(b.reg.registers, "a"); n != 1 {
				t.Errorf("%d REGISTERs, want 1", n)
			}
		})
	}
}

// TestReleaseSurvivesFaults: a registration disabled while the database
// refuses its release, past the release's own retries, is let go by a
// later sync: the trunk says unregistered and nobody holds it.
func TestReleaseSurvivesFaults(t *testing.T) {
	b := setup(t)
	fs := storefault.Wrap(b.st)
	b.st = fs
	b.run("a", true, func(o *Options) { o.RequestTimeout = 150 * time.Millisecond })
	b.waitFor("registered", registeredBy("a"))
	fs.Inject(storefault.Rule{Op: "ReleaseSIPRegistration", Times: 5, Err: storefault.Busy})
	b.trunk.Registration.Enabled = false
	b.update(func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &b.trunk) })
	st := b.waitFor("released", func(st model.RegistrationStatus) bool {
		return st.State == model.RegistrationUnregistered && st.Owner == nil
	})
	if st.LeaseUntil != nil {
		t.Errorf("released with a lease until %v", st.LeaseUntil)
	}
	if n := fs.Fails("ReleaseSIPRegistration"); n != 5 {
		t.Errorf("the fault struck %d times, want 5", n)
	}
	if n := b.reg.count(b.reg.unregisters, "a"); n != 1 {
		t.Errorf("%d un-REGISTERs, want 1", n)
	}
}
