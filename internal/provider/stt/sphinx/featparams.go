package sphinx

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PhoneCMNInit is the cepstral mean of the phone transform's training
// audio (conditioned G.711 speech; ./adapt train writes it beside
// model/phone.mllr), as pocketsphinx's -cmninit takes it: 13 values. A
// decoder normalises the cepstra with a live mean that starts from
// -cmninit and moves towards each utterance's, so a decoder new to phone
// audio hears its first utterances against feat.params' mean of wideband
// speech, far from this one. Starting from it, a fresh decoder's first
// utterance gained 2 points (doc.go, Tuning).
//
//go:embed model/phone.cmninit
var PhoneCMNInit string

// featParamsFile is the name WritePhoneFeatParams gives its file.
const featParamsFile = "phone.feat.params"

// WritePhoneFeatParams writes into dir (a recognizer's cache directory) a
// copy of the acoustic model's feat.params (under modelDir, as
// [Config.ModelDir]) with -cmninit set to [PhoneCMNInit], and returns its
// path, for pocketsphinx's -featparams on narrowband decoders
// ([Config.NarrowbandOptions]). A -cmninit option of its own would not do:
// the model's feat.params, read after the options, sets it back. An
// existing file with the same content is left as it is.
func WritePhoneFeatParams(dir, modelDir string) (string, error) {
	mean := strings.TrimSpace(PhoneCMNInit)
	if err := checkCMNInit(mean); err != nil {
		return "", fmt.Errorf("stt/sphinx: phone cepstral mean: %w", err)
	}
	orig, err := os.ReadFile(filepath.Join(modelDir, hmmDir, "feat.params"))
	if err != nil {
		return "", fmt.Errorf("stt/sphinx: %w (install the %s)", err, packages)
	}
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(string(orig), "\n"), "\n") {
		if name, _, _ := strings.Cut(strings.TrimSpace(line), " "); name == "-cmninit" {
			continue
		}
		out.WriteString(line + "\n")
	}
	out.WriteString("-cmninit " + mean + "\n")
	path, err := writeCached(dir, featParamsFile, out.Bytes())
	if err != nil {
		return "", fmt.Errorf("stt/sphinx: feat.params: %w", err)
	}
	return path, nil
}

// WritePhoneAdaptation writes the phone transform and the phone
// feat.params into dir and returns them as the Config takes them
// (NarrowbandMLLR, NarrowbandOptions), as parley serve configures G.711
// legs. Each is written on its own: what could not be is left out ("",
// nil) and its error joined into err.
func WritePhoneAdaptation(dir, modelDir string) (mllr string, narrowOptions []string, err error) {
	mllr, err = WritePhoneMLLR(dir)
	fp, ferr := WritePhoneFeatParams(dir, modelDir)
	if ferr == nil {
		narrowOptions = []string{"-featparams", fp}
	}
	return mllr, narrowOptions, errors.Join(err, ferr)
}

// checkCMNInit checks a -cmninit value: 13 comma-separated numbers.
func checkCMNInit(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) != 13 {
		return fmt.Errorf("%d values, want 13", len(parts))
	}
	for _, p := range parts {
		if _, err := strconv.ParseFloat(p, 64); err != nil {
			return fmt.Errorf("%q is not a number", p)
		}
	}
	return nil
}
