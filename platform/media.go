package platform

import (
	"context"
	"errors"
	"io"
	"net/http"
)

// MediaInfo describes uploaded or received media.
type MediaInfo struct {
	MessagingProduct string `json:"messaging_product"`
	URL              string `json:"url"`
	MimeType         string `json:"mime_type"`
	SHA256           string `json:"sha256"`
	FileSize         int64  `json:"file_size"`
	ID               string `json:"id"`
}

// UploadMedia uploads a file for later sending by id.
func (c *Client) UploadMedia(ctx context.Context, cr Creds, filename, mimeType string, r io.Reader) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	fields := map[string]string{"messaging_product": "whatsapp", "type": mimeType}
	if err := c.postMultipart(ctx, cr.AccessToken, cr.PhoneNumberID+"/media", fields, "file", filename, mimeType, r, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

// Media looks up media by id.
func (c *Client) Media(ctx context.Context, cr Creds, mediaID string) (*MediaInfo, error) {
	var out MediaInfo
	return &out, c.getJSON(ctx, cr.AccessToken, mediaID, nil, &out)
}

// DeleteMedia deletes uploaded media.
func (c *Client) DeleteMedia(ctx context.Context, cr Creds, mediaID string) error {
	return c.delete(ctx, cr.AccessToken, mediaID, nil)
}

// ErrMediaTooLarge is returned by DownloadMedia for a file over the limit.
var ErrMediaTooLarge = errors.New("platform: media over the size limit")

// DownloadMedia copies the file at a media URL (MediaInfo.URL, which needs
// the account's token) into w, at most limit bytes: a larger file fails with
// ErrMediaTooLarge after limit+1 bytes, so a lying file_size cannot make us
// store more. It returns the bytes copied.
func (c *Client) DownloadMedia(ctx context.Context, cr Creds, mediaURL string, w io.Writer, limit int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, mediaURL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+cr.AccessToken)
	// The client's overall timeout (30 s) is for JSON calls; a 100 MB
	// document may take longer, so the download is bounded by ctx (the
	// media:fetch job's timeout) instead.
	hc := *c.http
	hc.Timeout = 0
	res, err := hc.Do(req)
	if err != nil {
		return 0, networkError(err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return 0, parseError(res.StatusCode, res.Header, data)
	}
	if res.ContentLength > limit {
		return 0, ErrMediaTooLarge
	}
	n, err := io.Copy(w, io.LimitReader(res.Body, limit+1))
	if err != nil {
		return n, networkError(err)
	}
	if n > limit {
		return n, ErrMediaTooLarge
	}
	return n, nil
}
