package web

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
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

// StallGuard: a client that reads slowly but steadily gets the whole
// stream; one that stops reading has the handler's write fail after the
// stall time, instead of blocking on its full socket buffers for ever.
func TestStallGuardCutsOffAClientThatStopsReading(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	chunk := []byte(strings.Repeat("x", 16<<10))
	done := make(chan error, 2)
	r.GET("/stream/:mb", func(c *gin.Context) {
		mb, _ := strconv.Atoi(c.Param("mb"))
		w := StallGuard(c, time.Second)
		for n := 0; n < mb<<20; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r}
	go srv.Serve(l)
	defer srv.Close()
	request := func(path string, readBuffer int) net.Conn {
		conn, err := (&net.Dialer{}).Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if readBuffer > 0 {
			_ = conn.(*net.TCPConn).SetReadBuffer(readBuffer)
		}
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
		return conn
	}

	slow := request("/stream/1", 0)
	defer slow.Close()
	buf := make([]byte, 32<<10)
	var got int
	for {
		n, err := slow.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the slow reader: %v after %d bytes", err, got)
		}
		time.Sleep(5 * time.Millisecond) // slow, but never a second without reading
	}
	if got < 1<<20 {
		t.Fatalf("the slow reader got %d bytes of 1 MB", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the slow reader's stream failed: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the slow reader's stream did not end")
	}

	stalled := request("/stream/64", 4<<10) // never read
	defer stalled.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the stalled stream ended with %v, want a deadline error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a client that stopped reading held the handler for a minute")
	}
}
