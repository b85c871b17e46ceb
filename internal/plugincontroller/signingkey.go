package plugincontroller

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The controller's token signing key lives in a Secret of the controller's
// own namespace, so every replica, and every restart, signs with the same
// key and the plugins' Deployments do not roll for nothing.
const (
	// SigningKeySecretName names that Secret.
	SigningKeySecretName = "plugin-controller-token-signing-key"
	// SigningKeyField is the Secret's entry holding the key: an Ed25519
	// private key, PKCS #8 in a PEM "PRIVATE KEY" block.
	SigningKeyField = "ed25519-private-key.pem"
)

// LoadTokenSigner returns a signer of the key in namespace's signing key
// Secret, and creates that Secret with a new key when it is absent.
// Replicas that start together may both try to create it; whoever loses
// reads back the winner's key, so they sign alike.
//
// c must read from the API server, not from a cache: a cached Get of a
// Secret would make the controller watch every Secret in the cluster, and
// a lagging cache would miss the winner's Secret.
//
// The Secret is immutable. Rotating the key is deleting it and restarting
// the controller: the new public key changes every plugin's Deployment,
// which rolls, and tokens of the old key are refused from then on.
func LoadTokenSigner(ctx context.Context, c client.Client, namespace string) (*TokenSigner, error) {
	key := client.ObjectKey{Namespace: namespace, Name: SigningKeySecretName}
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		return createSigningKey(ctx, c, key)
	}
	if err != nil {
		return nil, fmt.Errorf("get Secret %s: %w", key, err)
	}
	return signerFromSecret(secret)
}

// createSigningKey creates the Secret with a new key, or reads back the
// one another replica created first.
func createSigningKey(ctx context.Context, c client.Client, key client.ObjectKey) (*TokenSigner, error) {
	secret, err := newSigningKeySecret(key)
	if err != nil {
		return nil, err
	}
	err = c.Create(ctx, secret)
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.Secret{}
		if err := c.Get(ctx, key, existing); err != nil {
			return nil, fmt.Errorf("get Secret %s, created by another replica: %w", key, err)
		}
		return signerFromSecret(existing)
	}
	if err != nil {
		return nil, fmt.Errorf("create Secret %s: %w", key, err)
	}
	log.FromContext(ctx).Info("created the token signing key", "secret", key.String())
	return signerFromSecret(secret)
}

// newSigningKeySecret is the Secret of a new random key.
func newSigningKeySecret(key client.ObjectKey) (*corev1.Secret, error) {
	_, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate a token signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		return nil, fmt.Errorf("encode the token signing key: %w", err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels:    map[string]string{LabelManagedBy: ManagedByValue},
		},
		Type: corev1.SecretTypeOpaque,
		// Immutable: an edit could only break every plugin's tokens at
		// the controller's next restart; rotation is delete and restart.
		Immutable: ptr.To(true),
		Data:      map[string][]byte{SigningKeyField: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})},
	}, nil
}

// signerFromSecret reads the key of a signing key Secret. Its errors say
// what is wrong without quoting what the Secret holds, nor the parser's
// words about it.
func signerFromSecret(secret *corev1.Secret) (*TokenSigner, error) {
	fail := func(problem string) (*TokenSigner, error) {
		return nil, fmt.Errorf("token signing key %s of Secret %s/%s %s; delete the Secret and restart the controller for a new key",
			SigningKeyField, secret.Namespace, secret.Name, problem)
	}
	data, ok := secret.Data[SigningKeyField]
	if !ok {
		return fail("is missing")
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return fail(`is not a PEM "PRIVATE KEY" block`)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fail("is not a PKCS #8 private key")
	}
	private, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return fail(fmt.Sprintf("holds a %T, not an Ed25519 key", parsed))
	}
	return NewTokenSigner(private)
}
