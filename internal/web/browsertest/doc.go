// Package browsertest drives the dashboard in Debian's chromium through
// chromedp, against the real API and dashboard handlers over one store,
// and writes the README's screenshots (docs/screenshots). It holds tests
// only.
package browsertest
