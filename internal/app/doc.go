// Package app is where Parley is put together: configuration from flags and
// their environment twins, the one place concrete types (store engine,
// secret box, services, HTTP server) are wired, the serve loop with its
// graceful shutdown, and the command line (serve, keys, migrate, version).
package app
