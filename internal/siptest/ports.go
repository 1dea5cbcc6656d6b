package siptest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

type portSet struct {
	sip     int // SIP, free for both UDP and TCP
	media   int // even; media..media+3 free for UDP (sipp binds media and media+2)
	control int // sipp's control socket (-cp)
}

// freePorts picks ports on 127.0.0.1 that were free a moment ago: it binds
// them all at once (so they differ from each other) and closes them for sipp
// to take. Another process may still take one first; start retries then.
func freePorts(transport string) (portSet, error) {
	var ps portSet
	var held []io.Closer
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()

	sip, closers, err := freeUDPTCPPort()
	if err != nil {
		return ps, err
	}
	held = append(held, closers...)
	ps.sip = sip

	for try := 0; ; try++ {
		if try == 100 {
			return ps, errors.New("siptest: no free run of 4 UDP ports on 127.0.0.1")
		}
		c, err := net.ListenPacket("udp4", localIP+":0")
		if err != nil {
			return ps, err
		}
		base := c.LocalAddr().(*net.UDPAddr).Port &^ 1
		_ = c.Close()
		if base+3 > 65535 || base < 1024 {
			continue
		}
		var run []io.Closer
		for p := base; p < base+4; p++ {
			c, err := net.ListenPacket("udp4", fmt.Sprintf("%s:%d", localIP, p))
			if err != nil {
				break
			}
			run = append(run, c)
		}
		held = append(held, run...)
		if len(run) == 4 {
			ps.media = base
			break
		}
	}

	c, err := net.ListenPacket("udp4", localIP+":0")
	if err != nil {
		return ps, err
	}
	held = append(held, c)
	ps.control = c.LocalAddr().(*net.UDPAddr).Port
	return ps, nil
}

// freeUDPTCPPort finds a port free on 127.0.0.1 for UDP and TCP both, and
// returns the sockets holding it.
func freeUDPTCPPort() (int, []io.Closer, error) {
	for range 100 {
		u, err := net.ListenPacket("udp4", localIP+":0")
		if err != nil {
			return 0, nil, err
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp4", fmt.Sprintf("%s:%d", localIP, port))
		if err != nil {
			_ = u.Close()
			continue
		}
		return port, []io.Closer{u, l}, nil
	}
	return 0, nil, errors.New("siptest: no port free for both UDP and TCP on 127.0.0.1")
}

type socket struct {
	proto string // "udp" or "tcp" (a listening socket)
	port  int
}

// bound reports whether something has bound each socket on 127.0.0.1, from
// /proc/net/{udp,tcp}; an error means those files cannot be read here.
func bound(want []socket) (bool, error) {
	have := map[socket]bool{}
	for _, proto := range []string{"udp", "tcp"} {
		f, err := os.Open("/proc/net/" + proto)
		if err != nil {
			return false, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 {
				continue
			}
			host, port, ok := strings.Cut(fields[1], ":")
			if !ok || (host != "0100007F" && host != "00000000") {
				continue
			}
			if proto == "tcp" && fields[3] != "0A" { // LISTEN
				continue
			}
			n, err := strconv.ParseUint(port, 16, 16)
			if err != nil {
				continue
			}
			have[socket{proto, int(n)}] = true
		}
		_ = f.Close()
	}
	for _, s := range want {
		if !have[s] {
			return false, nil
		}
	}
	return true, nil
}
