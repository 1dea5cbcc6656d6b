// Package callqueue runs the call plane: it admits calls under each
// organization's concurrencyLimit (exactly, also under concurrent requests
// and across several servers sharing one PostgreSQL), keeps the rest queued
// in FIFO order per organization, dispatches them the moment a line frees
// up, and runs each admitted call through the Dialer and the call state
// machine.
//
// Durability: the queue is the calls table. A server holds a lease on each
// live call it runs and renews it; a call whose lease lapses lost its server
// and ends FAILED (LEASE_EXPIRED, or SERVER_RESTART when the same server
// comes back), with its post-call webhook. Ended calls whose post-call
// webhook has no recorded status are delivered by a sweep, so a crash never
// loses a delivery (it may, rarely, repeat one: receivers use the call id
// as an idempotency key).
package callqueue
