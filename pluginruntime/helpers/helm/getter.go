package helm

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter is the genericclioptions.RESTClientGetter Helm's kube client
// needs, built on a rest.Config instead of kubeconfig flags, so a plugin can
// hand Helm its in-cluster config. One getter serves one namespace: Helm
// takes the namespace of the objects it creates from the getter.
type restGetter struct {
	config    *rest.Config
	namespace string
	discovery discovery.CachedDiscoveryInterface
}

func newRESTGetter(config *rest.Config, namespace string) (*restGetter, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return &restGetter{config: config, namespace: namespace, discovery: memory.NewMemCacheClient(dc)}, nil
}

func (g *restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

func (g *restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.discovery, nil
}

func (g *restGetter) ToRESTMapper() (meta.RESTMapper, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	return restmapper.NewShortcutExpander(mapper, g.discovery, nil), nil
}

func (g *restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return &namespacedClientConfig{getter: g}
}

// namespacedClientConfig answers the questions kubectl's factory asks of a
// kubeconfig: which namespace, which rest.Config.
type namespacedClientConfig struct {
	getter *restGetter
}

func (c *namespacedClientConfig) RawConfig() (clientcmdapi.Config, error) {
	return clientcmdapi.Config{}, nil
}

func (c *namespacedClientConfig) ClientConfig() (*rest.Config, error) {
	return c.getter.ToRESTConfig()
}

func (c *namespacedClientConfig) Namespace() (string, bool, error) {
	return c.getter.namespace, true, nil
}

func (c *namespacedClientConfig) ConfigAccess() clientcmd.ConfigAccess {
	return clientcmd.NewDefaultClientConfigLoadingRules()
}
