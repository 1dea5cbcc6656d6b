package sipua

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	dmedia "github.com/emiago/diago/media"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// A leg's own PCM is at its codec's rate (Leg.Rate): 8 kHz for G.711,
// 16 kHz for G.722. Its buffers are counted in 20 ms frames at that rate.
const (
	// maxRate is the highest rate a leg's PCM runs at (G.722).
	maxRate = 16000
	// callerBacklogFrames bounds the caller audio left for the recording
	// once the pacer has caught up: more means the far end's clock runs
	// fast, or its audio came late; the oldest is dropped. It also bounds
	// bridged audio waiting in a leg's queue.
	callerBacklogFrames = 10
	// heldCallerFrames bounds what the recording holds for a pacer that is
	// late (it takes all that is due when it wakes): 1 s.
	heldCallerFrames = 50
	// jitterFrames is the playout buffer of what is played or recorded in
	// step with our clock (the recording's caller side, bridged audio):
	// after running dry it waits until this much is queued, so packets
	// arriving up to 40 ms late play in order instead of as gaps.
	jitterFrames = 2
	// fillAfter is how many frames overdue the caller's audio is before
	// the Audio reader gets a frame of silence in its place, so reads
	// keep real time while the far end sends nothing.
	fillAfter = 3
	// inFrames is how many caller frames wait for a slow reader before the
	// oldest is dropped (1 s).
	inFrames = 50
)

// Recorder receives every 20 ms tick of a leg (media.Recorder).
type Recorder = media.Recorder

// Leg is one answered SIP call leg: media.Session over RTP.
type Leg struct {
	ua     *UA
	dialog diago.DialogSession
	key    dialogKey
	callID string
	slot   *slot // freed when the leg is over

	codec dmedia.Codec
	coder coder
	rate  int // of the leg's PCM
	frame int // samples per 20 ms at rate
	// conn is the leg's RTP socket (diago's, read and written here, see
	// mediaConn); sink sends on it.
	conn *net.UDPConn
	sink *udpSink

	clk mediaClock
	// The pacer's own.
	tx    *rtpOut
	ours  []int16   // the frame of ours being sent
	t0    time.Time // when frame 0 was due
	n     int64     // frames done
	heard []int16   // the caller's frame being recorded
	// report sends an RTCP sender report (nil: none, a leg without a
	// dialog in tests).
	report     func(now time.Time)
	nextReport int64 // the frame after which the next report is due

	// The RTP reader's own.
	rx    rtpIn
	ready [][]int16 // bridged frames of a packet, on their way to the peer

	in     callerQueue // frames for the Audio reader (mu guards it)
	digits chan rune
	done   chan struct{}

	mu          sync.Mutex
	out         []outItem // queued agent audio and digits, in order
	outLive     int       // samples of bridged audio in out
	livePlaying bool      // bridged audio is playing; when not, it waits for jitterDepth
	drained     chan struct{}
	backlog     []int16 // caller audio for the recording, not yet taken by the pacer
	dry         bool    // the backlog ran out: refill to jitterDepth first
	part        []int16 // caller audio short of a whole frame for the reader
	delivered   int64   // frames handed to the reader, audio or filled in
	lastRTP     time.Time
	recorder    Recorder
	peer        *Leg             // bridged: caller frames go to peer's out queue
	toPeer      *audio.Resampler // bridged to a leg at another rate: ours to its
	end         media.End
	ending      bool

	mediaTimeout time.Duration
	stopOnce     sync.Once
	stop         chan struct{} // asks the loops to stop
	stopWatch    func() bool   // stops watching the dialog's end
	loops        sync.WaitGroup
	hungUp       atomic.Bool
}

// outItem is a chunk of audio or one digit.
type outItem struct {
	pcm   []int16
	digit rune
	live  bool // bridged audio: dropped rather than let to pile up
}

