package plugincontroller

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"connectrpc.com/connect"

	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

// PluginReport is a plugin's answer to GetStatus.
type PluginReport struct {
	Phase   string
	Message string
}

// PluginCall addresses one call to a plugin's metadata API.
type PluginCall struct {
	// Namespace is where the plugin runs, which locates its API.
	Namespace string
	// Token goes along as "Authorization: Bearer": a token the controller
	// minted for the plugin's installation (TokenSigner.Mint). Every
	// plugin the controller deployed refuses a call without one.
	Token string
}

// PluginClient talks to the metadata API of a running plugin.
type PluginClient interface {
	GetStatus(ctx context.Context, call PluginCall) (PluginReport, error)
	// RequestUninstall asks the plugin to remove what it installed. The
	// plugin uninstalls in the background; repeated requests are harmless.
	RequestUninstall(ctx context.Context, call PluginCall) error
}

// ServiceURL is the plugin's metadata API inside the cluster: its Service,
// which every installation names "plugin".
func ServiceURL(namespace string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", ObjectName, namespace, PluginPort)
}

// A plugin is not trusted to answer sensibly: its answers are read up to
// these bounds, so that a broken or hostile one costs the controller a
// bounded amount of memory per poll, whatever it sends.
const (
	// maxAnswerBytes bounds one answer, the message of an error included.
	// A status is a phase and a sentence: this leaves room for a long
	// one, which ComputeStatus then truncates visibly, while a larger
	// answer is refused with ResourceExhausted.
	maxAnswerBytes = 64 << 10
	// maxBodyBytes bounds the bytes read off the connection: Connect
	// reads to the end of an answer it refused (to reuse the connection),
	// and this stops that. It lies above maxAnswerBytes so that Connect,
	// which names the limit, is what refuses an answer just over it.
	maxBodyBytes = 2 * maxAnswerBytes
	// maxHeaderBytes bounds the answer's headers (net/http allows 10 MB).
	maxHeaderBytes = 64 << 10
)

// MetadataClient is the PluginClient speaking Connect over HTTP.
type MetadataClient struct {
	// BaseURL maps a plugin's namespace to its metadata API; nil means
	// ServiceURL. A controller outside the cluster, or a test, points it
	// elsewhere.
	BaseURL func(namespace string) string
	// HTTPClient defaults to pollClient; callers bound each call with its
	// context. Bodies are bounded whichever client is used; headers only
	// by pollClient's transport.
	HTTPClient *http.Client
}

// pollClient dials afresh for every call. A Service's ClusterIP is
// translated when a connection is made: a connection opened before
// kube-proxy programmed a new plugin's Service goes wherever the address
// routed then (on the e2e cluster, a server outside answering 404), and a
// kept-alive one would keep going there at every poll, while the plugin
// itself answers everyone else. A poll every few seconds per plugin does
// not need keep-alive.
var pollClient = &http.Client{Transport: &http.Transport{
	Proxy:                  http.ProxyFromEnvironment,
	DisableKeepAlives:      true,
	MaxResponseHeaderBytes: maxHeaderBytes,
}}

func (m *MetadataClient) client(namespace string) pluginmetadatav1connect.PluginMetadataServiceClient {
	baseURL := m.BaseURL
	if baseURL == nil {
		baseURL = ServiceURL
	}
	httpClient := m.HTTPClient
	if httpClient == nil {
		httpClient = pollClient
	}
	return pluginmetadatav1connect.NewPluginMetadataServiceClient(
		boundedBodies{next: httpClient}, baseURL(namespace),
		connect.WithReadMaxBytes(maxAnswerBytes),
		// Answers are a few dozen bytes, so compression saves nothing,
		// while a small gzip body inflates a thousandfold, all of which
		// Connect decompresses even to refuse it. Without gzip accepted,
		// a compressed answer is refused unread.
		connect.WithAcceptCompression("gzip", nil, nil))
}

// errBodyTooLarge ends the reading of an answer of maxBodyBytes or more.
var errBodyTooLarge = fmt.Errorf("the answer exceeds %d bytes", maxBodyBytes)

// boundedBodies caps every response body its client returns at
// maxBodyBytes.
type boundedBodies struct{ next connect.HTTPClient }

func (b boundedBodies) Do(req *http.Request) (*http.Response, error) {
	resp, err := b.next.Do(req)
	if err == nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, remaining: maxBodyBytes}
	}
	return resp, err
}

// boundedBody fails a read once remaining bytes were read. A body of
// exactly the bound fails too: no valid answer comes near it.
type boundedBody struct {
	io.ReadCloser
	remaining int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.ReadCloser.Read(p)
	b.remaining -= int64(n)
	return n, err
}

// GetStatus implements PluginClient.
func (m *MetadataClient) GetStatus(ctx context.Context, call PluginCall) (PluginReport, error) {
	resp, err := m.client(call.Namespace).GetStatus(ctx, authorized(connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}), call))
	if err != nil {
		return PluginReport{}, fmt.Errorf("GetStatus of the plugin in %s: %w", call.Namespace, err)
	}
	return PluginReport{Phase: resp.Msg.GetPhase(), Message: resp.Msg.GetMessage()}, nil
}

// RequestUninstall implements PluginClient.
func (m *MetadataClient) RequestUninstall(ctx context.Context, call PluginCall) error {
	req := authorized(connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{}), call)
	if _, err := m.client(call.Namespace).RequestUninstall(ctx, req); err != nil {
		return fmt.Errorf("RequestUninstall of the plugin in %s: %w", call.Namespace, err)
	}
	return nil
}

// authorized attaches call's token to req. Without a token the request
// goes without one, for the plugin to refuse.
func authorized[T any](req *connect.Request[T], call PluginCall) *connect.Request[T] {
	if call.Token != "" {
		req.Header().Set("Authorization", "Bearer "+call.Token)
	}
	return req
}
