// Package webrtc answers a browser's WebRTC offer and carries the call's
// audio as a media.Leg, so the call plane runs a browser the way it runs a
// SIP leg. It owns the peer connection (pion/webrtc, pure Go): a media
// engine with G.722 (preferred) or PCMU and telephone-event, no trickle
// (the answer carries every candidate), host candidates on the RTP port
// range, DTLS-SRTP, and a data channel the browser opens, whose closing
// is a hang-up either way; and the leg over it: a 20 ms clock that sends our
// audio and records both sides in step, the browser's audio decoded as it
// arrives, keypad digits both ways. It knows nothing of agents or calls.
package webrtc
