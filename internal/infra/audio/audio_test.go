package audio_test

import (
	"errors"
	"testing"

	"wharf/internal/infra/audio"
)

func TestSniff(t *testing.T) {
	cases := map[string]struct {
		b    []byte
		want audio.Format
	}{
		"ogg":       {[]byte("OggS\x00\x02"), audio.OGG},
		"wav":       {[]byte("RIFF\x24\x00\x00\x00WAVEfmt "), audio.WAV},
		"mp3 id3":   {[]byte("ID3\x04\x00"), audio.MP3},
		"mp3 frame": {[]byte{0xFF, 0xFB, 0x90, 0x00}, audio.MP3},
	}
	for name, c := range cases {
		if got, err := audio.Sniff(c.b); err != nil || got != c.want {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
	for name, b := range map[string][]byte{"png": []byte("\x89PNG\r\n"), "riff avi": []byte("RIFF\x00\x00\x00\x00AVI "), "text": []byte("hello"), "empty": nil} {
		if _, err := audio.Sniff(b); !errors.Is(err, audio.ErrUnsupported) {
			t.Errorf("%s accepted", name)
		}
	}
}
