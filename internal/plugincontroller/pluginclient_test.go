package plugincontroller

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

type runningPlugin struct {
	pluginmetadatav1connect.UnimplementedPluginMetadataServiceHandler
}

func (runningPlugin) GetStatus(context.Context, *connect.Request[pluginmetadatav1.GetStatusRequest]) (*connect.Response[pluginmetadatav1.GetStatusResponse], error) {
	phase := "running"
	return connect.NewResponse(&pluginmetadatav1.GetStatusResponse{Phase: &phase}), nil
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
	_, handler := pluginmetadatav1connect.NewPluginMetadataServiceHandler(runningPlugin{})
	plugin := httptest.NewServer(handler)
	t.Cleanup(plugin.Close)
	service := serviceAddress(t, elsewhere.Listener.Addr().String(), plugin.Listener.Addr().String())

	c := &MetadataClient{BaseURL: func(string) string { return "http://" + service }}
	_, err := c.GetStatus(context.Background(), "ns")
	require.Error(t, err, "the first connection reached the other server")
	for range 3 {
		report, err := c.GetStatus(context.Background(), "ns")
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
