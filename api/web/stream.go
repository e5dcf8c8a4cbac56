package web

import (
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
