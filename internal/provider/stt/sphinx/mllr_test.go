package sphinx

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// The Debian en-us model's features: 1s_c_d_dd split by its feat.params'
// -svspec 0-12/13-25/26-38 into three streams of 13 (cepstra, deltas,
// double deltas); its means file says the same (readMeansShape).
var enUSStreams = []int{13, 13, 13}

func TestPhoneMLLRFitsTheModel(t *testing.T) {
	m, err := ParseMLLR(PhoneMLLR)
	if err != nil {
		t.Fatal(err)
	}
	want := enUSStreams
	if got, err := readMeansShape(filepath.Join(DefaultModelDir, hmmDir, "means")); err == nil {
		want = got
	} else {
		t.Logf("checked against the Debian model's shape, not its file: %v", err)
	}
	if len(m.Streams) != len(want) {
		t.Fatalf("%d streams, the model has %d", len(m.Streams), len(want))
	}
	for s, st := range m.Streams {
		if st.Len != want[s] {
			t.Errorf("stream %d: length %d, the model's is %d", s, st.Len, want[s])
		}
		// pocketsphinx 0.8 applies only the first class.
		if len(st.Classes) != 1 {
			t.Errorf("stream %d: %d classes, want 1", s, len(st.Classes))
		}
	}
	// A transform that is the identity was not trained.
	var moved bool
	for _, st := range m.Streams {
		c := st.Classes[0]
		for i := range st.Len {
			for j := range st.Len {
				if id := float64(btoi(i == j)); c.A[i][j] != id {
					moved = true
				}
			}
			if c.B[i] != 0 {
				moved = true
			}
		}
	}
	if !moved {
		t.Error("the transform is the identity")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseMLLRRejectsBrokenFiles(t *testing.T) {
	ok := "1\n1\n2\n1 0\n0 1\n0.5 -0.5\n1 1\n"
	if m, err := ParseMLLR([]byte(ok)); err != nil || m.Streams[0].Classes[0].B[1] != -0.5 {
		t.Fatalf("ParseMLLR(%q) = %+v, %v", ok, m, err)
	}
	for name, text := range map[string]string{
		"empty":          "",
		"truncated":      "1\n1\n2\n1 0\n0 1\n0.5 -0.5\n1\n",
		"trailing":       ok + "7\n",
		"not a number":   "1\n1\n2\n1 x\n0 1\n0.5 -0.5\n1 1\n",
		"nan":            "1\n1\n2\n1 NaN\n0 1\n0.5 -0.5\n1 1\n",
		"zero variance":  "1\n1\n2\n1 0\n0 1\n0.5 -0.5\n1 0\n",
		"no classes":     "0\n1\n2\n",
		"fractional len": "1\n1\n1.5\n",
	} {
		if _, err := ParseMLLR([]byte(text)); err == nil {
			t.Errorf("%s: ParseMLLR(%q) accepted it", name, text)
		}
	}
}

func TestWritePhoneMLLR(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	path, err := WritePhoneMLLR(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, PhoneMLLR) {
		t.Fatalf("%s holds %d bytes (%v), want the embedded %d", path, len(got), err, len(PhoneMLLR))
	}
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePhoneMLLR(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, PhoneMLLR) {
		t.Errorf("a stale transform was kept: %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the cache directory, want 1", len(entries))
	}
}

// heldOutSentences are not among the transform's training sentences
// (adapt/testdata/phone.txt).
var heldOutSentences = []string{
	"I would like to book an appointment for next Tuesday morning",
	"could you please call me back after lunch",
	"my phone number is four one five two two seven nine",
}

// pocketsphinx_continuous, with the transform, hears at least as many
// words of conditioned espeak-ng speech over G.711 as without it. The
// sentences are one recording, pauses between them (the tool segments
// its input), so the model loads once a run.
func TestPhoneMLLRHearsPhoneSpeech(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	mllr, err := WritePhoneMLLR(dir)
	if err != nil {
		t.Fatal(err)
	}
	wav := filepath.Join(dir, "utt.wav")
	if err := os.WriteFile(wav, phoneWAV(t, heldOutSentences), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := strings.Join(heldOutSentences, " ")
	plain := continuous(t, wav)
	adapted := continuous(t, wav, "-mllr", mllr)
	without, with := wordsRight(ref, plain), wordsRight(ref, adapted)
	t.Logf("said:    %q\nwithout: %q\nwith:    %q", ref, plain, adapted)
	t.Logf("words right of %d: %d without the transform, %d with it", len(strings.Fields(ref)), without, with)
	if with < without {
		t.Errorf("with the transform %d words right, without it %d", with, without)
	}
}

// needTools skips the test (fails it under CI=true) unless
// pocketsphinx_continuous, the en-us model and espeak-ng are installed.
func needTools(t *testing.T) {
	t.Helper()
	var missing []string
	if err := Available(); err != nil {
		missing = append(missing, err.Error())
	}
	for _, bin := range []string{"espeak-ng", continuousBinary} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin+": "+err.Error())
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := "needs pocketsphinx, pocketsphinx-en-us and espeak-ng: " + strings.Join(missing, "; ")
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// phoneWAV is the texts spoken by espeak-ng, 700 ms apart, carried over
// G.711 μ-law at 8 kHz with 300 ms of silence either side, conditioned:
// what the recognizer hears of the agent's voice on the loopback trunk.
func phoneWAV(t *testing.T, texts []string) []byte {
	t.Helper()
	line := make([]int16, 2400)
	for _, text := range texts {
		out, err := exec.Command("espeak-ng", "-v", "en-us", "--stdout", text).Output()
		if err != nil {
			t.Fatalf("espeak-ng %q: %v", text, err)
		}
		w, err := audio.ReadWAV(bytes.NewReader(out))
		if err != nil || len(w.Channels) != 1 {
			t.Fatalf("espeak-ng %q: %v", text, err)
		}
		line = append(line, audio.NewResampler(w.Rate, 8000).Process(nil, w.Channels[0])...)
		line = append(line, make([]int16, 5600)...)
	}
	heard := Condition(audio.DecodeULaw(nil, audio.EncodeULaw(nil, line)), 8000)
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	binary.Write(&b, le, uint32(36+2*len(heard)))
	b.WriteString("WAVEfmt ")
	binary.Write(&b, le, []uint32{16})
	binary.Write(&b, le, []uint16{1, 1})
	binary.Write(&b, le, []uint32{ConditionedRate, 2 * ConditionedRate})
	binary.Write(&b, le, []uint16{2, 16})
	b.WriteString("data")
	binary.Write(&b, le, uint32(2*len(heard)))
	binary.Write(&b, le, heard)
	return b.Bytes()
}

// continuousBinary is pocketsphinx's command-line decoder (Debian
// pocketsphinx), which applies -mllr as the library does.
const continuousBinary = "pocketsphinx_continuous"

// continuous runs pocketsphinx_continuous on wav with the model's files
// and extra arguments.
func continuous(t *testing.T, wav string, extra ...string) string {
	t.Helper()
	args := append([]string{"-infile", wav,
		"-hmm", filepath.Join(DefaultModelDir, hmmDir),
		"-lm", filepath.Join(DefaultModelDir, lmFile),
		"-dict", filepath.Join(DefaultModelDir, dictFile)}, extra...)
	cmd := exec.CommandContext(context.Background(), continuousBinary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", continuousBinary, err, stderr.String())
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// wordsRight counts the reference's words the hypothesis has in order:
// the longest common subsequence of the two word lists.
func wordsRight(ref, hyp string) int {
	r, h := strings.Fields(strings.ToLower(ref)), strings.Fields(strings.ToLower(hyp))
	prev, cur := make([]int, len(h)+1), make([]int, len(h)+1)
	for i := range r {
		for j := range h {
			if r[i] == h[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(h)]
}

// readMeansShape reads the stream lengths from a SphinxTrain means file's
// binary header (little-endian, as Debian's model is).
func readMeansShape(path string) ([]int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, body, ok := bytes.Cut(raw, []byte("endhdr\n"))
	if !ok || len(body) < 16 || binary.LittleEndian.Uint32(body) != 0x11223344 {
		return nil, os.ErrInvalid
	}
	streams := int(binary.LittleEndian.Uint32(body[8:]))
	if streams < 1 || len(body) < 16+4*streams {
		return nil, os.ErrInvalid
	}
	lens := make([]int, streams)
	for i := range lens {
		lens[i] = int(binary.LittleEndian.Uint32(body[16+4*i:]))
	}
	return lens, nil
}

// The narrowband transform goes only to the decoders that hear phone
// audio: 8 kHz utterances are decoded by a pool of their own (generic or
// the domain's) loaded with it, 16 kHz ones by the plain pool, and both
// recognise the words.
func TestNarrowbandMLLRHasItsOwnDecoders(t *testing.T) {
	need(t)
	cache := t.TempDir()
	path, err := WritePhoneMLLR(cache)
	if err != nil {
		t.Fatal(err)
	}
	r, domain := newDental(t, Config{Decoders: 1, NarrowbandMLLR: path, CacheDir: cache})
	pcm, rate := speak(t, "I would like to book a cleaning")
	for _, tc := range []struct {
		name   string
		rec    stt.Recognizer
		pcm    []int16
		rate   int
		narrow bool
	}{
		{"generic, wideband", r, wideband(pcm, rate), 16000, false},
		{"generic, phone", r, phone(pcm, rate), 8000, true},
		{"domain, wideband", domain, wideband(pcm, rate), 16000, false},
		{"domain, phone", domain, phone(pcm, rate), 8000, true},
	} {
		res, err := tc.rec.Transcribe(context.Background(), tc.pcm, tc.rate, "en-US")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !strings.Contains(res.Text, "cleaning") {
			t.Errorf("%s: heard %q", tc.name, res.Text)
		}
	}
	r.mu.Lock()
	narrow, generic := r.narrow, r.generic
	r.mu.Unlock()
	if narrow == nil || generic == nil || narrow == generic {
		t.Fatalf("generic pools: narrow %p, plain %p; want two", narrow, generic)
	}
	if !slices.Contains(narrow.args, path) || slices.Contains(generic.args, path) {
		t.Errorf("the transform is in the plain pool's options %v or missing from the narrow one's %v", generic.args, narrow.args)
	}
	a := domain.(*adapted)
	if a.narrow == nil || !slices.Contains(a.narrow.args, path) || slices.Contains(a.pool.args, path) {
		t.Errorf("the domain's pools do not split by rate: %+v", a)
	}
}
