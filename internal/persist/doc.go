// Package persist lands the writes Parley cannot lose: a call's state
// changes, its transcript, a webhook's delivery status, a test run's
// progress, a registration's status. A write that fails for a reason that
// may pass (the database unreachable or restarting, a dropped connection,
// a busy or full disk) is tried again with backoff until it lands, is
// refused for good, or its budget is spent; every retry is logged and
// counted. A write that gives up is returned to its caller, whose record
// then goes to whoever sweeps (the call reaper, the webhook sweep, a test
// run's lease).
//
// An API request does not go through here: it fails at once with 503 and
// the client retries (store.ErrUnavailable).
package persist
