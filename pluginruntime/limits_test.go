package pluginruntime_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	getStatusPath = "/pluginmetadata.v1.PluginMetadataService/GetStatus"
	// bodyCap is DefaultServerLimits().MaxBodyBytes
	// (TestDefaultServerLimitsAreTheDocumentedOnes keeps them equal); the
	// hostile bodies are sized against it.
	bodyCap = 64 << 10
	// memoryBound is how much more heap an attack may make the process
	// hold or allocate: generous against the runtime's own buffers (a few
	// hundred KiB), far below what reading the attack whole takes.
	memoryBound = 64 << 20
)

// zeros reads as an endless stream of zero bytes, so a hostile body of any
// size is produced without being held in memory.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// memoryWatch samples the process's heap while an attack runs. The peak
// of HeapInuse shows what the attack made the process hold; TotalAlloc
// what it made it allocate, which a sample cannot miss.
type memoryWatch struct {
	base     runtime.MemStats
	peakHeap atomic.Uint64
	stop     chan struct{}
	done     chan struct{}
}

func watchMemory() *memoryWatch {
	m := &memoryWatch{stop: make(chan struct{}), done: make(chan struct{})}
	runtime.GC()
	runtime.ReadMemStats(&m.base)
	m.peakHeap.Store(m.base.HeapInuse)
	go func() {
		defer close(m.done)
		ticker := time.NewTicker(time.Millisecond)
		defer ticker.Stop()
		var s runtime.MemStats
		for {
			select {
			case <-m.stop:
				return
			case <-ticker.C:
				runtime.ReadMemStats(&s)
				if s.HeapInuse > m.peakHeap.Load() {
					m.peakHeap.Store(s.HeapInuse)
				}
			}
		}
	}()
	return m
}

// assertBounded ends the watch and checks both growths against
// memoryBound.
func (m *memoryWatch) assertBounded(t *testing.T) {
	t.Helper()
	close(m.stop)
	<-m.done
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	heapGrowth := int64(m.peakHeap.Load()) - int64(m.base.HeapInuse)
	allocated := end.TotalAlloc - m.base.TotalAlloc
	t.Logf("peak heap growth %d KiB, allocated %d KiB", heapGrowth>>10, allocated>>10)
	assert.Less(t, heapGrowth, int64(memoryBound), "peak HeapInuse growth")
	assert.Less(t, allocated, uint64(memoryBound), "bytes allocated during the attack")
}

// probeLiveness asks /livez on fresh connections, as the kubelet does,
// until stop is closed, and returns how many probes ran and how many did
// not answer 200.
func probeLiveness(baseURL string, stop <-chan struct{}) (probes, failures *atomic.Int32, wait func()) {
	probes, failures = &atomic.Int32{}, &atomic.Int32{}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			res, err := client.Get(baseURL + "/livez")
			probes.Add(1)
			if err != nil {
				failures.Add(1)
			} else {
				_, _ = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				if res.StatusCode != http.StatusOK {
					failures.Add(1)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return probes, failures, wg.Wait
}

// gzipStream compresses size zero bytes into the returned reader as it is
// read, so a bomb of gigabytes costs the test one compressor. Closing the
// reader stops the compressor.
func gzipStream(size int64) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		_, err := io.Copy(zw, io.LimitReader(zeros{}, size))
		if err == nil {
			err = zw.Close()
		}
		_ = pw.CloseWithError(err)
	}()
	return pr
}

func gzipBytes(t *testing.T, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = io.Copy(zw, io.LimitReader(zeros{}, size))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// unsized hides a reader's length from net/http, which then sends it
// chunked: the server learns the size only by reading.
type unsized struct{ io.Reader }

// Hostile bodies sent to the metadata API by any pod that reaches the
// plugin's Service: each is refused (or its connection closed), /livez
// answers throughout, and the process's memory stays bounded — none is
// read or inflated whole.
func TestHostileBodiesAreRefusedWithBoundedMemory(t *testing.T) {
	const mb = 1 << 20
	smallBomb := gzipBytes(t, 48*mb)
	require.Less(t, len(smallBomb), bodyCap, "the small bomb fits under the body cap")

	tests := []struct {
		name string
		// body returns the request body and its declared length (-1:
		// chunked).
		body     func() (io.ReadCloser, int64)
		encoding string
	}{
		{
			name: "a 200 MB body declared in Content-Length is refused unread",
			body: func() (io.ReadCloser, int64) {
				return io.NopCloser(io.LimitReader(zeros{}, 200*mb)), 200 * mb
			},
		},
		{
			name: "a 200 MB chunked body is cut off at the body cap",
			body: func() (io.ReadCloser, int64) {
				return io.NopCloser(unsized{io.LimitReader(zeros{}, 200*mb)}), -1
			},
		},
		{
			name: "a gzip bomb inflating to 2 GiB is cut off at the body cap before it inflates",
			body: func() (io.ReadCloser, int64) {
				return gzipStream(2 << 30), -1
			},
			encoding: "gzip",
		},
		{
			name: "a gzip bomb under the body cap stops inflating at the message cap",
			body: func() (io.ReadCloser, int64) {
				return io.NopCloser(bytes.NewReader(smallBomb)), int64(len(smallBomb))
			},
			encoding: "gzip",
		},
	}
	rt := startRuntime(t, newTestPlugin(), nil)
	attacker := &http.Client{Timeout: 60 * time.Second}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, length := tc.body()
			defer body.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, rt.baseURL+getStatusPath, body)
			require.NoError(t, err)
			req.ContentLength = length
			req.Header.Set("Content-Type", "application/proto")
			req.Header.Set("Connect-Protocol-Version", "1")
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}

			memory := watchMemory()
			stopProbes := make(chan struct{})
			probes, failures, waitProbes := probeLiveness(rt.baseURL, stopProbes)
			res, err := attacker.Do(req)
			close(stopProbes)
			waitProbes()
			// The refusal may reach the client, or the server may close the
			// connection while the client is still sending: both refuse.
			if err == nil {
				reply, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
				_ = res.Body.Close()
				assert.Contains(t, []int{http.StatusTooManyRequests, http.StatusRequestEntityTooLarge}, res.StatusCode,
					"refused as too large (Connect's resource_exhausted is 429): %s", reply)
			} else {
				t.Logf("connection closed while sending: %v", err)
			}
			memory.assertBounded(t)
			assert.Positive(t, probes.Load())
			assert.Zero(t, failures.Load(), "/livez answered every probe during the attack")
			assert.Equal(t, http.StatusOK, rt.get(t, "/livez"))
		})
	}
}

// A header block far beyond any token is refused (431) before a handler
// runs; net/http's own default would take up to 1 MiB of it.
func TestOversizedHeadersAreRefused(t *testing.T) {
	rt := startRuntime(t, newTestPlugin(), nil)
	req, err := http.NewRequest(http.MethodGet, rt.baseURL+"/livez", nil)
	require.NoError(t, err)
	req.Header.Set("X-Padding", strings.Repeat("a", 200<<10))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	assert.Equal(t, http.StatusOK, rt.get(t, "/livez"), "an ordinary request still answers")
}
