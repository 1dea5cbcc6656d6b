package webhook

import (
	"errors"
	"net/netip"
	"syscall"
)

// ErrPrivateAddress: a delivery was refused because its URL's host is (or
// resolves to) an address that is not public. Its text is safe to show to
// customers: it names neither the URL nor the address.
var ErrPrivateAddress = errors.New("webhook refused: the address is private " +
	"(loopback, private, link-local or otherwise not public); " +
	"the operator can allow such addresses with --allow-private-webhooks")

// refusePrivate is a net.Dialer Control function: it runs on the resolved
// address of every connection attempt, so DNS cannot steer a delivery
// around it.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !public(ap.Addr()) {
		return ErrPrivateAddress
	}
	return nil
}

// refusedV4 are the IPv4 ranges deliveries may not reach.
var refusedV4 = prefixes(
	"0.0.0.0/8",       // "this network", including the unspecified address
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // carrier-grade NAT (RFC 6598)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, including cloud metadata 169.254.169.254
	"172.16.0.0/12",   // private (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.168.0.0/16",  // private (RFC 1918)
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, including broadcast 255.255.255.255
)

// refusedV6 are the IPv6 ranges deliveries may not reach (IPv4-mapped
// addresses are checked as IPv4).
var refusedV6 = prefixes(
	"::/96",          // unspecified, loopback and deprecated IPv4-compatible
	"64:ff9b:1::/48", // local-use NAT64
	"100::/64",       // discard-only
	"2001::/32",      // Teredo: embeds an obfuscated IPv4 address
	"2001:db8::/32",  // documentation
	"fc00::/7",       // unique local (RFC 4193)
	"fe80::/10",      // link-local
	"fec0::/10",      // deprecated site-local
	"ff00::/8",       // multicast
)

// Ranges whose addresses embed an IPv4 address, checked in turn.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96") // IPv4 in the last 4 bytes
	sixTo4 = netip.MustParsePrefix("2002::/16")    // IPv4 in bytes 2 to 5
)

// public reports whether deliveries may connect to ip.
func public(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return false
	}
	if ip.Is4() {
		for _, p := range refusedV4 {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	for _, p := range refusedV6 {
		if p.Contains(ip) {
			return false
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return public(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(ip):
		return public(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return true
}

func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}
