package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/objecttest"
	"github.com/parley-voice/parley/internal/recording/s3store"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix string }{
		{"s3://rec", "rec", ""},
		{"s3://rec/", "rec", ""},
		{"s3://rec/parley/prod", "rec", "parley/prod/"},
		{"s3://rec/parley/", "rec", "parley/"},
	} {
		b, p, err := s3store.ParseURL(tc.in)
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%s: %q %q %v, want %q %q", tc.in, b, p, err, tc.bucket, tc.prefix)
		}
	}
	for _, bad := range []string{"", "rec", "/data/rec", "https://s3.amazonaws.com/rec", "s3:///prefix", "s3://key:secret@rec/p", "s3://rec:9000/p", "s3://rec/p?region=x", "s3:rec"} {
		if _, _, err := s3store.ParseURL(bad); err == nil || !strings.Contains(err.Error(), "s3://BUCKET") {
			t.Errorf("%q: %v, want an error naming the form", bad, err)
		}
	}
}

// A Bucket against a real store: put, read whole and from an offset (as
// a range request does), delete; absent objects are os.ErrNotExist.
func TestBucket(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	ctx := context.Background()
	b, err := s3store.Open(ctx, srv.URL("rec/prod"))
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), 100_000) // 1 MB
	if err := b.Put(ctx, "org/call.wav", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if got := srv.Objects(""); len(got) != 1 || got[0] != "rec/prod/org/call.wav" {
		t.Fatalf("objects %q, want the key under the prefix", got)
	}
	r, err := b.Open(ctx, "org/call.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) || r.ModTime().IsZero() {
		t.Fatalf("size %d, time %v", r.Size(), r.ModTime())
	}
	all, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("read %d bytes, %v", len(all), err)
	}
	for _, off := range []int64{0, 7, 999_990, 123_456} {
		if _, err := r.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		part := make([]byte, 10)
		n, err := io.ReadFull(r, part)
		if want := data[off:min(off+10, int64(len(data)))]; err != nil || !bytes.Equal(part[:n], want) {
			t.Fatalf("at %d: %q %v, want %q", off, part[:n], err, want)
		}
	}
	if end, err := r.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("seek end: %d %v", end, err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d %v", n, err)
	}
	if _, err := b.Open(ctx, "org/other.wav"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("absent object: %v", err)
	}
	if err := b.Delete(ctx, "org/call.wav"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "org/call.wav"); err != nil {
		t.Fatalf("deleting an absent object: %v", err)
	}
	if _, err := b.Open(ctx, "org/call.wav"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("deleted object: %v", err)
	}
}
