package objecttest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/parley-voice/parley/internal/objecttest"
	"github.com/parley-voice/parley/internal/recording/s3store"
)

// Stop makes the store unreachable and Restart brings it back on the same
// address with its objects.
func TestStopRestart(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	ctx := context.Background()
	b, err := s3store.Open(ctx, srv.URL("p"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "a.wav", bytes.NewReader([]byte("a")), 1); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if err := b.Put(ctx, "b.wav", bytes.NewReader([]byte("b")), 1); err == nil {
		t.Fatal("a put to a stopped store succeeded")
	}
	srv.Restart()
	if err := b.Put(ctx, "b.wav", bytes.NewReader([]byte("b")), 1); err != nil {
		t.Fatal(err)
	}
	if got := srv.Objects("p/"); len(got) != 2 {
		t.Fatalf("objects %q, want both", got)
	}
}
