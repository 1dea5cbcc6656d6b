package webrtc

import (
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// Keypad digits both ways: the browser's as RFC 4733 telephone-events,
// ours as in-band DTMF tones (a browser plays audio, not events).

// eventDigits maps RFC 4733 event codes 0-15 to keypad digits.
const eventDigits = "0123456789*#ABCD"

// eventReader turns a stream of telephone-event payloads into digits: an
// event is reported once, on its first end packet (the end is sent three
// times, all with the event's timestamp).
type eventReader struct {
	last    uint32
	hasLast bool
}

// digit reads one telephone-event payload sent with RTP timestamp ts and
// returns the digit it ends, if it is the first end packet of an event.
func (r *eventReader) digit(ts uint32, payload []byte) (rune, bool) {
	code, end, ok := parseEvent(payload)
	if !ok || !end || (r.hasLast && r.last == ts) {
		return 0, false
	}
	r.last, r.hasLast = ts, true
	if int(code) >= len(eventDigits) {
		return 0, false // not a keypad event (a tone, a flash)
	}
	return rune(eventDigits[code]), true
}

// parseEvent reads an RFC 4733 payload: the event code and whether this
// packet ends it. ok is false for a payload too short to be one.
func parseEvent(b []byte) (code byte, end, ok bool) {
	if len(b) < 4 {
		return 0, false, false
	}
	return b[0], b[1]&0x80 != 0, true
}

// DTMF tone timing: 100 ms of tone then 60 ms of silence per digit.
const (
	dtmfOn   = 100 * time.Millisecond
	dtmfOff  = 60 * time.Millisecond
	dtmfPeak = 0.25 // each of the two tones, of full scale
)

// dtmfFreqs are each digit's low and high frequencies (ITU-T Q.23).
var dtmfFreqs = map[rune][2]float64{
	'1': {697, 1209}, '2': {697, 1336}, '3': {697, 1477}, 'A': {697, 1633},
	'4': {770, 1209}, '5': {770, 1336}, '6': {770, 1477}, 'B': {770, 1633},
	'7': {852, 1209}, '8': {852, 1336}, '9': {852, 1477}, 'C': {852, 1633},
	'*': {941, 1209}, '0': {941, 1336}, '#': {941, 1477}, 'D': {941, 1633},
}

// dtmfTone is digit d's tone and the pause after it at rate.
func dtmfTone(d rune, rate int) ([]int16, bool) {
	f, ok := dtmfFreqs[d]
	if !ok {
		return nil, false
	}
	lo := audio.Tone(f[0], rate, dtmfOn, dtmfPeak)
	hi := audio.Tone(f[1], rate, dtmfOn, dtmfPeak)
	for i := range lo {
		lo[i] += hi[i]
	}
	return append(lo, audio.Silence(rate, dtmfOff)...), true
}

func errInvalidDigit(d rune) error {
	return fmt.Errorf("webrtc: invalid keypad digit %q", d)
}
