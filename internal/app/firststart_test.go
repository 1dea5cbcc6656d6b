package app

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// A first start whose port is taken exits non-zero having printed and
// created no credentials: every listener is bound before the first API key
// and the admin's one-time password are made. The next start, with its
// ports free, is still the first and prints them.
func TestFirstStartBindsEveryListenerBeforeCredentials(t *testing.T) {
	dir := t.TempDir()
	takenTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer takenTCP.Close()
	takenUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer takenUDP.Close()
	tcp, udp := takenTCP.Addr().String(), takenUDP.LocalAddr().String()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"HTTP", []string{"--addr", tcp, "--sip-addr", "127.0.0.1:0"}},
		{"SIP over TCP", []string{"--addr", "127.0.0.1:0", "--sip-addr", tcp}},
		{"SIP over UDP", []string{"--addr", "127.0.0.1:0", "--sip-addr", udp}},
		{"SIP over TLS", []string{"--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0", "--sip-tls-addr", tcp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append([]string{"serve", "--data-dir", dir}, tc.args...), &stdout, &stderr, env(nil))
			out := stdout.String() + stderr.String()
			if code == 0 {
				t.Fatalf("exit 0 with a port taken:\n%s", out)
			}
			if !strings.Contains(out, "address already in use") {
				t.Errorf("the error does not say the port is taken:\n%s", out)
			}
			for _, secret := range []string{"pk_live_", "password", "API key"} {
				if strings.Contains(out, secret) {
					t.Errorf("printed %q with a port taken:\n%s", secret, out)
				}
			}
		})
	}

	// Nothing was created: this start is the first.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0"}, &bytes.Buffer{}, &logs, env(nil))
	}()
	waitFor(t, func() bool { return strings.Contains(logs.String(), `"msg":"serving"`) })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), "pk_live_") || !strings.Contains(logs.String(), "password: ") {
		t.Errorf("the first start with its ports free printed no credentials:\n%s", logs.String())
	}
}
