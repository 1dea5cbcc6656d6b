package lm

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const cmudict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

// need skips t when a tool or file the test runs is missing, except in CI
// (CI=true), where a missing dependency must fail the build.
func need(t testing.TB, what string) {
	t.Helper()
	var err error
	if strings.HasPrefix(what, "/") {
		_, err = os.Stat(what)
	} else {
		_, err = exec.LookPath(what)
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (scripts/packages.txt installs it): %v", what, err)
	}
	t.Skipf("%s is missing: %v", what, err)
}

func TestCMUPhones(t *testing.T) {
	for in, want := range map[string]string{
		"z_'o@_b_l_i":              "Z AO R B L IY",
		"'a_k_m_I_d_@_n_t":         "AE K M IH D AH N T",
		"a#_d_h_'i@3_r_@_n_s":      "AH D HH IH R AH N S",
		"a#_d_'V_l_t_3_r-_3_z":     "AH D AH L T ER ER Z",
		"'A@_d_v_A@_k":             "AA R D V AA R K",
		"n_'u:_j_E_n_z":            "N UW Y EH N Z",
		"b_,i:_s_,i:_d_'i:_;_,E_f": "B IY S IY D IY EH F",
	} {
		if got, ok := cmuPhones(in); !ok || got != want {
			t.Errorf("cmuPhones(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "r_,oU_m_@_n__ t_'u:", "q_'Q"} {
		if got, ok := cmuPhones(in); ok {
			t.Errorf("cmuPhones(%q) = %q, want no pronunciation", in, got)
		}
	}
}

// TestGuessAgreesWithCMUdict guesses words CMUdict knows and measures how
// many of its phones the guesses get right (1 - edit distance / length,
// against the closest of a word's variants).
func TestGuessAgreesWithCMUdict(t *testing.T) {
	need(t, "espeak-ng")
	need(t, cmudict)
	f, err := os.Open(cmudict)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := map[string][][]string{}
	var words []string
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan(); i++ {
		head, pron, _ := strings.Cut(sc.Text(), " ")
		word, _, _ := strings.Cut(head, "(")
		if i%67 != 0 && ref[word] == nil {
			continue
		}
		if ref[word] == nil {
			if strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") != "" {
				continue
			}
			words = append(words, word)
		}
		ref[word] = append(ref[word], strings.Fields(pron))
	}
	got, err := guess(context.Background(), DefaultEspeak, words)
	if err != nil {
		t.Fatal(err)
	}
	var dist, length, exact int
	for _, w := range words {
		g, ok := got[w]
		if !ok {
			t.Errorf("no guess for %q", w)
			continue
		}
		best, bestLen := -1, 0
		for _, r := range ref[w] {
			if d := editDistance(strings.Fields(g), r); best < 0 || d < best {
				best, bestLen = d, len(r)
			}
		}
		dist += best
		length += bestLen
		if best == 0 {
			exact++
		}
	}
	agreement := 1 - float64(dist)/float64(length)
	t.Logf("%d words: phone agreement %.1f%%, words exact %.1f%%", len(words), 100*agreement, 100*float64(exact)/float64(len(words)))
	if agreement < 0.80 {
		t.Errorf("phone agreement %.3f, want at least 0.80", agreement)
	}
}

func TestGuessInventedNames(t *testing.T) {
	need(t, "espeak-ng")
	got, err := guess(context.Background(), DefaultEspeak, []string{"zorbly", "acmedent", "nguyen's", "日本", "xiv"})
	if err != nil {
		t.Fatal(err)
	}
	for w, want := range map[string]string{"zorbly": "Z AO R B L IY", "acmedent": "AE K M IH D AH N T"} {
		if got[w] != want {
			t.Errorf("%s: %q, want %q", w, got[w], want)
		}
	}
	if got["nguyen's"] == "" {
		t.Errorf("no guess for nguyen's")
	}
	for _, w := range []string{"日本", "xiv"} {
		if p, ok := got[w]; ok {
			t.Errorf("%s guessed as %q, want none (another script; said as two words)", w, p)
		}
	}
	for w, p := range got {
		if !knownPhones(p) {
			t.Errorf("%s: %q has a phone the model lacks", w, p)
		}
	}
}

func editDistance(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
