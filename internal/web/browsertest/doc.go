// Package browsertest drives the dashboard in Debian's chromium through
// chromedp, against the real API and dashboard handlers over one store,
// and takes the README's screenshots (docs/screenshots, written when
// PARLEY_UPDATE_SCREENSHOTS=1 or missing). It holds tests only.
package browsertest
