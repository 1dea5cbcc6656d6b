package wer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
	Calls int // utterances carried at once (default 16)
	// Attempts is how many calls an utterance gets for the line to
	// deliver it intact (default 3; see intact).
	Attempts int
	Log      *slog.Logger // the user agents' log (default: discarded)
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
	// Retried counts calls placed again because the line changed the
	// utterance's length (see intact); Damaged counts utterances still
	// changed after Line.Attempts calls, which the recognizer is given
	// as heard.
	Retried, Damaged int
	Wall             time.Duration // carrying the set took
}

// Audio is how long the heard speech lasts.
func (c Carried) Audio() time.Duration {
	var d time.Duration
	for _, h := range c.Heard {
		d += h.Duration()
	}
	return d
}

// callSlot is one call's share of the carrying: Parley's side fills heard
// and closes done.
type callSlot struct {
	d     time.Duration // the speech, to bound the call
	heard []int16
	done  chan struct{}
}

// Carry plays every utterance of s over the line and returns what Parley
// heard. An error means a call failed; ctx bounds the whole run.
func (l Line) Carry(ctx context.Context, s Set) (Carried, error) {
	if l.Calls <= 0 {
		l.Calls = 16
	}
	if l.Attempts <= 0 {
		l.Attempts = 3
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

	var slots sync.Map // the called user ("u<utterance>-<attempt>") -> *callSlot
	parley, err := l.ua(ctx, func(ctx context.Context, in *sipua.Incoming) {
		v, ok := slots.Load(in.User)
		if !ok {
			_ = in.Reject(404, "Not Found")
			return
		}
		slot := v.(*callSlot)
		defer close(slot.done)
		leg, err := in.Answer()
		if err != nil {
			return // the phone's Dial fails, and says why
		}
		slot.heard = listen(ctx, leg.Audio(rate), slot.d)
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

	c := Carried{Set: s, Codec: l.Codec, Heard: make([]Clip, len(s.Utterances))}
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
				heard, calls, whole, err := l.carry(ctx, phone, parley.Addr(), &slots, i, s.Utterances[i])
				mu.Lock()
				switch {
				case err != nil && firstErr == nil:
					firstErr = fmt.Errorf("%s, utterance %s: %w", s.Label(), s.Utterances[i].ID, err)
					cancel()
				case err == nil:
					c.Heard[i] = Clip{PCM: heard, Rate: rate}
					c.Retried += calls - 1
					if !whole {
						c.Damaged++
					}
				}
				mu.Unlock()
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
	c.Wall = time.Since(start)
	return c, nil
}

// intact reports whether the line delivered the speech whole and in time.
// A late packet makes Parley's leg fill in a frame of silence and play the
// audio after it; a lost one leaves a frame out. On a machine short of CPU
// both happen, and the recognizer would be scored on the machine's load
// instead of on speech. Over G.711 the leg hands over exactly the decoded
// samples, so what was heard, less the silence around it, must be the
// played audio through the codec, sample for sample. Over another codec
// the speech heard must last as long as the speech played, within a frame
// (where it falls in the 20 ms frames may differ by one).
func intact(heard, played []int16, codec Codec) bool {
	if codec == PCMU {
		return slices.Equal(trimSilence(heard), trimSilence(audio.DecodeULaw(nil, audio.EncodeULaw(nil, played))))
	}
	h, p := cut(heard, codec.Rate), cut(played, codec.Rate)
	d := len(h) - len(p)
	return d >= -media.FrameSamples(codec.Rate) && d <= media.FrameSamples(codec.Rate)
}

// trimSilence drops the digital silence (zeros) at either end of pcm.
func trimSilence(pcm []int16) []int16 {
	i := slices.IndexFunc(pcm, func(x int16) bool { return x != 0 })
	if i < 0 {
		return nil
	}
	j := len(pcm)
	for pcm[j-1] == 0 {
		j--
	}
	return pcm[i:j]
}

// carry calls Parley with utterance i until it arrives intact or
// l.Attempts calls were made, and returns what Parley heard on the last
// call, cut to speech, how many calls that took and whether it arrived
// intact. Parley's handler finds each call's slot by the user called.
func (l Line) carry(ctx context.Context, phone *sipua.UA, parley string, slots *sync.Map, i int, u Utterance) (heard []int16, calls int, whole bool, err error) {
	sent := played(u.Clip, l.Codec.Rate)
	for calls < l.Attempts {
		slot := &callSlot{d: u.Clip.Duration(), done: make(chan struct{})}
		user := fmt.Sprintf("u%d-%d", i, calls)
		slots.Store(user, slot)
		err := l.call(ctx, phone, parley, user, u.Clip, slot.done)
		slots.Delete(user)
		calls++
		if err != nil {
			return nil, calls, false, err
		}
		if heard, whole = cut(slot.heard, l.Codec.Rate), intact(slot.heard, sent, l.Codec); whole {
			break
		}
	}
	return heard, calls, whole, nil
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

// call has the phone call Parley's user, play c, hang up, and wait until
// Parley's side has everything it heard.
func (l Line) call(ctx context.Context, phone *sipua.UA, parley, user string, c Clip, heard <-chan struct{}) error {
	host, port, err := splitHostPort(parley)
	if err != nil {
		return err
	}
	leg, err := phone.Dial(ctx, sipua.Target{Host: host, Port: port, User: user, FromUser: "+15550001111", RingTimeout: 10 * time.Second}, nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	a := leg.Audio(l.Codec.Rate)
	err = a.Write(played(c, l.Codec.Rate))
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

// played is what the phone plays for c: c at rate, with silence before
// and after.
func played(c Clip, rate int) []int16 {
	pcm := append(audio.Silence(rate, leadIn), toRate(c, rate)...)
	return append(pcm, audio.Silence(rate, tailOut)...)
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
