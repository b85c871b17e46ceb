package helmexec

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders config as a kubeconfig with one context, so another
// process reaches the same API server as the same user: host, TLS server
// name, CA, client certificate, bearer token, basic auth, impersonation,
// exec and auth-provider plugins. What a file cannot say is left out:
// QPS and Burst (a Runner passes them as flags), Timeout, UserAgent, and
// Go values such as Wrap, Transport, Dial and Proxy.
//
// Where config names a file and also holds its data (rest.InClusterConfig
// sets both the token file and the token), the file is written, as the
// rest client would prefer it, so the secret itself is not copied to disk
// and a rotated token is picked up.
func Kubeconfig(config *rest.Config) ([]byte, error) {
	if config == nil || config.Host == "" {
		return nil, fmt.Errorf("kubeconfig: the rest.Config has no host")
	}
	tls := config.TLSClientConfig
	cluster := &clientcmdapi.Cluster{
		Server:                config.Host,
		TLSServerName:         tls.ServerName,
		InsecureSkipTLSVerify: tls.Insecure,
		DisableCompression:    config.DisableCompression,
	}
	switch {
	case tls.Insecure:
		// A CA together with insecure is refused by the client.
	case tls.CAFile != "":
		cluster.CertificateAuthority = tls.CAFile
	default:
		cluster.CertificateAuthorityData = tls.CAData
	}
	user := &clientcmdapi.AuthInfo{
		Username:             config.Username,
		Password:             config.Password,
		Impersonate:          config.Impersonate.UserName,
		ImpersonateUID:       config.Impersonate.UID,
		ImpersonateGroups:    config.Impersonate.Groups,
		ImpersonateUserExtra: config.Impersonate.Extra,
		AuthProvider:         config.AuthProvider,
		Exec:                 config.ExecProvider,
	}
	if tls.CertFile != "" {
		user.ClientCertificate = tls.CertFile
	} else {
		user.ClientCertificateData = tls.CertData
	}
	if tls.KeyFile != "" {
		user.ClientKey = tls.KeyFile
	} else {
		user.ClientKeyData = tls.KeyData
	}
	if config.BearerTokenFile != "" {
		user.TokenFile = config.BearerTokenFile
	} else {
		user.Token = config.BearerToken
	}
	const name = "plugin"
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{name: cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{name: user},
		Contexts:       map[string]*clientcmdapi.Context{name: {Cluster: name, AuthInfo: name}},
		CurrentContext: name,
	}
	data, err := clientcmd.Write(kc)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return data, nil
}

// writeKubeconfig writes config's kubeconfig to a temporary file only its
// owner can read (it may hold a key or a token) and returns its path.
func writeKubeconfig(config *rest.Config) (string, error) {
	data, err := Kubeconfig(config)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "helmexec-*.kubeconfig")
	if err != nil {
		return "", fmt.Errorf("kubeconfig for the helm helper: %w", err)
	}
	// CreateTemp makes the file 0600; Chmod says so where a reader checks.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("kubeconfig for the helm helper: %w", err)
	}
	return f.Name(), nil
}
