package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Client is a client certificate: the user name (CommonName) and groups
// (Organization) the API server's x509 authenticator reads.
type Client struct {
	// File is the base name of the .crt and .key files.
	File   string
	User   string
	Groups []string
}

// Plan is what to issue.
type Plan struct {
	// ServingIPs and ServingNames are the API server's and the kubelet's
	// serving certificate's subject alternative names.
	ServingIPs   []net.IP
	ServingNames []string
	Clients      []Client
}

// Files names what Write produces, relative to its folder.
const (
	CACert            = "ca.crt"
	CAKey             = "ca.key"
	ServingCert       = "serving.crt"
	ServingKey        = "serving.key"
	ServiceAccount    = "service-account.key"
	ServiceAccountPub = "service-account.pub"
)

// Write issues every certificate of plan into dir. It refuses a folder that
// already holds a CA, so a cluster's certificates are never mixed.
func Write(dir string, plan Plan) error {
	if _, err := os.Stat(filepath.Join(dir, CACert)); err == nil {
		return fmt.Errorf("%s already holds a CA: remove the folder to start a new cluster", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := time.Now()
	caKey, err := newKey()
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "ceph-rook-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := sign(caTemplate, caTemplate, caKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePair(dir, "ca", caDER, caKey); err != nil {
		return err
	}

	serving := leaf(now, pkix.Name{CommonName: "ceph-rook-e2e-serving"}, x509.ExtKeyUsageServerAuth)
	serving.IPAddresses, serving.DNSNames = plan.ServingIPs, plan.ServingNames
	if err := issue(dir, "serving", serving, ca, caKey); err != nil {
		return err
	}
	for _, c := range plan.Clients {
		if c.File == "" || c.User == "" {
			return errors.New("a client certificate needs a file name and a user")
		}
		tmpl := leaf(now, pkix.Name{CommonName: c.User, Organization: c.Groups}, x509.ExtKeyUsageClientAuth)
		if err := issue(dir, c.File, tmpl, ca, caKey); err != nil {
			return err
		}
	}
	saKey, err := newKey()
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, ServiceAccount), saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ServiceAccountPub), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func leaf(now time.Time, subject pkix.Name, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject:     subject,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
}

func issue(dir, name string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	der, err := sign(tmpl, ca, key, caKey)
	if err != nil {
		return fmt.Errorf("issue %s: %w", name, err)
	}
	return writePair(dir, name, der, key)
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func sign(tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
}

func writePair(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+".key"), key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}
