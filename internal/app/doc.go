// Package app is where Parley is put together: configuration from flags and
// their environment twins, the one place concrete types (store engine,
// secret box, services, HTTP server) are wired, serve as a list of
// components started in order, drained and stopped in reverse (serve.go,
// components.go), and the command line (serve, keys, migrate, version).
package app
