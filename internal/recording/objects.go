package recording

import (
	"context"
	"io"
	"os"
	"time"
)

// Objects is an object store that finished recordings are moved to
// (internal/recording/s3store), so that any server serves any call's
// recording. Keys are "ORG/CALL.wav"; the store adds its own prefix.
type Objects interface {
	// Put stores size bytes of body under key, replacing any object there.
	Put(ctx context.Context, key string, body io.ReadSeeker, size int64) error
	// Open opens the object under key; os.ErrNotExist when there is none.
	Open(ctx context.Context, key string) (Reader, error)
	// Delete removes the object under key; none is not an error.
	Delete(ctx context.Context, key string) error
	// String names the store in logs.
	String() string
}

// Reader is an open recording: its bytes, to seek in (HTTP range
// requests), its size and when it was last written.
type Reader interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// localFile is a recording on this server's disk.
type localFile struct {
	*os.File
	size int64
	mod  time.Time
}

func (f *localFile) Size() int64        { return f.size }
func (f *localFile) ModTime() time.Time { return f.mod }

// openLocal opens a recording on disk; os.ErrNotExist when there is none.
func openLocal(path string) (Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &localFile{File: f, size: st.Size(), mod: st.ModTime()}, nil
}
