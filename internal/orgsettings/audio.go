package orgsettings

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/audio"
	"wharf/internal/infra/storage"
)

// Audio kinds an organization can upload.
const (
	HoldMusic = "hold_music"
	Ringback  = "ringback"
)

// MaxAudioUpload is the largest accepted upload (5 MB).
const MaxAudioUpload = 5 << 20

// AudioMIME is the type of every stored audio file.
const AudioMIME = "audio/ogg"

var audioName = regexp.MustCompile(`^(hold_music|ringback)-[0-9a-f-]{36}\.ogg$`)

// AudioFile describes a stored, transcoded upload.
type AudioFile struct {
	Filename string
	Type     string
	MIMEType string
	Size     int64
}

func audioKey(orgID uuid.UUID, name string) string {
	return fmt.Sprintf("orgs/%s/audio/%s", orgID, name)
}

func (s *Service) audioExists(ctx context.Context, orgID uuid.UUID, kind, name string) (bool, error) {
	if !audioName.MatchString(name) || name[:len(kind)] != kind || name[len(kind)] != '-' {
		return false, nil
	}
	return s.store.Exists(ctx, audioKey(orgID, name))
}

// ErrNoFFmpeg answers uploads on a server started without ffmpeg.
var ErrNoFFmpeg = apperr.Unavailablef("audio uploads need ffmpeg, which is not installed on this server: " +
	"install it (apt-get install ffmpeg) or set FFMPEG_PATH")

// AudioEnabled reports whether uploads can be transcoded: the api starts
// without ffmpeg and only this feature is off.
func (s *Service) AudioEnabled() bool { return s.transcode != nil }

// UploadAudio validates, transcodes and stores hold music or a ringback tone
// and points the matching setting at it. Anything but OGG, Opus, MP3 or WAV
// up to 5 MB is refused before anything is stored. Without ffmpeg a valid
// upload is answered ErrNoFFmpeg; invalid input is still refused as invalid
// first, since that answer does not depend on the server.
func (s *Service) UploadAudio(ctx context.Context, orgID uuid.UUID, kind string, r io.Reader) (*AudioFile, error) {
	if kind != HoldMusic && kind != Ringback {
		return nil, apperr.Invalidf("type must be hold_music or ringback")
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxAudioUpload+1))
	if err != nil {
		return nil, apperr.Invalidf("cannot read the uploaded file")
	}
	if len(data) > MaxAudioUpload {
		return nil, apperr.Invalidf("file is larger than 5 MB")
	}
	if len(data) == 0 {
		return nil, apperr.Invalidf("file is empty")
	}
	if _, err := audio.Sniff(data); err != nil {
		return nil, apperr.Invalidf("%v", err)
	}
	if s.transcode == nil {
		return nil, ErrNoFFmpeg
	}
	out, err := s.transcode.ToOpus(ctx, data)
	if errors.Is(err, audio.ErrUndecodable) {
		return nil, apperr.Invalidf("the file could not be decoded as audio")
	}
	if err != nil {
		return nil, err
	}
	_, prev, err := s.load(ctx, s.db, orgID)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%s.ogg", kind, uuid.New())
	size, err := s.store.Put(ctx, audioKey(orgID, name), bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	u := Update{}
	old := prev.HoldMusicFile
	if kind == HoldMusic {
		u.HoldMusicFile = &name
	} else {
		u.RingbackFile = &name
		old = prev.RingbackFile
	}
	if err := s.Apply(ctx, orgID, u); err != nil {
		_ = s.store.Delete(ctx, audioKey(orgID, name))
		return nil, err
	}
	if old != nil && *old != "" && *old != name {
		_ = s.store.Delete(ctx, audioKey(orgID, *old)) // replaced; best effort
	}
	return &AudioFile{Filename: name, Type: kind, MIMEType: AudioMIME, Size: size}, nil
}

// OpenAudio opens one of the organization's uploaded audio files by the
// name its setting stores (hold_music_file, ringback_file), for the call
// bridge to play. A name that is not a stored upload's shape, or that is
// not under this organization's files, is not found: names never reach
// another organization's files or leave the audio directory.
func (s *Service) OpenAudio(ctx context.Context, orgID uuid.UUID, name string) (io.ReadCloser, error) {
	if !audioName.MatchString(name) || s.store == nil {
		return nil, apperr.NotFoundf("audio file not found")
	}
	r, err := s.store.Open(ctx, audioKey(orgID, name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apperr.NotFoundf("audio file not found")
	}
	return r, err
}
