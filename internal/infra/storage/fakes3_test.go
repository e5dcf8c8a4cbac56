package storage_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// fakeS3 is a small S3 server for the S3 store's tests (no MinIO server
// binary can be had here): path-style PUT, GET, HEAD and DELETE of objects
// in one bucket, each request authenticated by a real AWS Signature V4
// check (Authorization header, or presigned query parameters with their
// expiry) against the test's secret key. PUT bodies may be plain or
// aws-chunked (minio-go's streaming signature over plain HTTP).
type fakeS3 struct {
	t                              *testing.T
	bucket, region, access, secret string

	mu      sync.Mutex
	objects map[string]fakeObject
	log     []string // "METHOD /path auth", auth being "header" or "presigned"
	chunked int      // PUTs whose body was aws-chunked
}

type fakeObject struct {
	body        []byte
	contentType string
	modified    time.Time
}

func newFakeS3(t *testing.T, bucket, region, access, secret string) (*fakeS3, *httptest.Server) {
	f := &fakeS3{t: t, bucket: bucket, region: region, access: access, secret: secret, objects: map[string]fakeObject{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeS3) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func (f *fakeS3) object(key string) fakeObject {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objects[key]
}

func s3Error(w http.ResponseWriter, r *http.Request, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource></Error>`,
			code, code, r.URL.Path)
	}
}

func (f *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	how, err := f.authenticate(r)
	if err != nil {
		f.t.Logf("fake S3 refused %s %s: %v", r.Method, r.URL, err)
		s3Error(w, r, http.StatusForbidden, "SignatureDoesNotMatch")
		return
	}
	f.mu.Lock()
	f.log = append(f.log, r.Method+" "+r.URL.Path+" "+how)
	f.mu.Unlock()
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != f.bucket {
		s3Error(w, r, http.StatusNotFound, "NoSuchBucket")
		return
	}
	if key == "" || r.URL.Query().Has("uploads") || r.URL.Query().Has("uploadId") {
		s3Error(w, r, http.StatusNotImplemented, "NotImplemented") // no bucket operations, no multipart
		return
	}
	switch r.Method {
	case http.MethodPut:
		body, err := readPutBody(r)
		if err != nil {
			f.t.Errorf("fake S3: PUT body: %v", err)
			s3Error(w, r, http.StatusBadRequest, "IncompleteBody")
			return
		}
		f.mu.Lock()
		if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
			f.chunked++
		}
		f.objects[key] = fakeObject{body: body, contentType: r.Header.Get("Content-Type"), modified: time.Now()}
		f.mu.Unlock()
		sum := sha256.Sum256(body)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
		w.WriteHeader(http.StatusOK)
	case http.MethodGet, http.MethodHead:
		f.mu.Lock()
		obj, ok := f.objects[key]
		f.mu.Unlock()
		if !ok {
			s3Error(w, r, http.StatusNotFound, "NoSuchKey")
			return
		}
		sum := sha256.Sum256(obj.body)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
		w.Header().Set("Content-Type", obj.contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(obj.body)))
		w.Header().Set("Last-Modified", obj.modified.UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			w.Write(obj.body)
		}
	case http.MethodDelete:
		f.mu.Lock()
		delete(f.objects, key)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		s3Error(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed")
	}
}

// authenticate checks a SigV4 signature, from the Authorization header or
// from presigned query parameters.
func (f *fakeS3) authenticate(r *http.Request) (string, error) {
	q := r.URL.Query()
	var cred, signedHeaders, signature, amzDate, payload, how string
	if q.Has("X-Amz-Signature") {
		how = "presigned"
		if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
			return "", errors.New("bad X-Amz-Algorithm")
		}
		cred, signedHeaders, signature, amzDate = q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), q.Get("X-Amz-Date")
		payload = "UNSIGNED-PAYLOAD"
		signedAt, err := time.Parse("20060102T150405Z", amzDate)
		if err != nil {
			return "", err
		}
		secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
		if err != nil || secs < 1 || secs > 604800 {
			return "", errors.New("bad X-Amz-Expires")
		}
		if !time.Now().Before(signedAt.Add(time.Duration(secs) * time.Second)) {
			return "", errors.New("request has expired")
		}
		q.Del("X-Amz-Signature")
	} else {
		how = "header"
		auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
		if !ok {
			return "", fmt.Errorf("no SigV4 Authorization header (%q)", r.Header.Get("Authorization"))
		}
		for _, part := range strings.Split(auth, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch k {
			case "Credential":
				cred = v
			case "SignedHeaders":
				signedHeaders = v
			case "Signature":
				signature = v
			}
		}
		amzDate, payload = r.Header.Get("X-Amz-Date"), r.Header.Get("X-Amz-Content-Sha256")
		if payload == "" {
			return "", errors.New("no X-Amz-Content-Sha256")
		}
	}
	// Credential is access/yyyymmdd/region/s3/aws4_request.
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] != f.access || parts[2] != f.region || parts[3] != "s3" || parts[4] != "aws4_request" {
		return "", fmt.Errorf("bad credential scope %q", cred)
	}
	if !strings.HasPrefix(amzDate, parts[1]) {
		return "", errors.New("credential date is not the request's")
	}
	var canon strings.Builder
	for _, h := range strings.Split(signedHeaders, ";") {
		v := r.Header.Values(h)
		if h == "host" {
			v = []string{r.Host}
		}
		for i := range v {
			v[i] = strings.Join(strings.Fields(v[i]), " ")
		}
		canon.WriteString(h + ":" + strings.Join(v, ",") + "\n")
	}
	request := strings.Join([]string{r.Method, s3utils.EncodePath(r.URL.Path), strings.ReplaceAll(q.Encode(), "+", "%20"),
		canon.String(), signedHeaders, payload}, "\n")
	scope := strings.Join(parts[1:], "/")
	reqSum := sha256.Sum256([]byte(request))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(reqSum[:])
	key := []byte("AWS4" + f.secret)
	for _, s := range []string{parts[1], parts[2], "s3", "aws4_request"} {
		key = hmacSHA256(key, s)
	}
	if want := hex.EncodeToString(hmacSHA256(key, toSign)); !hmac.Equal([]byte(want), []byte(signature)) {
		return "", errors.New("signature does not match")
	}
	return how, nil
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// readPutBody reads a PUT's object bytes: aws-chunked bodies are
// "<hex size>;chunk-signature=<sig>\r\n<data>\r\n" ending with a chunk of
// size 0; plain bodies are checked against their declared SHA-256.
func readPutBody(r *http.Request) ([]byte, error) {
	sha := r.Header.Get("X-Amz-Content-Sha256")
	if !strings.HasPrefix(sha, "STREAMING-") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(body); sha != "UNSIGNED-PAYLOAD" && sha != hex.EncodeToString(sum[:]) {
			return nil, errors.New("body does not match X-Amz-Content-Sha256")
		}
		return body, nil
	}
	br := bufio.NewReader(r.Body)
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("chunk header: %w", err)
		}
		sizeHex, _, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ";chunk-signature=")
		if !ok {
			return nil, fmt.Errorf("chunk header %q", line)
		}
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, err
		}
		if _, err := io.CopyN(&out, br, n); err != nil {
			return nil, err
		}
		if crlf, err := br.ReadString('\n'); err != nil || crlf != "\r\n" {
			return nil, errors.New("chunk does not end in CRLF")
		}
		if n == 0 {
			break
		}
	}
	if want := r.Header.Get("X-Amz-Decoded-Content-Length"); want != strconv.Itoa(out.Len()) {
		return nil, fmt.Errorf("decoded %d bytes, header says %s", out.Len(), want)
	}
	return out.Bytes(), nil
}
