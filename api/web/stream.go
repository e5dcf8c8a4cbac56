package web

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// NoWriteDeadline lifts the server's write timeout (HTTP_WRITE_TIMEOUT) for
// this request, which a streaming answer (server-sent events) outlives by
// design. Call it before the first write; the handler must then end the
// stream itself (client gone, work done, or its own time limit). It fails
// only for a ResponseWriter that cannot set deadlines, which the real
// server's can.
func NoWriteDeadline(c *gin.Context) error {
	return http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
}

// WriteDeadlineIn moves the write deadline of this request to d from now: a
// handler that waits for a worker's result (an import) for longer than
// HTTP_WRITE_TIMEOUT can still answer. It fails only for a ResponseWriter
// that cannot set deadlines, which the real server's can.
func WriteDeadlineIn(c *gin.Context, d time.Duration) error {
	return http.NewResponseController(c.Writer).SetWriteDeadline(time.Now().Add(d))
}

// StallGuard lifts the server's write timeout for a streamed answer that
// may take long (a large export) and answers the writer to stream it
// through, which gives each write at most stall to go out: a client that
// reads, however slowly, keeps the stream going, and one that stops reading
// for stall gets its write failed (os.ErrDeadlineExceeded) and its
// connection cut, so that the handler can give back what it holds (an
// export's transaction and database connection) instead of waiting on the
// client's full socket buffers for ever. Call it before the first write.
func StallGuard(c *gin.Context, stall time.Duration) io.Writer {
	return &stallWriter{w: c.Writer, rc: http.NewResponseController(c.Writer), stall: stall}
}

type stallWriter struct {
	w     io.Writer
	rc    *http.ResponseController
	stall time.Duration
}

// Write moves the deadline before each write. The deadline stays after the
// last one, so that the answer's end, which the server writes after the
// handler returns, is bounded too.
func (s *stallWriter) Write(p []byte) (int, error) {
	// A writer that cannot set deadlines (a test's recorder; never the
	// server's) is written to unguarded.
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.stall)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	return s.w.Write(p)
}
