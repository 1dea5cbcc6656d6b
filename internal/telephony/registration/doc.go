// Package registration keeps SIP trunks' outbound registrations alive: a
// Keeper, run by `parley serve`, takes each enabled registration (one
// server per registration, by a lease in the store, as calls are held),
// sends REGISTER with digest authentication, refreshes at half the expiry
// the registrar granted, backs off exponentially (capped) after a failure,
// writes where each registration stands on its trunk, and unregisters
// (Expires: 0) when a registration is removed, disabled or its trunk
// deleted, and when the server shuts down. A restarted server takes its
// registrations back and registers them again.
package registration
