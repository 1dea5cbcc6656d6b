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
		// sipgo handles each request it reads on a goroutine of its own;
		// one read just before Close (a self-call's ACK or CANCEL
		// retransmission) and handled after it finds the transports gone
		// and opens a fresh UDP socket to answer, whose reader nothing
		// closes (sipgo v1.7.2, TransportLayer.serverRequestConnection).
		// Only at Close, so only tests see it; per-call leaks are checked
		// by telephony's load test (goroutines and sockets back to their
		// baseline after 200 calls).
		goleak.IgnoreAnyFunction("github.com/emiago/sipgo/sip.(*TransportUDP).readUDPConnection"),
	)
}

// The G.711 leg most tests drive: its rate, frame and backlog bound.
const (
	Rate             = 8000
	frame            = Rate / 50
	maxCallerBacklog = callerBacklogFrames * frame
)
