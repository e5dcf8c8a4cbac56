package web

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// A stream that calls NoWriteDeadline outlives the server's write timeout;
// the same stream without it is cut off.
func TestNoWriteDeadlineLetsAStreamOutliveTheWriteTimeout(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	stream := func(lift bool) gin.HandlerFunc {
		return func(c *gin.Context) {
			if lift {
				if err := NoWriteDeadline(c); err != nil {
					t.Error(err)
				}
			}
			for i := range 8 {
				fmt.Fprintf(c.Writer, "tick %d\n", i)
				c.Writer.Flush()
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	r.GET("/lifted", stream(true))
	r.GET("/bounded", stream(false))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r, WriteTimeout: 300 * time.Millisecond}
	go srv.Serve(l)
	defer srv.Close()

	get := func(path string) string {
		res, err := http.Get("http://" + l.Addr().String() + path)
		if err != nil {
			return ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	if body := get("/lifted"); strings.Count(body, "tick") != 8 {
		t.Fatalf("lifted stream got %q, want 8 ticks", body)
	}
	if body := get("/bounded"); strings.Count(body, "tick") >= 8 {
		t.Fatalf("the write timeout did not cut the stream: %q", body)
	}
}
