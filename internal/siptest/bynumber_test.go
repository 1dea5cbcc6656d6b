package siptest

import (
	"fmt"
	"strings"
	"testing"
)

// uas_by_number answers, rejects busy or rings by the dialed number's last
// digit, each call its own way while all run at once; Dialed counts the
// INVITEs per number.
func TestByNumber(t *testing.T) {
	t.Parallel()
	uas := UAS(t, "uas_by_number", Options{Calls: 10, Keys: keys("hold", "300")})
	var uacs []*Sipp
	for d := range 10 {
		number := fmt.Sprintf("+1555000010%d", d)
		o := Options{Service: number}
		switch {
		case d <= 3: // answers and hangs up
			uacs = append(uacs, UAC(t, "uac_call_wait_bye", uas.Addr(), o))
		case d <= 6: // busy
			o.Keys = keys("code", "486")
			uacs = append(uacs, UAC(t, "uac_reject", uas.Addr(), o))
		default: // rings until canceled
			o.Keys = keys("hold", "300")
			uacs = append(uacs, UAC(t, "uac_cancel", uas.Addr(), o))
		}
	}
	mustPass(t, append(uacs, uas)...)
	if ok, failed, counted := uas.Counts(); !counted || ok != 10 || failed != 0 {
		t.Errorf("sipp counted %d successful and %d failed calls (counted: %v), want 10 and 0", ok, failed, counted)
	}
	for d, uac := range uacs {
		switch {
		case d <= 3:
			if received(uac, "BYE ") == "" {
				t.Errorf("digit %d: the callee did not hang up:\n%s", d, uac.Messages())
			}
		case d <= 6:
			if received(uac, "SIP/2.0 486 Busy Here") == "" || received(uac, "SIP/2.0 180") != "" {
				t.Errorf("digit %d: not rejected busy at once:\n%s", d, uac.Messages())
			}
		default:
			if received(uac, "SIP/2.0 487") == "" {
				t.Errorf("digit %d: no 487 after the CANCEL:\n%s", d, uac.Messages())
			}
		}
	}
	dialed := uas.Dialed()
	if len(dialed) != 10 {
		t.Errorf("Dialed = %v, want 10 numbers", dialed)
	}
	for n, ids := range dialed {
		if !strings.HasPrefix(n, "+1555000010") || len(ids) != 1 {
			t.Errorf("Dialed[%s] = %v, want one Call-ID", n, ids)
		}
	}
}
