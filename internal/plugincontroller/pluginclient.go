package plugincontroller

import (
	"context"
	"fmt"
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

// PluginClient talks to the metadata API of the plugin running in a
// namespace.
type PluginClient interface {
	GetStatus(ctx context.Context, namespace string) (PluginReport, error)
	// RequestUninstall asks the plugin to remove what it installed. The
	// plugin uninstalls in the background; repeated requests are harmless.
	RequestUninstall(ctx context.Context, namespace string) error
}

// ServiceURL is the plugin's metadata API inside the cluster: its Service,
// which every installation names "plugin".
func ServiceURL(namespace string) string {
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", ObjectName, namespace, PluginPort)
}

// MetadataClient is the PluginClient speaking Connect over HTTP.
type MetadataClient struct {
	// BaseURL maps a plugin's namespace to its metadata API; nil means
	// ServiceURL. A controller outside the cluster, or a test, points it
	// elsewhere.
	BaseURL func(namespace string) string
	// HTTPClient defaults to pollClient; callers bound each call with its
	// context.
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
	Proxy:             http.ProxyFromEnvironment,
	DisableKeepAlives: true,
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
	return pluginmetadatav1connect.NewPluginMetadataServiceClient(httpClient, baseURL(namespace))
}

// GetStatus implements PluginClient.
func (m *MetadataClient) GetStatus(ctx context.Context, namespace string) (PluginReport, error) {
	resp, err := m.client(namespace).GetStatus(ctx, connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
	if err != nil {
		return PluginReport{}, fmt.Errorf("GetStatus of the plugin in %s: %w", namespace, err)
	}
	return PluginReport{Phase: resp.Msg.GetPhase(), Message: resp.Msg.GetMessage()}, nil
}

// RequestUninstall implements PluginClient.
func (m *MetadataClient) RequestUninstall(ctx context.Context, namespace string) error {
	if _, err := m.client(namespace).RequestUninstall(ctx, connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{})); err != nil {
		return fmt.Errorf("RequestUninstall of the plugin in %s: %w", namespace, err)
	}
	return nil
}
