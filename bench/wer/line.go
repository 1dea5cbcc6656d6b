package wer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/sipua"
)

// Codec is a phone line's audio codec.
type Codec struct {
	Name  string // as SDP and sipua name it: PCMU, G722
	Label string // as reports name it: G.711, G.722
	Rate  int    // of its audio, and so of what the recognizer is given
}

// The codecs a run may ask for.
var (
	PCMU = Codec{Name: "PCMU", Label: "G.711", Rate: 8000}
	G722 = Codec{Name: "G722", Label: "G.722", Rate: 16000}
)

// CodecNamed finds PCMU or G722 by name (either spelling).
func CodecNamed(name string) (Codec, error) {
	for _, c := range []Codec{PCMU, G722} {
		if strings.EqualFold(name, c.Name) || strings.EqualFold(name, c.Label) {
			return c, nil
		}
	}
	return Codec{}, fmt.Errorf("no codec %q (PCMU, G722)", name)
}

// Available reports whether Parley's SIP user agent (internal/media/sipua)
// negotiates the codec: nil, or why not.
func (c Codec) Available() error {
	ua, err := sipua.New(sipua.Config{ListenAddr: "127.0.0.1:0", Codecs: []string{c.Name}, Logger: quiet()})
	if err != nil {
		return fmt.Errorf("internal/media/sipua: %w", err)
	}
	return ua.Close()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Line carries speech from a caller's phone to Parley as a call does: two
// of Parley's SIP user agents on 127.0.0.1, the phone and Parley, one call
// per utterance. The phone resamples the speech to the codec's rate and
// plays it; the leg encodes, packetises and paces it as RTP; Parley's leg
// receives, decodes and hands it over frame by frame at the codec's rate,
// with silence filled in where packets come late, exactly as the
// conversation engine reads a call.
type Line struct {
	Codec Codec
	Calls int          // utterances carried at once (default 16)
	Log   *slog.Logger // the user agents' log (default: discarded)
}

// Carrying, per call: silence before and after the speech, so the leg's
// first and last packets are not speech, and how much quiet to keep either
// side of the speech when cutting it out of what was heard (as a VAD's
// pre-roll and hangover would).
const (
	leadIn  = 200 * time.Millisecond
	tailOut = 300 * time.Millisecond
	margin  = 200 * time.Millisecond
	// speechFloor is the level (RMS of a 20 ms frame as a fraction of full
	// scale: -50 dBFS) from which a frame counts as speech when cutting.
	speechFloor = 0.00316
)

// Carried is a set as Parley heard it over the line.
type Carried struct {
	Set   Set
	Codec Codec
	Heard []Clip // per utterance, at Codec.Rate, cut to speech ± margin
	// Shortened counts utterances whose speech came out more than two
	// frames shorter than it went in: audio the line lost (late packets
	// on a loaded machine), which the recognizer then misses too.
	Shortened int
	Wall      time.Duration // carrying the set took
}

// Audio is how long the heard speech lasts.
func (c Carried) Audio() time.Duration {
	var d time.Duration
	for _, h := range c.Heard {
		d += h.Duration()
	}
	return d
}

// Carry plays every utterance of s over the line and returns what Parley
// heard. An error means a call failed; ctx bounds the whole run.
func (l Line) Carry(ctx context.Context, s Set) (Carried, error) {
	if l.Calls <= 0 {
		l.Calls = 16
	}
	if l.Log == nil {
		l.Log = quiet()
	}
	rate := l.Codec.Rate
	for _, u := range s.Utterances {
		if u.Clip.Rate < rate {
			return Carried{}, fmt.Errorf("%s: recorded at %d Hz, below the %s line's %d Hz: upsampling would not make it wideband speech", s.Label(), u.Clip.Rate, l.Codec.Label, rate)
		}
	}
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	heard := make([][]int16, len(s.Utterances))
	done := make([]chan struct{}, len(s.Utterances))
	for i := range done {
		done[i] = make(chan struct{})
	}
	parley, err := l.ua(ctx, func(ctx context.Context, in *sipua.Incoming) {
		i, err := strconv.Atoi(strings.TrimPrefix(in.User, "u"))
		if err != nil || i < 0 || i >= len(done) {
			_ = in.Reject(404, "Not Found")
			return
		}
		defer close(done[i])
		leg, err := in.Answer()
		if err != nil {
			return // the phone's Dial fails, and says why
		}
		heard[i] = listen(ctx, leg.Audio(rate), s.Utterances[i].Clip.Duration())
	})
	if err != nil {
		return Carried{}, err
	}
	defer parley.Close()
	phone, err := l.ua(ctx, nil)
	if err != nil {
		return Carried{}, err
	}
	defer phone.Close()

	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(l.Calls, len(s.Utterances)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := l.call(ctx, phone, parley.Addr(), i, s.Utterances[i].Clip, done[i]); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s, utterance %s: %w", s.Label(), s.Utterances[i].ID, err)
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range s.Utterances {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next) // the feeding loop is next's only sender
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return Carried{}, firstErr
	}

	c := Carried{Set: s, Codec: l.Codec, Heard: make([]Clip, len(heard)), Wall: time.Since(start)}
	for i, h := range heard {
		c.Heard[i] = Clip{PCM: cut(h, rate), Rate: rate}
		sent := cut(toRate(s.Utterances[i].Clip, rate), rate)
		if len(c.Heard[i].PCM) < len(sent)-2*media.FrameSamples(rate) {
			c.Shortened++
		}
	}
	return c, nil
}

// ua starts a user agent on 127.0.0.1 offering only the line's codec.
func (l Line) ua(ctx context.Context, h sipua.Handler) (*sipua.UA, error) {
	ua, err := sipua.New(sipua.Config{ListenAddr: "127.0.0.1:0", Codecs: []string{l.Codec.Name}, MaxDialogs: 2*l.Calls + 8, Logger: l.Log})
	if err != nil {
		return nil, fmt.Errorf("line: %w", err)
	}
	if err := ua.Start(ctx, h); err != nil {
		_ = ua.Close()
		return nil, fmt.Errorf("line: %w", err)
	}
	return ua, nil
}

// call has the phone call Parley as user u<i>, play c, hang up, and wait
// until Parley's side has everything it heard.
func (l Line) call(ctx context.Context, phone *sipua.UA, parley string, i int, c Clip, heard <-chan struct{}) error {
	host, port, err := splitHostPort(parley)
	if err != nil {
		return err
	}
	leg, err := phone.Dial(ctx, sipua.Target{Host: host, Port: port, User: "u" + strconv.Itoa(i), FromUser: "+15550001111", RingTimeout: 10 * time.Second}, nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	rate := l.Codec.Rate
	a := leg.Audio(rate)
	pcm := append(audio.Silence(rate, leadIn), toRate(c, rate)...)
	pcm = append(pcm, audio.Silence(rate, tailOut)...)
	err = a.Write(pcm)
	if err == nil {
		err = a.Drain(ctx)
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if herr := leg.Hangup(hctx); err == nil && herr != nil {
		err = fmt.Errorf("hang up: %w", herr)
	}
	if err != nil {
		return fmt.Errorf("play: %w", err)
	}
	select {
	case <-heard:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// listen reads a's frames until the leg ends. The call lasts about d plus
// the padding; a leg not over a minute after that is cut off (the phone
// hangs up after playing, so only a broken line gets there).
func listen(ctx context.Context, a media.Audio, d time.Duration) []int16 {
	ctx, cancel := context.WithTimeout(ctx, d+leadIn+tailOut+time.Minute)
	defer cancel()
	var pcm []int16
	for {
		f, err := a.Read(ctx)
		if err != nil {
			return pcm
		}
		pcm = append(pcm, f...)
	}
}

// toRate resamples c to rate with Parley's resampler (a copy when it is
// already at rate).
func toRate(c Clip, rate int) []int16 {
	if c.Rate == rate {
		return append([]int16(nil), c.PCM...)
	}
	rs := audio.NewResampler(c.Rate, rate)
	out := rs.Process(nil, c.PCM)
	// Flush the filter's delay with silence so the speech's end is kept.
	return rs.Process(out, make([]int16, c.Rate/50))
}

// cut keeps pcm from margin before its first speech frame to margin after
// its last (nil when no frame reaches speechFloor).
func cut(pcm []int16, rate int) []int16 {
	n := media.FrameSamples(rate)
	first, last := -1, -1
	for i := 0; i+n <= len(pcm); i += n {
		if audio.RMS(pcm[i:i+n]) >= speechFloor {
			if first < 0 {
				first = i
			}
			last = i + n
		}
	}
	if first < 0 {
		return nil
	}
	keep := int(margin) / int(media.FrameDuration) * n
	return pcm[max(0, first-keep):min(len(pcm), last+keep)]
}

func splitHostPort(addr string) (string, int, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", 0, errors.New("address without a port: " + addr)
	}
	p, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		return "", 0, fmt.Errorf("address %s: %w", addr, err)
	}
	return addr[:i], p, nil
}
