package sphinx

// tuning are the decoder options beyond the models, chosen by measurement
// (doc.go, Tuning): no flat-lexicon second pass, which would run at the
// end of each utterance, between the caller's last word and the text.
var tuning = []string{"-fwdflat", "no"}

// withOptions returns base (option, value pairs) with over's pairs in
// place of base's of the same name and the others appended: pocketsphinx
// refuses an option given twice.
func withOptions(base, over []string) []string {
	out := append([]string(nil), base...)
next:
	for i := 0; i+1 < len(over); i += 2 {
		for j := 0; j+1 < len(out); j += 2 {
			if out[j] == over[i] {
				out[j+1] = over[i+1]
				continue next
			}
		}
		out = append(out, over[i], over[i+1])
	}
	return out
}
