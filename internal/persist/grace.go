package persist

import "time"

// ShutdownGrace bounds the wait at shutdown for writes the database does
// not take: past it they are halted, and what they carried is left to the
// next start's reaper or sweep.
const ShutdownGrace = 10 * time.Second

// AwaitOrHalt waits for wait (work told to stop, whose writes may still be
// retrying) to return. When it has not after ShutdownGrace, it calls halt,
// which must make those writes give up, and waits again; it says whether
// it had to.
func AwaitOrHalt(wait, halt func()) (halted bool) {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	grace := time.NewTimer(ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
		return false
	case <-grace.C:
		halt()
		<-done
		return true
	}
}
