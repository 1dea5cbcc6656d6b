package bench

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"time"
)

// udpPacket is one captured IPv4 UDP datagram.
type udpPacket struct {
	at      time.Duration // capture time since the Unix epoch
	src     uint16        // source port
	dst     uint16        // destination port
	payload []byte        // UDP payload, as much as the snap length kept
}

// readPcap reads the UDP over IPv4 datagrams of a classic pcap file
// (dumpcap -P): microsecond or nanosecond timestamps, either byte order,
// Ethernet, Linux cooked (v1), BSD loopback or raw IP framing. Other
// packets are skipped. The format is simple enough that reading it needs
// no dependency.
func readPcap(path string) ([]udpPacket, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 24 {
		return nil, fmt.Errorf("%s: %w", path, io.ErrUnexpectedEOF)
	}
	var order binary.ByteOrder
	nano := false
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4:
		order = binary.LittleEndian
	case 0xa1b23c4d:
		order, nano = binary.LittleEndian, true
	default:
		switch binary.BigEndian.Uint32(b) {
		case 0xa1b2c3d4:
			order = binary.BigEndian
		case 0xa1b23c4d:
			order, nano = binary.BigEndian, true
		default:
			return nil, fmt.Errorf("%s: not a classic pcap file (pcapng? capture with dumpcap -P)", path)
		}
	}
	link := order.Uint32(b[20:]) & 0x0fffffff
	var out []udpPacket
	for off := 24; off+16 <= len(b); {
		sec, frac := order.Uint32(b[off:]), order.Uint32(b[off+4:])
		incl := int(order.Uint32(b[off+8:]))
		off += 16
		if off+incl > len(b) {
			break // a capture cut short
		}
		frame := b[off : off+incl]
		off += incl
		ip, ok := ipv4Of(frame, link)
		if !ok {
			continue
		}
		p, ok := udpOf(ip)
		if !ok {
			continue
		}
		unit := time.Microsecond
		if nano {
			unit = time.Nanosecond
		}
		p.at = time.Duration(sec)*time.Second + time.Duration(frac)*unit
		out = append(out, p)
	}
	return out, nil
}

// ipv4Of strips the link-layer header; ok is false for anything but IPv4.
func ipv4Of(frame []byte, link uint32) ([]byte, bool) {
	var ip []byte
	switch link {
	case 1: // Ethernet
		if len(frame) < 14 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
			return nil, false
		}
		ip = frame[14:]
	case 113: // Linux cooked v1
		if len(frame) < 16 || binary.BigEndian.Uint16(frame[14:]) != 0x0800 {
			return nil, false
		}
		ip = frame[16:]
	case 0: // BSD loopback: a host-order address family
		if len(frame) < 4 {
			return nil, false
		}
		ip = frame[4:]
	case 101, 228: // raw IP, raw IPv4
		ip = frame
	default:
		return nil, false
	}
	return ip, len(ip) >= 20 && ip[0]>>4 == 4
}

// udpOf reads the UDP header of an IPv4 packet; first fragments only.
func udpOf(ip []byte) (udpPacket, bool) {
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != 17 || len(ip) < ihl+8 || binary.BigEndian.Uint16(ip[6:])&0x1fff != 0 {
		return udpPacket{}, false
	}
	u := ip[ihl:]
	return udpPacket{src: binary.BigEndian.Uint16(u), dst: binary.BigEndian.Uint16(u[2:]), payload: u[8:]}, true
}
