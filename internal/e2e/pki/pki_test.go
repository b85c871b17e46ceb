package pki

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	block, _ := pem.Decode(data)
	require.NotNil(t, block, path)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func TestWriteIssuesACluster(t *testing.T) {
	dir := t.TempDir()
	plan := Plan{
		ServingIPs:   []net.IP{net.ParseIP("10.0.0.1"), net.ParseIP("127.0.0.1")},
		ServingNames: []string{"kubernetes.default.svc", "node-1"},
		Clients:      []Client{{File: "kubelet", User: "system:node:node-1", Groups: []string{"system:nodes"}}, {File: "admin", User: "admin", Groups: []string{"system:masters"}}},
	}
	require.NoError(t, Write(dir, plan))
	ca := readCert(t, filepath.Join(dir, CACert))
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	serving := readCert(t, filepath.Join(dir, ServingCert))
	_, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "kubernetes.default.svc", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err, "the API server is trusted under its Service name")
	assert.Contains(t, serving.IPAddresses[0].String(), "10.0.0.1")

	kubelet := readCert(t, filepath.Join(dir, "kubelet.crt"))
	_, err = kubelet.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err)
	assert.Equal(t, "system:node:node-1", kubelet.Subject.CommonName, "the user the Node authorizer reads")
	assert.Equal(t, []string{"system:nodes"}, kubelet.Subject.Organization)

	for _, f := range []string{CAKey, ServingKey, "kubelet.key", "admin.key", ServiceAccount} {
		info, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "%s is private", f)
	}
	assert.FileExists(t, filepath.Join(dir, ServiceAccountPub))

	t.Run("a folder that holds a CA is refused", func(t *testing.T) {
		err := Write(dir, plan)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "already holds a CA")
	})
	t.Run("a client without a user is refused", func(t *testing.T) {
		err := Write(t.TempDir(), Plan{Clients: []Client{{File: "x"}}})
		assert.ErrorContains(t, err, "needs a file name and a user")
	})
}
