package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config is how to reach an S3-compatible bucket.
type S3Config struct {
	// Endpoint is host[:port], without a scheme (UseSSL chooses https).
	Endpoint  string
	Bucket    string
	AccessKey string
	SecretKey string
	// Region is the bucket's region; "" means us-east-1. It is never looked
	// up: minio-go would otherwise ask the bucket's location before the
	// first request and before signing any URL.
	Region string
	UseSSL bool
}

// S3 stores files as objects of one bucket. The bucket must exist; the
// store never creates it (that is the operator's, with its policies).
type S3 struct {
	client *minio.Client
	bucket string
}

// NewS3 builds the client; it does not connect.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("storage: S3 needs an endpoint and a bucket")
	}
	if strings.Contains(cfg.Endpoint, "://") {
		return nil, fmt.Errorf("storage: the S3 endpoint %q must be host[:port] without a scheme", cfg.Endpoint)
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
		Region: region,
	})
	if err != nil {
		return nil, fmt.Errorf("storage: S3 client: %w", err)
	}
	return &S3{client: c, bucket: cfg.Bucket}, nil
}

// Put uploads r under key with its ContentType, so that a presigned URL
// serves the audio as audio. The size is read from a seekable r (files,
// byte readers); any other reader is spooled to a temporary file first,
// because minio-go uploads a reader of unknown size in multipart parts
// with a buffer of hundreds of megabytes.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	size, err := remaining(r)
	if err != nil {
		f, err := os.CreateTemp("", "wharf-s3-*")
		if err != nil {
			return 0, err
		}
		defer func() {
			f.Close()
			os.Remove(f.Name())
		}()
		if size, err = io.Copy(f, r); err != nil {
			return 0, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		r = f
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{ContentType: ContentType(key)})
	if err != nil {
		return 0, fmt.Errorf("storage: put %s: %w", key, err)
	}
	return info.Size, nil
}

// remaining is how many bytes a seekable r has left; an error for any
// other reader.
func remaining(r io.Reader) (int64, error) {
	sk, ok := r.(io.Seeker)
	if !ok {
		return 0, errors.New("not seekable")
	}
	cur, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	end, err := sk.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := sk.Seek(cur, io.SeekStart); err != nil {
		return 0, err
	}
	return end - cur, nil
}

// Open reads the object under key. The GET is made here, not at the first
// Read, so that a missing key is ErrNotFound now.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail("open", key, err)
	}
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, s.fail("open", key, err)
	}
	return obj, nil
}

// Exists reports whether key holds an object (a HEAD request).
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	_, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if err = s.fail("stat", key, err); errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return false, err
}

// Delete removes key; S3 answers a missing key like a deleted one.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return s.fail("delete", key, err)
	}
	return nil
}

// SignedURL is a presigned GET (SigV4 query parameters), valid for ttl
// (at most MaxURLTTL). The expiry returned is read back from the URL's own
// X-Amz-Date and X-Amz-Expires, so it is exactly when S3 stops serving it.
// Signing is local: no request is made, and the object need not exist.
func (s *S3) SignedURL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	if err := checkKey(key); err != nil {
		return "", time.Time{}, err
	}
	ttl, err := checkTTL(ttl)
	if err != nil {
		return "", time.Time{}, err
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, nil)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("storage: presign %s: %w", key, err)
	}
	q := u.Query()
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("storage: presigned URL without X-Amz-Date: %w", err)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("storage: presigned URL without X-Amz-Expires: %w", err)
	}
	return u.String(), signed.Add(time.Duration(secs) * time.Second), nil
}

// fail turns S3's "no such key" into ErrNotFound and names the rest.
func (s *S3) fail(op, key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket {
		return ErrNotFound
	}
	return fmt.Errorf("storage: %s %s: %w", op, key, err)
}
