package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Mix mixes a call's two recorded legs into one OGG/Opus file at outPath with
// ffmpeg (amix, without the default halving of each input) and returns the
// mixed file's duration as ffprobe reads it. A leg whose file is missing or
// holds no audio is left out; with no usable leg at all Mix fails. ffprobe is
// looked up next to ffmpegPath, then in PATH.
//
// The legs line up because the recorder keeps each file on the wall clock of
// the talk period (silence fills the gaps), so both start at the first Bridge
// and last until Close.
func Mix(ctx context.Context, ffmpegPath string, rec Recording, outPath string) (time.Duration, error) {
	if ffmpegPath == "" {
		ffmpegPath = "ffmpeg"
	}
	var inputs []string
	for _, f := range []string{rec.PlatformFile, rec.AgentFile} {
		if f == "" {
			continue
		}
		// An OGG/Opus file with only its two header pages is a few hundred
		// bytes; ffmpeg would fail on it as an amix input.
		if st, err := os.Stat(f); err != nil || st.Size() < 200 {
			continue
		}
		inputs = append(inputs, f)
	}
	if len(inputs) == 0 {
		return 0, errors.New("media: nothing recorded to mix")
	}
	args := []string{"-hide_banner", "-loglevel", "error", "-nostdin", "-y"}
	for _, f := range inputs {
		args = append(args, "-i", f)
	}
	if len(inputs) == 2 {
		args = append(args, "-filter_complex", "amix=inputs=2:duration=longest:normalize=0")
	}
	args = append(args, "-ac", "1", "-c:a", "libopus", "-b:a", "32k", "-f", "ogg", outPath)
	cmd := exec.CommandContext(ctx, ffmpegPath, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("media: ffmpeg mix: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return probeDuration(ctx, ffprobeFor(ffmpegPath), outPath)
}

// ffprobeFor finds the ffprobe that ships with ffmpegPath.
func ffprobeFor(ffmpegPath string) string {
	if dir := filepath.Dir(ffmpegPath); dir != "." {
		p := filepath.Join(dir, strings.Replace(filepath.Base(ffmpegPath), "ffmpeg", "ffprobe", 1))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "ffprobe"
}

// probeDuration reads a media file's duration with ffprobe.
func probeDuration(ctx context.Context, ffprobe, path string) (time.Duration, error) {
	out, err := exec.CommandContext(ctx, ffprobe, "-v", "error", "-show_entries", "format=duration",
		"-of", "default=noprint_wrappers=1:nokey=1", path).Output()
	if err != nil {
		return 0, fmt.Errorf("media: ffprobe %s: %w", path, err)
	}
	sec, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("media: ffprobe duration %q: %w", strings.TrimSpace(string(out)), err)
	}
	return time.Duration(sec * float64(time.Second)), nil
}
