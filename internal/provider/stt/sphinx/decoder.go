package sphinx

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// decoder is one pocketsphinx decoder (ps_decoder_t) with its models
// loaded. It is not safe for concurrent use: a pool lends it to one
// utterance at a time, and that utterance's owner serialises the calls.
type decoder struct {
	api *api
	ps  uintptr
}

// newDecoder parses args (option, value pairs as pocketsphinx_continuous
// takes them) and loads a decoder with them: a second or more for the
// generic model. With a blend (non-nil), the decoder searches with its
// -lm interpolated with the blend's model.
func newDecoder(a *api, args []string, b *blend) (*decoder, error) {
	argv := make([]*byte, len(args)+1) // NULL-terminated, as C's argv
	for i, s := range args {
		c := append([]byte(s), 0)
		argv[i] = &c[0]
	}
	cfg := a.parseArgs(0, a.args(), int32(len(args)), &argv[0], 1)
	runtime.KeepAlive(argv)
	if cfg == 0 {
		return nil, fmt.Errorf("%w: pocketsphinx refused the options %s", stt.ErrUnavailable, strings.Join(args, " "))
	}
	ps := a.initDecoder(cfg)
	a.freeArgs(cfg) // the decoder holds its own reference
	if ps == 0 {
		return nil, fmt.Errorf("%w: pocketsphinx could not load the models of %s (pocketsphinx_continuous -infile <a 16 kHz WAV> with those options says why)",
			stt.ErrUnavailable, strings.Join(args, " "))
	}
	d := &decoder{api: a, ps: ps}
	if b != nil {
		if err := b.apply(d, optionValue(args, "-lm")); err != nil {
			d.free()
			return nil, err
		}
	}
	return d, nil
}

// optionValue is the value of option name in args (option, value pairs).
func optionValue(args []string, name string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

// start begins an utterance.
func (d *decoder) start() error {
	if d.api.startUtt(d.ps) < 0 {
		return fmt.Errorf("stt/sphinx: ps_start_utt failed")
	}
	return nil
}

// process decodes the next samples of the utterance (16 kHz).
func (d *decoder) process(pcm []int16) error {
	if len(pcm) == 0 {
		return nil
	}
	n := d.api.processRaw(d.ps, &pcm[0], uint64(len(pcm)), 0, 0)
	runtime.KeepAlive(pcm)
	if n < 0 {
		return fmt.Errorf("stt/sphinx: ps_process_raw failed")
	}
	return nil
}

// hyp is the best hypothesis so far, or of the ended utterance.
func (d *decoder) hyp() string {
	var score int32
	h := d.api.hyp(d.ps, &score)
	return strings.Join(strings.Fields(h), " ")
}

// end finishes the utterance: its final search runs here.
func (d *decoder) end() error {
	if d.api.endUtt(d.ps) < 0 {
		return fmt.Errorf("stt/sphinx: ps_end_utt failed")
	}
	return nil
}

// free releases the decoder and its models.
func (d *decoder) free() {
	if d.ps != 0 {
		d.api.freeDecoder(d.ps)
		d.ps = 0
	}
}
