package plugincontroller

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

// statusPlugin answers GetStatus with its phase and message.
type statusPlugin struct {
	pluginmetadatav1connect.UnimplementedPluginMetadataServiceHandler
	phase, message string
}

func (p statusPlugin) GetStatus(context.Context, *connect.Request[pluginmetadatav1.GetStatusRequest]) (*connect.Response[pluginmetadatav1.GetStatusResponse], error) {
	return connect.NewResponse(&pluginmetadatav1.GetStatusResponse{Phase: &p.phase, Message: &p.message}), nil
}

// statusHandler serves plugin's metadata API.
func statusHandler(plugin statusPlugin) http.Handler {
	_, handler := pluginmetadatav1connect.NewPluginMetadataServiceHandler(plugin)
	return handler
}

// TestPollsReachThePluginOnceItsServiceDoes: the first connection goes to
// another server (a ClusterIP kube-proxy has not programmed yet routes
// elsewhere), later connections to the plugin, as a Service's address does
// once it is translated. A poll after that must reach the plugin.
func TestPollsReachThePluginOnceItsServiceDoes(t *testing.T) {
	// Another server that answers 404 with nothing else, so a client may
	// keep the connection for the next call.
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	t.Cleanup(elsewhere.Close)
	plugin := httptest.NewServer(statusHandler(statusPlugin{phase: "running"}))
	t.Cleanup(plugin.Close)
	service := serviceAddress(t, elsewhere.Listener.Addr().String(), plugin.Listener.Addr().String())

	c := &MetadataClient{BaseURL: func(string) string { return "http://" + service }}
	_, err := c.GetStatus(context.Background(), PluginCall{Namespace: "ns"})
	require.Error(t, err, "the first connection reached the other server")
	for range 3 {
		report, err := c.GetStatus(context.Background(), PluginCall{Namespace: "ns"})
		require.NoError(t, err, "every later poll reaches the plugin")
		assert.Equal(t, "running", report.Phase)
	}
}

// serviceAddress stands in for a ClusterIP: the first connection is
// forwarded to first, every later one to then.
func serviceAddress(t *testing.T, first, then string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			target := then
			if conns.Add(1) == 1 {
				target = first
			}
			go forward(in, target)
		}
	}()
	return ln.Addr().String()
}

func forward(in net.Conn, target string) {
	defer in.Close()
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	go func() { _, _ = io.Copy(out, in) }()
	_, _ = io.Copy(in, out)
}

// TestHostileAnswersCostBoundedMemory: a plugin answering GetStatus with
// far more than a status is refused, and the controller allocates a
// bounded amount while refusing it (each answer is 50 to 100 MB, the bound
// is 32 MiB) and stops reading long before the plugin stops sending.
func TestHostileAnswersCostBoundedMemory(t *testing.T) {
	const size = 100 << 20
	bomb := gzipBomb(t, 50<<20)
	tests := []struct {
		name    string
		handler func(sent *atomic.Int64) http.HandlerFunc
		// wantCode is the Connect code of the refusal; 0 is any error.
		wantCode connect.Code
		// streams: the plugin offers all of size, which the controller
		// must not read to the end.
		streams bool
	}{
		{
			name:     "a 100 MB message is refused",
			handler:  func(sent *atomic.Int64) http.HandlerFunc { return hugeStatusAnswer(size, sent) },
			wantCode: connect.CodeResourceExhausted, streams: true,
		},
		{
			name: "a 100 MB error message is refused",
			handler: func(sent *atomic.Int64) http.HandlerFunc {
				return func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusInternalServerError)
					stream(w, []byte(`{"code":"internal","message":"`), size, sent)
				}
			},
			wantCode: connect.CodeResourceExhausted, streams: true,
		},
		{
			name: "a gzip body, 50 KB inflating to 50 MB, is refused unread",
			handler: func(sent *atomic.Int64) http.HandlerFunc {
				return func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/proto")
					w.Header().Set("Content-Encoding", "gzip")
					n, _ := w.Write(bomb)
					sent.Add(int64(n))
				}
			},
			wantCode: connect.CodeInternal,
		},
		{
			name: "a 1 MB header is refused",
			handler: func(sent *atomic.Int64) http.HandlerFunc {
				junk := strings.Repeat("j", 1<<20)
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("X-Junk", junk)
					hugeStatusAnswer(10, sent)(w, r)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			done := make(chan struct{}, 1)
			handler := tc.handler(&sent)
			plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() { done <- struct{}{} }()
				handler(w, r)
			}))
			t.Cleanup(plugin.Close)
			c := &MetadataClient{BaseURL: func(string) string { return plugin.URL }}

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			report, err := c.GetStatus(context.Background(), PluginCall{Namespace: "ns"})
			runtime.ReadMemStats(&after)

			require.Error(t, err, "an answer of %d bytes of message was accepted", len(report.Message))
			if tc.wantCode != 0 {
				assert.Equal(t, tc.wantCode, connect.CodeOf(err), "%v", err)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d bytes, refused with: %v", allocated, err)
			assert.Less(t, allocated, uint64(32<<20), "bytes allocated while refusing the answer")
			if tc.streams {
				<-done
				assert.Less(t, sent.Load(), int64(size/2), "bytes the plugin could send before the controller hung up")
			}
		})
	}
}

