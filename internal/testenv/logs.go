package testenv

import (
	"context"
	"log/slog"
	"sync"
)

// Record is one captured log record.
type Record struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Logs captures every record of a logger, for tests of what is logged at
// which level.
type Logs struct {
	mu      sync.Mutex
	records []Record
}

// CaptureLogs returns a logger that records everything from debug up.
func CaptureLogs() (*slog.Logger, *Logs) {
	l := &Logs{}
	return slog.New(captureHandler{logs: l}), l
}

// Records returns what was logged at level or above.
func (l *Logs) Records(level slog.Level) []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Record
	for _, r := range l.records {
		if r.Level >= level {
			out = append(out, r)
		}
	}
	return out
}

type captureHandler struct {
	logs  *Logs
	attrs []slog.Attr
}

func (captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.Attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.logs.mu.Lock()
	h.logs.records = append(h.logs.records, rec)
	h.logs.mu.Unlock()
	return nil
}

func (h captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return captureHandler{logs: h.logs, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

// WithGroup is not needed by the code under test; groups are flattened.
func (h captureHandler) WithGroup(string) slog.Handler { return h }
