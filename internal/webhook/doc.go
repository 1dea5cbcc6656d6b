// Package webhook owns Parley's outgoing webhooks: the pre-call webhook
// (inbound calls, before answering; it returns variables), the post-call
// webhook (every ended call; it carries the call record) and, through
// [Sender.Deliver], the custom-tool calls and inbound-message notifications
// other packages build. It sends; it does not decide when, and it never
// retries: the callers own scheduling and recording the status.
//
// # Deliveries
//
// A delivery is one HTTP POST with a JSON body and these headers:
//
//	Content-Type: application/json
//	User-Agent: Parley-Webhook/1
//	X-Parley-Event: pre_call | post_call | custom_tool | inbound_message
//	X-Parley-Delivery: <a new UUID for every delivery>
//	X-Parley-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>   (only with a signing secret)
//
// Exactly one attempt is made, within a per-delivery timeout (3 s for
// pre-call, 5 s for post-call). Any 2xx answer is success ("sent");
// anything else is a failure ("failed"): 4xx, 5xx, a timeout, a refused
// connection, and also 3xx, because redirects are never followed (a
// redirect could point a delivery past the address check below, and the
// contract asks for a 200). At most a caller-given number of response
// bytes is read; the rest is discarded unread.
//
// # Signature
//
// When the organization has a signing secret, each delivery carries
//
//	X-Parley-Signature: t=<t>,v1=<signature>
//
// where <t> is the time of sending in Unix seconds (decimal) and
// <signature> is the lowercase hex HMAC-SHA256, keyed with the secret, of
// the bytes "<t>.<body>": the t value exactly as it appears in the header,
// a full stop, then the raw request body exactly as received (before any
// JSON parsing). To verify, a receiver recomputes the HMAC, compares it
// with every v1 value in the header in constant time, and rejects the
// delivery unless one matches and <t> is within a few minutes of its own
// clock (this stops replays). Unknown keys in the header are ignored, so
// the scheme can grow. [Verify] implements exactly this check; [Sign]
// produces the header.
//
// # Address policy (SSRF)
//
// Webhook URLs are chosen by customers, so deliveries must not become a way
// into the operator's network. Only http and https URLs are accepted, no
// proxy is used (HTTP_PROXY and friends are ignored), and the address
// check runs on the IP address each connection is actually made to, after
// DNS resolution, so a name that resolves (or re-resolves) to an internal
// address is caught too. Refused: loopback (127.0.0.0/8, ::1), private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 — which
// includes cloud metadata at 169.254.169.254 — and fe80::/10), unspecified
// (0.0.0.0/8, ::), multicast and broadcast, carrier-grade NAT (100.64/10),
// other special-purpose and reserved ranges, and IPv6 forms that embed such
// an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible, NAT64
// 64:ff9b::/96, 6to4 2002::/16; Teredo is refused outright). A refused
// delivery fails with [ErrPrivateAddress], whose text names the operator
// flag --allow-private-webhooks ([Options.AllowPrivate]) that lifts the
// check for local testing. Response headers are limited in size.
package webhook