// hugeStatusAnswer answers GetStatus with phase "running" and a message of
// size bytes, written from a small buffer so that the plugin side of the
// test allocates next to nothing of it; sent counts the bytes written.
func hugeStatusAnswer(size int, sent *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/proto")
		// Field 1 (phase), then field 2 (message) with its length; the
		// message's bytes follow.
		head := protowire.AppendTag(nil, 1, protowire.BytesType)
		head = protowire.AppendString(head, "running")
		head = protowire.AppendTag(head, 2, protowire.BytesType)
		head = protowire.AppendVarint(head, uint64(size))
		stream(w, head, size, sent)
	}
}

// stream writes head and then size bytes of "a", until a write fails.
func stream(w io.Writer, head []byte, size int, sent *atomic.Int64) {
	n, err := w.Write(head)
	sent.Add(int64(n))
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for left := size; left > 0 && err == nil; left -= n {
		n, err = w.Write(chunk[:min(left, len(chunk))])
		sent.Add(int64(n))
	}
}

// gzipBomb is a gzip'd GetStatusResponse whose message is size zero bytes.
func gzipBomb(t *testing.T, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	head := protowire.AppendTag(nil, 2, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(size))
	_, err = zw.Write(head)
	require.NoError(t, err)
	zeros := make([]byte, 1<<20)
	for range size / len(zeros) {
		_, err = zw.Write(zeros)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// TestCallsCarryTheirToken: both calls of the metadata API send the
// call's token as a bearer token, which is what a plugin's runtime checks;
// a call without one sends no Authorization header at all.
func TestCallsCarryTheirToken(t *testing.T) {
	var seen atomic.Value // the last request's Authorization header
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Values("Authorization"))
		statusHandler(statusPlugin{phase: "running"}).ServeHTTP(w, r)
	}))
	t.Cleanup(plugin.Close)
	c := &MetadataClient{BaseURL: func(string) string { return plugin.URL }}
	calls := map[string]func(PluginCall) error{
		"GetStatus": func(call PluginCall) error {
			_, err := c.GetStatus(context.Background(), call)
			return err
		},
		// Unimplemented by statusPlugin: the header is sent all the same.
		"RequestUninstall": func(call PluginCall) error { return c.RequestUninstall(context.Background(), call) },
	}
	for name, call := range calls {
		t.Run(name+" sends the token as a bearer token", func(t *testing.T) {
			_ = call(PluginCall{Namespace: "ns", Token: "header.claims.signature"})
			assert.Equal(t, []string{"Bearer header.claims.signature"}, seen.Load())
		})
		t.Run(name+" without a token sends no Authorization", func(t *testing.T) {
			_ = call(PluginCall{Namespace: "ns"})
			assert.Empty(t, seen.Load())
		})
	}
}
