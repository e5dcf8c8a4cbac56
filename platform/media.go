package platform

import (
	"context"
	"io"
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
