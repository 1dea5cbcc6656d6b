package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
)

// SignatureHeader is the header a webhook's signature comes in.
const SignatureHeader = "X-Twilio-Signature"

// Sign is the X-Twilio-Signature of a webhook POSTed to fullURL (as Twilio
// requested it: scheme, host, path and query) with form as its body:
// base64(HMAC-SHA1(authToken, fullURL + name1 + value1 + name2 + value2 ...))
// with the parameters in name order (byte order, which is Unicode
// code-point order), the values of a repeated name in value order.
func Sign(authToken, fullURL string, form url.Values) string {
	mac := hmac.New(sha1.New, []byte(authToken))
	_, _ = io.WriteString(mac, fullURL)
	for _, name := range slices.Sorted(maps.Keys(form)) {
		for _, v := range slices.Sorted(slices.Values(form[name])) {
			_, _ = io.WriteString(mac, name)
			_, _ = io.WriteString(mac, v)
		}
	}
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// ValidSignature reports whether header, an X-Twilio-Signature, signs a
// webhook POSTed to fullURL with form as its body. As Twilio's own
// libraries do, the URL is also tried with its scheme's default port added
// or removed (https://host/x and https://host:443/x), since proxies differ
// in which of them they show. An empty token or header is never valid.
// The comparison takes the same time wherever the header differs.
func ValidSignature(authToken, fullURL string, form url.Values, header string) bool {
	if authToken == "" || header == "" {
		return false
	}
	ok := 0
	for _, u := range urlVariants(fullURL) {
		ok |= subtle.ConstantTimeCompare([]byte(Sign(authToken, u, form)), []byte(header))
	}
	return ok == 1
}

// urlVariants is fullURL and, when it is an http(s) URL, the same URL with
// its default port removed or added.
func urlVariants(fullURL string) []string {
	variants := []string{fullURL}
	u, err := url.Parse(fullURL)
	if err != nil || u.Host == "" {
		return variants
	}
	def := map[string]string{"http": "80", "https": "443"}[u.Scheme]
	if def == "" {
		return variants
	}
	v := *u
	switch u.Port() {
	case "":
		v.Host = net.JoinHostPort(u.Hostname(), def)
	case def:
		v.Host = u.Hostname()
		if ip := net.ParseIP(v.Host); ip != nil && ip.To4() == nil {
			v.Host = "[" + v.Host + "]"
		}
	default:
		return variants
	}
	return append(variants, v.String())
}