// newLeg makes the leg of a dialog whose media diago negotiated. diago
// keeps the SDP (and re-INVITEs); the leg reads and writes the RTP socket
// itself (see the package doc). learn: send to where the far end's RTP
// comes from when that differs from its SDP (inbound legs, as diago's
// RTPNAT did).
func newLeg(ua *UA, d diago.DialogSession, s *slot, learn bool) (*Leg, error) {
	ms := d.Media().MediaSession()
	conn, err := mediaConn(ms)
	if err != nil {
		return nil, err
	}
	codec := dmedia.CodecAudioFromSession(ms)
	sink := newUDPSink(conn, ms.Raddr, learn)
	sink.negotiated(ms)
	l := newMediaLeg(ua.clock, codec, sink)
	l.ua, l.dialog, l.key, l.slot = ua, d, legKey(d), s
	l.conn, l.rx.eventPT = conn, eventPayloadType(ms)
	l.mediaTimeout = ua.cfg.MediaTimeout
	l.callID = l.key.callID
	return l, nil
}

// newMediaLeg is a leg's media at codec, its RTP going to sink, before it
// has a dialog.
func newMediaLeg(clk mediaClock, codec dmedia.Codec, sink rtpSink) *Leg {
	c := newCoder(codec)
	rate := pcmRate(codec)
	frame := media.FrameSamples(rate)
	l := &Leg{
		codec:   codec,
		coder:   c,
		rate:    rate,
		frame:   frame,
		clk:     clk,
		tx:      newRTPOut(sink, codec, c.encode, frame),
		ours:    make([]int16, frame),
		heard:   make([]int16, frame),
		part:    make([]int16, 0, frame),
		in:      newCallerQueue(inFrames, frame),
		digits:  make(chan rune, 32),
		done:    make(chan struct{}),
		drained: closedChan(),
		lastRTP: time.Now(),
		stop:    make(chan struct{}),
	}
	if s, ok := sink.(*udpSink); ok {
		l.sink = s
	}
	// A packet's audio decodes to at most this many samples (G.722: two a
	// byte); sized once, so decoding never grows it.
	l.rx = rtpIn{
		buf:     make([]byte, rtpBufSize),
		pcm:     make([]int16, 0, 2*rtpBufSize),
		audioPT: codec.PayloadType,
		eventPT: dmedia.CodecTelephoneEvent8000.PayloadType,
	}
	return l
}

// eventPayloadType is the telephone-event payload type negotiated (101
// unless the SDP said otherwise).
func eventPayloadType(ms *dmedia.MediaSession) uint8 {
	for _, c := range ms.CommonCodecs() {
		if strings.HasPrefix(c.Name, "telephone-event") {
			return c.PayloadType
		}
	}
	return dmedia.CodecTelephoneEvent8000.PayloadType
}

// mediaUpdated follows a re-INVITE's new SDP: RTP goes to the address it
// gives, or nowhere while it holds the call.
func (l *Leg) mediaUpdated(ms *dmedia.MediaSession) {
	if l.sink != nil && ms != nil {
		l.sink.negotiated(ms)
	}
}

func closedChan() chan struct{} { c := make(chan struct{}); close(c); return c }

// start runs the leg: the RTP reader, a pacer's turn every frame, and a
// watch (no goroutine until it fires) on the dialog's end.
func (l *Leg) start() {
	l.ua.register(l)
	l.takeOverRTCP()
	l.loops.Add(2) // the reader, and the pacer until it lets the leg go
	l.mu.Lock()
	l.stopWatch = context.AfterFunc(l.dialog.Context(), func() {
		l.finish(media.End{Remote: !l.hungUp.Load(), Reason: "BYE received"})
	})
	l.mu.Unlock()
	go l.read()
	l.ua.pacers.join(l)
}

// Codec names the negotiated audio codec (G722, PCMU or PCMA).
func (l *Leg) Codec() string { return l.codec.Name }

// Rate is the sample rate of the leg's own PCM, its codec's: 16000 for
// G.722, 8000 for G.711. Audio at this rate is neither resampled on its
// way in nor out, and recordings are made at it.
func (l *Leg) Rate() int { return l.rate }

// CallID is the SIP Call-ID of the leg's dialog.
func (l *Leg) CallID() string { return l.callID }

// SetRecorder attaches (or, with nil, detaches) a recorder.
func (l *Leg) SetRecorder(r Recorder) {
	l.mu.Lock()
	l.recorder = r
	if r == nil {
		l.backlog, l.dry = nil, false
	}
	l.mu.Unlock()
}

