package sipua

import (
	"time"

	dmedia "github.com/emiago/diago/media"
	"github.com/pion/rtcp"
)

// reportEvery is how many frames pass between a leg's RTCP sender reports:
// 5 s, RFC 3550's minimum interval and diago's own.
const reportEvery = 250

// takeOverRTCP stops diago's two RTCP goroutines for the leg (a reader of
// reports nothing here uses, and a ticker that writes ours): at a thousand
// legs they are half of all goroutines. The leg's pacer sends the sender
// reports instead (report); reports from the far end are left unread.
func (l *Leg) takeOverRTCP() {
	if s := l.dialog.Media().RTPSession(); s != nil {
		_ = s.MonitorClose()
	}
	l.report, l.nextReport = l.sendReport, reportEvery
}

// sendReport sends an RTCP sender report of what the leg sent so far.
func (l *Leg) sendReport(now time.Time) {
	ms := l.dialog.Media().MediaSession()
	if ms == nil || l.tx.packets == 0 {
		return // nothing sent yet
	}
	sr := &rtcp.SenderReport{
		SSRC:        l.tx.ssrc,
		NTPTime:     dmedia.NTPTimestamp(now),
		RTPTime:     l.tx.timestamp(),
		PacketCount: l.tx.packets,
		OctetCount:  l.tx.octets,
	}
	// MonitorClose left a deadline on the RTCP socket: write without one.
	_ = ms.WriteRTCPDeadline(sr, time.Time{})
}
