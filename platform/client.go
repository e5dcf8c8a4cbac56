// Package platform is the provider's business API client: the one place that
// knows the provider's URLs and JSON. Callers pass the credentials of the
// account they act for on every call, so one Client serves every tenant.
//
// Errors from the provider come back as *Error, classified as throttled,
// transient or permanent from the provider's error code (never from message
// text), so that callers decide retries from the class.
package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultVersion is the provider API version used when none is configured.
const DefaultVersion = "v21.0"

// Client calls the provider API.
type Client struct {
	base    string
	version string
	http    *http.Client
}

// maxIdlePerHost is how many idle keep-alive connections the default client
// keeps to the provider. Campaign lanes have up to 16 sends each in flight
// (8 lanes a campaign, several campaigns a worker): with net/http's default
// of 2, every send beyond the second opened a new connection and closed it
// after the answer, which cost a worker a fifth of its CPU in dials and
// left sockets in TIME_WAIT. HTTP/2 providers multiplex on one connection
// and are not affected.
const maxIdlePerHost = 256

// New builds a client for baseURL (PLATFORM_API_URL) and an API version.
// httpClient may be nil for a default with a 30 s timeout that keeps
// connections to the provider alive for concurrent sends.
func New(baseURL, version string, httpClient *http.Client) *Client {
	if version == "" {
		version = DefaultVersion
	}
	if httpClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = maxIdlePerHost
		t.MaxIdleConnsPerHost = maxIdlePerHost
		httpClient = &http.Client{Timeout: 30 * time.Second, Transport: t}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), version: version, http: httpClient}
}

// Version is the API version in use (reported by the embedded-signup config).
func (c *Client) Version() string { return c.version }

// url builds {base}/{version}/{path}?{query}.
func (c *Client) url(path string, q url.Values) string {
	u := c.base + "/" + c.version + "/" + strings.TrimLeft(path, "/")
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// do sends a request and decodes a 2xx JSON answer into out (when non-nil).
// A non-2xx answer becomes an *Error; a transport failure becomes a transient
// *Error wrapping it.
func (c *Client) do(ctx context.Context, method, token, path string, q url.Values, body io.Reader, contentType string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.url(path, q), body)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return networkError(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return networkError(err)
	}
	if res.StatusCode/100 != 2 {
		return parseError(res.StatusCode, res.Header, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &Error{HTTPStatus: res.StatusCode, Message: fmt.Sprintf("unexpected answer from the provider: %v", err), Class: Transient}
	}
	return nil
}

func (c *Client) getJSON(ctx context.Context, token, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, token, path, q, nil, "", out)
}

func (c *Client) postJSON(ctx context.Context, token, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, token, path, nil, bytes.NewReader(b), "application/json", out)
}

func (c *Client) delete(ctx context.Context, token, path string, q url.Values) error {
	var out successResp
	return c.do(ctx, http.MethodDelete, token, path, q, nil, "", &out)
}

// postMultipart sends fields and one file as multipart/form-data.
func (c *Client) postMultipart(ctx context.Context, token, path string, fields map[string]string, fileField, fileName, fileType string, file io.Reader, out any) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			return err
		}
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename=%q`, fileField, fileName)}
	if fileType != "" {
		h["Content-Type"] = []string{fileType}
	}
	fw, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(fw, file); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, token, path, nil, &buf, mw.FormDataContentType(), out)
}

type successResp struct {
	Success bool `json:"success"`
}