// receive hands decoded caller audio, which arrived at at, on in whole
// frames, and keeps it for the recording while there is one. Only the RTP
// reader calls it.
func (l *Leg) receive(pcm []int16, at time.Time) {
	l.mu.Lock()
	l.lastRTP = at
	if l.recorder != nil {
		l.backlog = append(l.backlog, pcm...)
		if over := len(l.backlog) - heldCallerFrames*l.frame; over > 0 {
			l.backlog = append(l.backlog[:0], l.backlog[over:]...)
		}
	}
	peer, toPeer := l.peer, l.toPeer
	ready := l.ready[:0]
	for len(pcm) > 0 {
		c := min(l.frame-len(l.part), len(pcm))
		l.part = append(l.part, pcm[:c]...)
		pcm = pcm[c:]
		if len(l.part) < l.frame {
			break
		}
		l.delivered++
		if peer == nil {
			l.in.push(l.part, at) // copied into the reader's ring
		} else {
			// The peer's queue keeps what it is given.
			ready = append(ready, slices.Clone(l.part))
		}
		l.part = l.part[:0]
	}
	l.mu.Unlock()
	for _, f := range ready {
		if toPeer != nil {
			f = toPeer.Process(nil, f)
		}
		peer.enqueue(outItem{pcm: f, live: true})
	}
	clear(ready)
	l.ready = ready
}

// keepReaderInTime gives the Audio reader silence for the frames the
// caller's audio is more than fillAfter frames overdue by the pacer's
// due frames, and forgets frames that came early (a burst after a delay),
// so reads keep real time.
func (l *Leg) keepReaderInTime(due int64) {
	l.mu.Lock()
	fill := min(due-fillAfter-l.delivered, inFrames)
	if fill > 0 {
		l.delivered += fill
	}
	l.delivered = min(l.delivered, due)
	for i := int64(0); i < fill && l.peer == nil; i++ { // a bridged peer plays its own comfort silence
		l.in.push(nil, time.Time{})
	}
	l.mu.Unlock()
}

// trimBacklog drops the oldest caller audio beyond maxCallerBacklog, once
// the clock has taken all that was due.
func (l *Leg) trimBacklog() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if over := len(l.backlog) - callerBacklogFrames*l.frame; over > 0 {
		l.backlog = append(l.backlog[:0], l.backlog[over:]...)
	}
}

func (l *Leg) timedOut(now time.Time) bool {
	if l.mediaTimeout <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Sub(l.lastRTP) > l.mediaTimeout
}

// record gives the recorder, if any, one frame of the caller's (from the
// backlog, silence when there is none) with ours.
func (l *Leg) record(ours []int16) {
	l.mu.Lock()
	r := l.recorder
	if r == nil {
		l.mu.Unlock()
		return
	}
	f := l.heard
	n := 0
	if !l.dry || len(l.backlog) >= jitterFrames*l.frame {
		l.dry = false
		n = copy(f, l.backlog)
		l.backlog = append(l.backlog[:0], l.backlog[n:]...)
		l.dry = n < l.frame
	}
	clear(f[n:])
	l.mu.Unlock()
	r(f, ours)
}

// takeOurs fills f with the next frame of ours (silence past what is
// queued), or takes the digit at the head of the queue.
func (l *Leg) takeOurs(f []int16) (digit rune, isDigit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < l.frame && len(l.out) > 0 {
		head := &l.out[0]
		if head.live && !l.livePlaying {
			if l.outLive < jitterFrames*l.frame {
				break
			}
			l.livePlaying = true
		}
		if head.pcm == nil {
			if n > 0 {
				break // finish the audio before the digit
			}
			d := head.digit
			l.out = l.out[1:]
			l.signalDrained()
			return d, true
		}
		c := copy(f[n:], head.pcm)
		n += c
		head.pcm = head.pcm[c:]
		if head.live {
			l.outLive -= c
		}
		if len(head.pcm) == 0 {
			l.out = l.out[1:]
		}
	}
	clear(f[n:])
	if l.outLive == 0 {
		l.livePlaying = false
	}
	l.signalDrained()
	return 0, false
}

