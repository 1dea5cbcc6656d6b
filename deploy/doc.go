// Package deploy holds Parley's deployment kit, which is not Go: the
// container image's Dockerfile, the systemd unit and its environment
// file. Its tests read them and check what an operator relies on (the
// binary copied, a non-root user, the speech packages, the health check
// on /readyz, the ports, the limits docs/operations.md asks for), so CI
// checks the kit without a container runtime.
package deploy
