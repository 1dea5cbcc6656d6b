package sphinx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The phone feat.params is the model's with -cmninit the phone mean:
// every other line kept, one -cmninit, rewritten when stale.
func TestWritePhoneFeatParams(t *testing.T) {
	if err := checkCMNInit(strings.TrimSpace(PhoneCMNInit)); err != nil {
		t.Fatalf("the embedded phone mean: %v", err)
	}
	model := t.TempDir()
	if err := os.MkdirAll(filepath.Join(model, hmmDir), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "-lowerf 130\n-upperf 6800\n-cmn batch\n-cmninit 41.00,-5.29,-0.12,5.09,2.48,-4.07,-1.37,-1.78,-5.08,-2.05,-6.45,-1.42,1.17\n-model ptm\n"
	if err := os.WriteFile(filepath.Join(model, hmmDir, "feat.params"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cache")
	path, err := WritePhoneFeatParams(dir, model)
	if err != nil {
		t.Fatal(err)
	}
	want := "-lowerf 130\n-upperf 6800\n-cmn batch\n-model ptm\n-cmninit " + strings.TrimSpace(PhoneCMNInit) + "\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
	}
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WritePhoneFeatParams(dir, model); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("a stale file was kept: %q", got)
	}
	if _, err := WritePhoneFeatParams(dir, t.TempDir()); err == nil {
		t.Error("a model directory without feat.params was accepted")
	}
	for _, bad := range []string{"", "1,2,3", "a,b,c,d,e,f,g,h,i,j,k,l,m"} {
		if err := checkCMNInit(bad); err == nil {
			t.Errorf("checkCMNInit(%q) accepted", bad)
		}
	}
}

// Narrowband decoders loaded as parley serve loads them (the phone
// transform and the phone feat.params) hear phone speech, each utterance
// on a decoder that has heard nothing before it.
func TestPhoneDecodersHearPhoneSpeech(t *testing.T) {
	need(t)
	t.Parallel()
	mllr, narrowOpts, err := WritePhoneAdaptation(t.TempDir(), DefaultModelDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(narrowOpts) != 2 || narrowOpts[0] != "-featparams" {
		t.Fatalf("narrowband options %q, want -featparams and its file", narrowOpts)
	}
	var scores []scored
	for _, text := range dental[:6] {
		r, s := newDental(t, Config{NarrowbandMLLR: mllr, NarrowbandOptions: narrowOpts, CacheDir: t.TempDir()})
		pcm, rate := said(t, text)
		res, err := s.Transcribe(context.Background(), phone(pcm, rate), 8000, "en-US")
		r.Close()
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		e, n := wordErrors(text, res.Text)
		scores = append(scores, scored{text, res.Text, e, n})
		t.Logf("%-48q -> %q", text, res.Text)
	}
	if acc := accuracy(scores); acc < 0.7 {
		t.Errorf("word accuracy %.0f%%, want at least 70%%", 100*acc)
	}
}
