// Package audio recognises uploaded audio and transcodes it with ffmpeg to
// the one format the call bridge plays: Ogg/Opus, 48 kHz, mono, with one
// 20 ms Opus frame per Ogg page, so that a page maps to one RTP packet.
package audio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Format is a recognised input format.
type Format string

// Accepted input formats.
const (
	OGG Format = "ogg" // Vorbis or Opus in Ogg
	MP3 Format = "mp3"
	WAV Format = "wav"
)

// ErrUnsupported is returned for data that is not OGG, Opus, MP3 or WAV.
var ErrUnsupported = errors.New("unsupported audio type: upload OGG, Opus, MP3 or WAV")

// ErrUndecodable is returned when ffmpeg cannot decode the data.
var ErrUndecodable = errors.New("the file could not be decoded as audio")

// Sniff recognises the format from the first bytes; the client's file name
// and Content-Type are not trusted.
func Sniff(b []byte) (Format, error) {
	switch {
	case len(b) >= 4 && string(b[:4]) == "OggS":
		return OGG, nil
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return WAV, nil
	case len(b) >= 3 && string(b[:3]) == "ID3":
		return MP3, nil
	case len(b) >= 2 && b[0] == 0xFF && b[1]&0xE0 == 0xE0 && b[1]&0x06 != 0: // MPEG frame sync, layer set
		return MP3, nil
	}
	return "", ErrUnsupported
}

// Transcoder runs ffmpeg with bounded concurrency, so a burst of uploads
// cannot start more encoders than there are CPUs.
type Transcoder struct {
	ffmpeg  string
	sem     chan struct{}
	timeout time.Duration
}

// NewTranscoder checks that ffmpeg can be found.
func NewTranscoder(ffmpegPath string) (*Transcoder, error) {
	p, err := exec.LookPath(ffmpegPath)
	if err != nil {
		return nil, fmt.Errorf("ffmpeg not found (%q): install it (apt-get install ffmpeg) or set FFMPEG_PATH: %w", ffmpegPath, err)
	}
	return &Transcoder{ffmpeg: p, sem: make(chan struct{}, runtime.NumCPU()), timeout: 2 * time.Minute}, nil
}

// ToOpus transcodes in to Ogg/Opus 48 kHz mono with 20 ms frames and pages.
func (t *Transcoder) ToOpus(ctx context.Context, in []byte) ([]byte, error) {
	if _, err := Sniff(in); err != nil {
		return nil, err
	}
	select {
	case t.sem <- struct{}{}:
		defer func() { <-t.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.ffmpeg,
		"-hide_banner", "-loglevel", "error", "-nostdin",
		"-i", "pipe:0",
		"-vn", "-map_metadata", "-1",
		"-ac", "1", "-ar", "48000",
		"-c:a", "libopus", "-b:a", "32k", "-application", "audio", "-frame_duration", "20",
		"-page_duration", "20000", // microseconds: one 20 ms frame per Ogg page
		"-f", "ogg", "pipe:1")
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ffmpeg timed out: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s", ErrUndecodable, firstLine(stderr.String()))
	}
	if out.Len() == 0 {
		return nil, ErrUndecodable
	}
	return out.Bytes(), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
