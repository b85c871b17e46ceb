package pluginruntime_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

func TestDefaultServerLimitsAreTheDocumentedOnes(t *testing.T) {
	l := pluginruntime.DefaultServerLimits()
	assert.Equal(t, int64(bodyCap), l.MaxBodyBytes, "the hostile-body tests are sized against it")
	assert.Equal(t, 64<<10, l.MaxReadMessageBytes)
	assert.Equal(t, 1<<20, l.MaxSendMessageBytes)
	assert.Equal(t, 64<<10, l.MaxHeaderBytes)
	assert.Equal(t, 5*time.Second, l.ReadHeaderTimeout)
	assert.Equal(t, 10*time.Second, l.ReadTimeout)
	assert.Equal(t, 30*time.Second, l.WriteTimeout)
	assert.Greater(t, l.IdleTimeout, 30*time.Second, "longer than the platform controller's status poll, so its connection is reused")
}

// closedByServer reads from r until the server closes the connection and
// reports that, or reports the failsafe deadline if it never does. The
// deadline only stops a broken test from hanging; what is checked is who
// ended the connection.
func closedByServer(conn net.Conn, r io.Reader) error {
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, r)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return errors.New("the server kept the connection open")
	}
	return nil // EOF or a reset: the server closed it
}

// Connections that hold the server without finishing a request — idle
// keep-alives, headers that never end, a body that never arrives — are
// closed by the server's timeouts, hundreds at a time, while /livez keeps
// answering and memory stays bounded.
func TestIdleAndSlowConnectionsAreClosed(t *testing.T) {
	limits := pluginruntime.ServerLimits{
		ReadHeaderTimeout: 200 * time.Millisecond,
		ReadTimeout:       300 * time.Millisecond,
		WriteTimeout:      time.Second,
		IdleTimeout:       200 * time.Millisecond,
	}
	rt := startRuntime(t, newTestPlugin(), nil, pluginruntime.WithServerLimits(limits))

	attacks := []struct {
		name  string
		count int
		// hold sends what the attacker sends before it goes quiet, and
		// returns the reader of the server's side of the connection.
		hold func(conn net.Conn) (io.Reader, error)
	}{
		{
			name:  "keep-alive connections idle after one request",
			count: 300,
			hold: func(conn net.Conn) (io.Reader, error) {
				if _, err := fmt.Fprintf(conn, "GET /livez HTTP/1.1\r\nHost: plugin\r\n\r\n"); err != nil {
					return nil, err
				}
				r := bufio.NewReader(conn)
				res, err := http.ReadResponse(r, nil)
				if err != nil {
					return nil, err
				}
				_, _ = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				if res.StatusCode != http.StatusOK || res.Close {
					return nil, fmt.Errorf("first request: %s, close %v", res.Status, res.Close)
				}
				return r, nil
			},
		},
		{
			name:  "headers that never end",
			count: 100,
			hold: func(conn net.Conn) (io.Reader, error) {
				_, err := fmt.Fprintf(conn, "GET /livez HTTP/1.1\r\nHost: plugin\r\nX-Slow: ")
				return conn, err
			},
		},
		{
			name:  "a body that never arrives",
			count: 100,
			hold: func(conn net.Conn) (io.Reader, error) {
				_, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: plugin\r\nContent-Type: application/proto\r\nConnect-Protocol-Version: 1\r\nContent-Length: 1000\r\n\r\n0123456789", getStatusPath)
				return conn, err
			},
		},
	}

	memory := watchMemory()
	stopProbes := make(chan struct{})
	probes, failures, waitProbes := probeLiveness(rt.baseURL, stopProbes)
	var wg sync.WaitGroup
	results := make([][]error, len(attacks))
	for i, attack := range attacks {
		results[i] = make([]error, attack.count)
		for j := range attack.count {
			wg.Go(func() {
				conn, err := net.Dial("tcp", rt.addr)
				if err != nil {
					results[i][j] = err
					return
				}
				defer conn.Close()
				r, err := attack.hold(conn)
				if err != nil {
					results[i][j] = err
					return
				}
				results[i][j] = closedByServer(conn, r)
			})
		}
	}
	wg.Wait()
	close(stopProbes)
	waitProbes()

	for i, attack := range attacks {
		t.Run(attack.name, func(t *testing.T) {
			open := 0
			for _, err := range results[i] {
				if err != nil {
					if open == 0 {
						t.Log(err)
					}
					open++
				}
			}
			assert.Zero(t, open, "of %d connections, every one is closed by the server", attack.count)
		})
	}
	memory.assertBounded(t)
	assert.Positive(t, probes.Load())
	assert.Zero(t, failures.Load(), "/livez answered every probe while the connections were held")
	require.Equal(t, http.StatusOK, rt.get(t, "/livez"))
}
