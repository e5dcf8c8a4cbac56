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
