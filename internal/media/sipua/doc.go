// Package sipua is Parley's SIP user agent: it places and answers calls over
// SIP (UDP and TCP) with RTP media, on top of emiago/sipgo (messages,
// transactions, dialogs) and emiago/diago (SDP offer/answer, RTP/RTCP). It
// owns what those leave to the application: the codecs (G.722 first, then
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
// A Leg implements media.Session. The package knows nothing of agents,
// calls or organizations.
package sipua
