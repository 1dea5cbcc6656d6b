// Package sipua is Parley's SIP user agent: it places and answers calls over
// SIP (UDP and TCP) with RTP media, on top of emiago/sipgo (messages,
// transactions, dialogs) and emiago/diago (SDP offer/answer, the media
// sockets, RTCP). It owns what those leave to the application: the codecs (G.722 first, then
// G.711 μ-law and A-law, answered in our order of preference, coded by
// media/audio), each leg's PCM at its codec's rate (16 kHz for G.722, 8 kHz
// for G.711); media clocks anchored to the wall, one goroutine per core each
// pacing a share of the legs, that send audio out (catching up when they wake
// late), record both sides in step and play comfort silence; caller audio
// handed to the reader as soon as it is decoded, stamped with its arrival;
// RTCP sender reports; keypad digits both ways (RFC 4733 events out, RFC 4733
// and SIP INFO in); REFER; bridging two legs; limits on concurrent dialogs;
// REGISTER bindings at a registrar (Registration); and the mapping of SIP
// failures to errors the call plane understands.
//
// RTP is the leg's own, not diago's: diago negotiates the SDP (and
// re-INVITEs) and opens the media socket, and the leg reads and writes that
// socket directly (mediaConn). diago's session layer (RTPPacketWriter →
// RTPSession → MediaSession, and the reader chain back) took a lock, a
// packet struct, marshalling and statistics per packet, and its reads
// allocated an address per packet (net.PacketConn.ReadFrom): sending and
// receiving RTP through it were the largest share of the server's CPU
// after the VAD. Now a packet is built in place (rtpout.go: a 12-byte
// header and the payload encoded straight after it) and sent with one
// sendto to the far end's address (udpSink: from its SDP, updated on
// re-INVITE, and on inbound legs learned from where its RTP comes from, as
// diago's RTPNAT did); sendmmsg cannot batch it, see udpSink. Packets are
// read into one buffer, their headers parsed in place and their audio
// decoded into a ring of frames (callerQueue), so the steady path
// allocates nothing per frame but the frame the Audio reader returns
// (TestSteadyMediaPathAllocations); RFC 4733 events are read there too.
//
// The RTP reader stays a goroutine of its own, and hands frames to the
// Audio reader (the engine's goroutine) through the ring and a wake-up
// token, not a channel of frames. Reading the socket on the engine's
// goroutine would save a wake-up a frame, but the socket must be read
// whether or not the engine reads: keypad digits, the recording's caller
// side, a bridged peer's audio and the media timeout all come from it, and
// the engine stops reading while a leg is bridged or once it is done with
// the call; handing the socket between the two goroutines (interrupting a
// blocked read with a deadline) was judged not worth its risk.
//
// A Leg implements media.Session. The package knows nothing of agents,
// calls or organizations.
package sipua
