package sipua

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The transaction layer's timers and diago's tickers finish on
		// their own schedule after Close; checked per test with settle.
		goleak.IgnoreTopFunction("time.Sleep"),
	)
}
