package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines, then removes the binary build
// compiled (goleak's Cleanup replaces its own exit, so it exits here).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if built.dir != "" {
			os.RemoveAll(built.dir)
		}
		os.Exit(code)
	}))
}
