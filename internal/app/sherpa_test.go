package app

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt/sherpa"
	"github.com/parley-voice/parley/internal/provider/stt/sherpa/sherpatest"
)

// checkArgs parses serve flags and runs the configuration check.
func checkArgs(t *testing.T, args ...string) error {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(fs, &c)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c.check()
}

// transducerWithoutJoiner is a streaming zipformer's directory with its
// joiner missing.
func transducerWithoutJoiner(t *testing.T) string {
	enc := sherpatest.Zipformer2Metadata()
	return sherpatest.WriteModel(t, map[string][]byte{
		"encoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx": sherpatest.ONNX(nil, enc),
		"decoder-epoch-99-avg-1-chunk-16-left-128.int8.onnx": sherpatest.ONNX(nil, map[string]string{"vocab_size": "500", "context_size": "2"}),
		"tokens.txt": sherpatest.Tokens("<blk>", "a"),
	})
}

func TestSherpaSettings(t *testing.T) {
	lib := sherpatest.LibDir(t)
	model := sherpatest.WriteLoudnessModel(t)
	missing := filepath.Join(t.TempDir(), "no-such-model")
	noLib := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string // in the error; none = accepted
	}{
		{[]string{"--stt", "sherpa"}, []string{"--stt sherpa needs --sherpa-model-dir"}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", missing, "--sherpa-lib-dir", lib}, []string{"--sherpa-model-dir", missing}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", t.TempDir(), "--sherpa-lib-dir", lib}, []string{"--sherpa-model-dir", "no tokens.txt"}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", transducerWithoutJoiner(t), "--sherpa-lib-dir", lib},
			[]string{"--sherpa-model-dir", "no joiner*.onnx", "zipformer2 transducer"}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", model, "--sherpa-lib-dir", noLib},
			[]string{"--sherpa-lib-dir", sherpa.APILibrary, noLib, "go mod download -json " + sherpa.LibraryModule}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", model, "--sherpa-lib-dir", lib, "--sherpa-threads", "0"}, []string{"--sherpa-threads"}},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", model, "--sherpa-lib-dir", lib}, nil},
		{[]string{"--stt", "sherpa", "--sherpa-model-dir", model, "--sherpa-lib-dir", lib, "--sherpa-threads", "2", "--sherpa-language", "en-GB"}, nil},
		{[]string{"--sherpa-model-dir", missing}, nil}, // not --stt sherpa: not looked at
	} {
		err := checkArgs(t, tc.args...)
		switch {
		case len(tc.want) == 0 && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case len(tc.want) > 0 && err == nil:
			t.Errorf("%v: accepted", tc.args)
		case err != nil:
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: %q does not say %q", tc.args, err, w)
				}
			}
		}
	}
}

func TestSherpaWithoutLibrariesAnywhere(t *testing.T) {
	t.Setenv("GOMODCACHE", t.TempDir()) // the module cache holds no copy
	if dir, err := sherpa.FindLibraryDir(""); err == nil {
		t.Skipf("sherpa-onnx is installed system-wide here (%s)", dir)
	}
	err := checkArgs(t, "--stt", "sherpa", "--sherpa-model-dir", sherpatest.WriteLoudnessModel(t))
	if err == nil || !strings.Contains(err.Error(), "set --sherpa-lib-dir") || !strings.Contains(err.Error(), sherpa.APILibrary) {
		t.Errorf("error %v, want the libraries named and --sherpa-lib-dir", err)
	}
}

func TestServeRefusesABrokenSherpaSetup(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0",
		"--stt", "sherpa", "--sherpa-model-dir", transducerWithoutJoiner(t), "--sherpa-lib-dir", sherpatest.LibDir(t)}, &out, &errOut, env(nil))
	if code != 1 || !strings.Contains(errOut.String(), "--sherpa-model-dir") || !strings.Contains(errOut.String(), "joiner") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestServeLoadsTheSherpaModel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var serveErr syncBuffer
	go func() {
		done <- Main(ctx, []string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0"}, &bytes.Buffer{}, &serveErr,
			env(map[string]string{"PARLEY_STT": "sherpa", "PARLEY_SHERPA_MODEL_DIR": sherpatest.WriteLoudnessModel(t), "PARLEY_SHERPA_LIB_DIR": sherpatest.LibDir(t)}))
	}()
	waitFor(t, func() bool { return strings.Contains(serveErr.String(), `"msg":"serving"`) })
	loaded := regexp.MustCompile(`"msg":"speech to text model loaded".*"kind":"zipformer2-ctc".*"version":"` + regexp.QuoteMeta(sherpa.LayoutVersion) + `"`)
	if !loaded.MatchString(serveErr.String()) {
		t.Errorf("no model loaded at start:\n%s", serveErr.String())
	}
	if !strings.Contains(serveErr.String(), `"stt":{"engine":"sherpa"`) {
		t.Errorf("configuration line does not name the engine:\n%s", serveErr.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, serveErr.String())
	}
}