// signalDrained closes drained once nothing is queued; mu held.
func (l *Leg) signalDrained() {
	if len(l.out) == 0 {
		select {
		case <-l.drained:
		default:
			close(l.drained)
		}
	}
}

func (l *Leg) enqueue(it outItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.out) == 0 {
		l.drained = make(chan struct{})
	}
	l.out = append(l.out, it)
	if it.live {
		l.outLive += len(it.pcm)
		l.dropLive()
	}
}

// dropLive drops the oldest bridged audio beyond callerBacklogFrames: when
// the peer's clock caught up in a burst and ours skipped frames, it would
// otherwise add to the delay for the rest of the call. mu held.
func (l *Leg) dropLive() {
	limit := callerBacklogFrames * l.frame
	for i := 0; l.outLive > limit && i < len(l.out); {
		it := &l.out[i]
		if !it.live {
			i++
			continue
		}
		c := min(len(it.pcm), l.outLive-limit)
		it.pcm = it.pcm[c:]
		l.outLive -= c
		if len(it.pcm) == 0 {
			l.out = append(l.out[:i], l.out[i+1:]...)
		}
	}
	l.signalDrained()
}

func (l *Leg) digit(d rune) {
	select {
	case l.digits <- d:
	default: // nobody reads digits: drop rather than block the RTP reader
	}
}

// finish records how the leg ended (first cause wins), stops the loops and
// closes the media. It does not send BYE.
func (l *Leg) finish(e media.End) {
	l.mu.Lock()
	if l.ending {
		l.mu.Unlock()
		return
	}
	l.ending = true
	if l.hungUp.Load() {
		e.Remote = false
	}
	e.At = l.clk.Now()
	l.end = e
	peer, stopWatch := l.peer, l.stopWatch
	l.mu.Unlock()
	if peer != nil {
		Unbridge(l, peer)
	}
	l.stopOnce.Do(func() { close(l.stop) })
	if stopWatch != nil {
		stopWatch()
	}
	go func() {
		_ = l.dialog.Media().Close() // closes the socket: unblocks the reader
		l.loops.Wait()
		_ = l.dialog.Close()
		l.ua.forget(l)
		l.slot.free()
		close(l.done)
	}()
}

// Hangup sends BYE (once) and ends the leg.
func (l *Leg) Hangup(ctx context.Context) error {
	err := l.hangup(ctx)
	l.finish(media.End{Reason: "hung up"})
	select {
	case <-l.done:
	case <-ctx.Done():
	}
	return err
}

func (l *Leg) hangup(ctx context.Context) error {
	if !l.hungUp.CompareAndSwap(false, true) {
		return nil
	}
	select {
	case <-l.dialog.Context().Done():
		return nil // already over
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := l.dialog.Hangup(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil // the far end did not answer our BYE: it is over for us
	}
	return err
}

// Done is closed once the leg is over and its resources are released.
func (l *Leg) Done() <-chan struct{} { return l.done }

// End says how the leg ended; valid once Done is closed.
func (l *Leg) End() media.End {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// Digits delivers the far end's keypad digits.
func (l *Leg) Digits() <-chan rune { return l.digits }

// SendDigits queues RFC 4733 digits after the audio already queued.
func (l *Leg) SendDigits(ctx context.Context, digits string) error {
	for _, d := range digits {
		if !validDigit(d) {
			return errors.New("sipua: invalid keypad digit " + string(d))
		}
	}
	for _, d := range digits {
		l.enqueue(outItem{digit: d})
	}
	return l.drain(ctx)
}

func validDigit(d rune) bool {
	return (d >= '0' && d <= '9') || d == '*' || d == '#' || (d >= 'A' && d <= 'D')
}

func (l *Leg) drain(ctx context.Context) error {
	l.mu.Lock()
	ch := l.drained
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-l.done:
		return media.ErrEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Audio gives the leg's audio at rate.
func (l *Leg) Audio(rate int) media.Audio {
	return &legAudio{l: l, rate: rate, frame: make([]int16, l.frame), up: audio.NewResampler(l.rate, rate), down: audio.NewResampler(rate, l.rate)}
}

var _ media.Leg = (*Leg)(nil)
