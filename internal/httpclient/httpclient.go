// Package httpclient owns the HTTP client a vendor's API client sends
// with: the one its caller gave, or one of its own, whose idle connections
// the API client releases on Close (never the caller's).
package httpclient

import "net/http"

// Client is the HTTP client an API client sends with.
type Client struct {
	*http.Client
	own *http.Transport // set when the client is our own
}

// Or is given, or, when given is nil, a client of our own over a clone of
// the default transport.
func Or(given *http.Client) Client {
	if given != nil {
		return Client{Client: given}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	return Client{Client: &http.Client{Transport: t}, own: t}
}

// CloseIdle releases the idle connections of our own client; a given
// client is the caller's to manage. The client stays usable.
func (c Client) CloseIdle() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}
