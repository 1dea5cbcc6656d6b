package sipua

import (
	"context"
	"errors"
	"io"
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

// inFrame is a frame of caller audio for the Audio reader and when the
// newest packet in it arrived (zero for filled-in silence).
type inFrame struct {
	pcm []int16
	at  time.Time
}

// Leg is one answered SIP call leg: media.Session over RTP.
type Leg struct {
	ua     *UA
	dialog diago.DialogSession
	key    dialogKey
	callID string
	slot   *slot // freed when the leg is over

	codec  dmedia.Codec
	coder  coder
	rate   int // of the leg's PCM
	frame  int // samples per 20 ms at rate
	reader io.Reader

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
	lastSeq uint16
	haveSeq bool
	ready   [][]int16 // frames of a packet, on their way to the reader

	in     chan inFrame
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

func newLeg(ua *UA, d diago.DialogSession, s *slot) (*Leg, error) {
	m := d.Media()
	dtmfR := &diago.DTMFReader{}
	// No diago jitter buffer: it loses RFC 4733 events. The leg's own
	// playout buffer (backlog, see takeCaller) absorbs jitter instead.
	r, err := m.AudioReader(diago.WithAudioReaderDTMF(dtmfR))
	if err != nil {
		return nil, err
	}
	codec := dmedia.CodecAudioFromSession(m.MediaSession())
	rate := pcmRate(codec)
	frame := media.FrameSamples(rate)
	l := &Leg{
		ua:           ua,
		dialog:       d,
		key:          legKey(d),
		slot:         s,
		codec:        codec,
		coder:        newCoder(codec),
		rate:         rate,
		frame:        frame,
		reader:       r,
		clk:          ua.clock,
		ours:         make([]int16, frame),
		heard:        make([]int16, frame),
		in:           make(chan inFrame, inFrames),
		digits:       make(chan rune, 32),
		done:         make(chan struct{}),
		drained:      closedChan(),
		lastRTP:      time.Now(),
		mediaTimeout: ua.cfg.MediaTimeout,
		stop:         make(chan struct{}),
	}
	l.tx = newRTPOut(m.RTPPacketWriter, codec, l.coder.encode, frame)
	l.callID = l.key.callID
	dtmfR.OnDTMF(func(d rune) error { l.digit(d); return nil })
	return l, nil
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

// read decodes the far end's RTP and hands it on at once: to the Audio
// reader or the bridged peer, and to the recording's backlog.
func (l *Leg) read() {
	defer l.loops.Done()
	buf := make([]byte, dmedia.RTPBufSize)
	pcm := make([]int16, 0, l.frame*4)
	audioPT := l.codec.PayloadType
	pr := l.dialog.Media().RTPPacketReader
	for {
		n, err := l.reader.Read(buf)
		if err != nil {
			l.finish(media.End{Remote: true, Reason: "media closed"})
			return
		}
		at := time.Now()
		if n == 0 || pr.PacketHeader.PayloadType != audioPT {
			continue // keep-alive or telephone-event (handled by the DTMF reader)
		}
		seq := pr.PacketHeader.SequenceNumber
		if l.haveSeq && int16(seq-l.lastSeq) <= 0 {
			continue // a duplicate, or later than what already played
		}
		l.lastSeq, l.haveSeq = seq, true
		pcm = l.coder.decode(pcm[:0], buf[:n])
		l.receive(pcm, at)
	}
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
	ready := l.ready[:0]
	for len(pcm) > 0 {
		if l.part == nil {
			l.part = make([]int16, 0, l.frame)
		}
		c := min(l.frame-len(l.part), len(pcm))
		l.part = append(l.part, pcm[:c]...)
		pcm = pcm[c:]
		if len(l.part) == l.frame {
			ready = append(ready, l.part)
			l.part = nil
			l.delivered++
		}
	}
	peer, toPeer := l.peer, l.toPeer
	l.mu.Unlock()
	for _, f := range ready {
		if toPeer != nil {
			f = toPeer.Process(nil, f)
		}
		l.deliver(inFrame{f, at}, peer)
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
	bridged := l.peer != nil // the peer plays its own comfort silence
	l.mu.Unlock()
	for i := int64(0); i < fill && !bridged; i++ {
		l.deliver(inFrame{pcm: make([]int16, l.frame)}, nil)
	}
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

// deliver hands a caller frame to the bridged peer, or to Audio readers
// (dropping the oldest frame when they fall a second behind).
func (l *Leg) deliver(f inFrame, peer *Leg) {
	if peer != nil {
		peer.enqueue(outItem{pcm: f.pcm, live: true})
		return
	}
	for {
		select {
		case l.in <- f:
			return
		default:
		}
		select {
		case <-l.in:
		default:
		}
	}
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
		_ = l.dialog.Media().Close() // unblocks the reader
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
	return &legAudio{l: l, rate: rate, up: audio.NewResampler(l.rate, rate), down: audio.NewResampler(rate, l.rate)}
}

var _ media.Leg = (*Leg)(nil)
