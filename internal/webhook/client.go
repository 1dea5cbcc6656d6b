package webhook

import (
	"net"
	"net/http"
	"time"
)

// GuardedClient is an HTTP client for customer-given URLs other than
// webhooks (an SMS carrier's base URL): the same SSRF guard on the resolved
// address unless allowPrivate (--allow-private-webhooks), no proxy (it would
// connect for us, past the guard), redirects answered rather than followed.
func GuardedClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: DefaultTimeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refusePrivate
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true,
			MaxIdleConns: 20, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: DefaultTimeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
