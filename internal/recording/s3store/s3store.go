// Package s3store keeps recordings in an S3-compatible object store
// (--recordings-url s3://BUCKET/PREFIX): AWS S3, or any store that speaks
// its API (MinIO, Ceph, SeaweedFS, versitygw...) named by AWS_ENDPOINT_URL.
// Credentials and region come from the AWS SDK's usual sources
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, profiles, instance
// roles), as the AWS tools read them.
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/parley-voice/parley/internal/recording"
)

// Bucket is a prefix of one bucket: recording.Objects.
type Bucket struct {
	client *s3.Client
	bucket string
	prefix string // "" or ends with "/"
}

// ParseURL splits s3://BUCKET/PREFIX into the bucket and the key prefix
// ("" or ending in "/").
func ParseURL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.Opaque != "" {
		return "", "", fmt.Errorf("recordings URL %q: want s3://BUCKET or s3://BUCKET/PREFIX", raw)
	}
	if u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("recordings URL %q: want s3://BUCKET/PREFIX without credentials, port, query or fragment (credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the endpoint from AWS_ENDPOINT_URL)", raw)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// Open is the store rawURL (s3://BUCKET/PREFIX) names. It does not reach
// the store: a server starts while the store is down, and its recordings
// wait on disk until it is back.
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	bucket, prefix, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("recordings URL %s: AWS configuration: %w", rawURL, err)
	}
	if cfg.Region == "" {
		// The SDK signs with a region; stores other than AWS mostly ignore it.
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		// A store other than AWS (AWS_ENDPOINT_URL) is addressed by path
		// (http://host/bucket/key): it rarely has a DNS name per bucket.
		o.UsePathStyle = cfg.BaseEndpoint != nil
	})
	return &Bucket{client: client, bucket: bucket, prefix: prefix}, nil
}

// String names the store in logs: s3://BUCKET/PREFIX.
func (b *Bucket) String() string { return "s3://" + b.bucket + "/" + b.prefix }

// Put stores size bytes of body under key.
func (b *Bucket) Put(ctx context.Context, key string, body io.ReadSeeker, size int64) error {
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &b.bucket,
		Key:           aws.String(b.prefix + key),
		Body:          body,
		ContentLength: aws.Int64(size),
		ContentType:   aws.String("audio/wav"),
	})
	if err != nil {
		return fmt.Errorf("put %s%s: %w", b, key, err)
	}
	return nil
}

func (b *Bucket) head(ctx context.Context, key string) (*s3.HeadObjectOutput, error) {
	h, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: aws.String(b.prefix + key)})
	if notFound(err) {
		return nil, os.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("head %s%s: %w", b, key, err)
	}
	return h, nil
}

// Open opens the object under key; os.ErrNotExist when there is none. It
// asks only for the object's size and time: each Read after a Seek
// fetches from there on with a ranged GET, so serving a range reads only
// from where the range starts.
func (b *Bucket) Open(ctx context.Context, key string) (recording.Reader, error) {
	h, err := b.head(ctx, key)
	if err != nil {
		return nil, err
	}
	return &object{
		ctx: ctx, b: b, key: key,
		size: aws.ToInt64(h.ContentLength), mod: aws.ToTime(h.LastModified), etag: aws.ToString(h.ETag),
	}, nil
}

// Delete removes the object under key; none is not an error.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: aws.String(b.prefix + key)})
	if err != nil && !notFound(err) {
		return fmt.Errorf("delete %s%s: %w", b, key, err)
	}
	return nil
}

// notFound tells an absent object (404: NoSuchKey, or NotFound to a HEAD,
// which has no body to name it).
func notFound(err error) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// object reads one object: io.ReadSeeker over ranged GETs.
type object struct {
	ctx  context.Context
	b    *Bucket
	key  string
	size int64
	mod  time.Time
	etag string

	off  int64         // where the next Read reads
	body io.ReadCloser // the open GET, reading from bodyOff
	at   int64         // where body reads next
}

func (o *object) Size() int64        { return o.size }
func (o *object) ModTime() time.Time { return o.mod }

func (o *object) Read(p []byte) (int, error) {
	if o.off >= o.size {
		return 0, io.EOF
	}
	if o.body != nil && o.at != o.off {
		o.body.Close()
		o.body = nil
	}
	if o.body == nil {
		in := &s3.GetObjectInput{
			Bucket: &o.b.bucket, Key: aws.String(o.b.prefix + o.key),
			Range: aws.String(fmt.Sprintf("bytes=%d-", o.off)),
		}
		if o.etag != "" {
			in.IfMatch = &o.etag // the object read is the one opened
		}
		out, err := o.b.client.GetObject(o.ctx, in)
		if err != nil {
			return 0, fmt.Errorf("get %s%s: %w", o.b, o.key, err)
		}
		o.body, o.at = out.Body, o.off
	}
	n, err := o.body.Read(p)
	o.off += int64(n)
	o.at = o.off
	if err == io.EOF && o.off < o.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (o *object) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += o.off
	case io.SeekEnd:
		offset += o.size
	default:
		return 0, errors.New("s3store: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("s3store: negative position")
	}
	o.off = offset
	return offset, nil
}

func (o *object) Close() error {
	if o.body != nil {
		err := o.body.Close()
		o.body = nil
		return err
	}
	return nil
}
