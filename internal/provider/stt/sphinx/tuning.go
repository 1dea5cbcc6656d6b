package sphinx

// tuning are the decoder options beyond the models, chosen by measurement
// (doc.go, Method).
var tuning = []string{}
