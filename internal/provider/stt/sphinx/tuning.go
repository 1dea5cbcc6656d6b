package sphinx

// tuning are the decoder options beyond the models, chosen by measurement
// (doc.go, Tuning): no flat-lexicon second pass, which would run at the
// end of each utterance, between the caller's last word and the text.
var tuning = []string{"-fwdflat", "no"}
