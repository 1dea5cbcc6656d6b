package wer

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestSubset(t *testing.T) {
	s := Set{Name: "x", Voice: "v"}
	for i := range 10 {
		s.Utterances = append(s.Utterances, Utterance{ID: fmt.Sprint(i), Ref: "a b", Clip: Clip{PCM: make([]int16, 8000), Rate: 8000}})
	}
	ids := func(s Set) (out []string) {
		for _, u := range s.Utterances {
			out = append(out, u.ID)
		}
		return out
	}
	if got := ids(s.Subset(4)); !reflect.DeepEqual(got, []string{"0", "2", "5", "7"}) {
		t.Errorf("Subset(4) = %q, want 0 2 5 7 (evenly spread)", got)
	}
	if got := s.Subset(4).Note; got != "4 of 10 utterances, evenly spread" {
		t.Errorf("note %q", got)
	}
	for _, n := range []int{0, 10, 11} {
		if got := s.Subset(n); len(got.Utterances) != 10 || got.Note != "" {
			t.Errorf("Subset(%d) kept %d, note %q; want all 10", n, len(got.Utterances), got.Note)
		}
	}
	if s.Words() != 20 || s.Audio() != 10*time.Second {
		t.Errorf("words %d audio %v", s.Words(), s.Audio())
	}
}

func TestUtteranceIDs(t *testing.T) {
	for in, want := range map[string]string{"dictate/both_help": "dictate-both-help", "Digits/H-40": "digits-h-40", "a b.c": "a-b-c"} {
		if got := utteranceID(in); got != want {
			t.Errorf("utteranceID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Set{Voice: "flite-slt"}).Speaker(); got != "fliteslt" {
		t.Errorf("speaker %q", got)
	}
	dup := Set{Name: "x", Voice: "v", Utterances: []Utterance{{ID: "a"}, {ID: "a"}}}
	if err := checkIDs(dup); err == nil {
		t.Error("two utterances with one id: no error")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if p := percentile(ds, 50); p != 5 {
		t.Errorf("p50 %v, want 5", p)
	}
	if p := percentile(ds, 90); p != 9 {
		t.Errorf("p90 %v, want 9", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("p50 of nothing %v", p)
	}
}
