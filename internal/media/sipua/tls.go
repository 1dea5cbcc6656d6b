package sipua

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"time"

	"github.com/emiago/diago"
)

// tlsTransport is the diago transport for SIP over TLS on cfg.TLSAddr.
func tlsTransport(cfg Config, public string, mediaIP net.IP) (diago.Transport, *portHold, error) {
	host, portStr, err := net.SplitHostPort(cfg.TLSAddr)
	if err != nil {
		return diago.Transport{}, nil, fmt.Errorf("sip tls address %q: %w", cfg.TLSAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return diago.Transport{}, nil, fmt.Errorf("sip tls address %q: bad port", cfg.TLSAddr)
	}
	cert := cfg.TLSCert
	if cert == nil {
		if cert, err = SelfSigned(public); err != nil {
			return diago.Transport{}, nil, err
		}
	}
	var hold *portHold
	if port == 0 {
		if port, hold, err = reservePort(host); err != nil {
			return diago.Transport{}, nil, err
		}
	}
	return diago.Transport{
		Transport: "tls", BindHost: host, BindPort: port,
		ExternalHost: public, ExternalPort: port, MediaExternalIP: mediaIP,
		TLSConf:      &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12},
		TLSURINoSIPS: true, // sip:...;transport=tls, which carriers expect
	}, hold, nil
}

// SelfSigned makes a certificate for host, valid for a year: enough to
// call out over TLS (carriers verify theirs, not ours) and for tests.
func SelfSigned(host string) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}
