package plugincontroller

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestSignerFromSecret(t *testing.T) {
	valid, err := newSigningKeySecret(client.ObjectKey{Namespace: "ns", Name: SigningKeySecretName})
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	require.NoError(t, err)
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"a key the controller created is read", valid.Data[SigningKeyField], ""},
		{"a missing entry is refused", nil, "is missing"},
		{"text is refused", []byte("not a key at all"), `is not a PEM "PRIVATE KEY" block`},
		{"a public key is refused", []byte(testTokens.Trust().PublicKeysPEM), `is not a PEM "PRIVATE KEY" block`},
		{"a damaged key is refused", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("secret-ish bytes")}), "is not a PKCS #8 private key"},
		{"an ECDSA key is refused", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), "not an Ed25519 key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: SigningKeySecretName}}
			if tc.data != nil {
				secret.Data = map[string][]byte{SigningKeyField: tc.data}
			}
			signer, err := signerFromSecret(secret)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.NotEmpty(t, signer.Trust().PublicKeysPEM)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			assert.Contains(t, err.Error(), "ns/"+SigningKeySecretName, "names the Secret")
			if len(tc.data) > 0 {
				assert.NotContains(t, err.Error(), string(tc.data), "never quotes the Secret")
			}
		})
	}
}

// controllerNamespace creates a namespace for a controller of its own.
func controllerNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "controller-"}}
	require.NoError(t, controlPlane.Env(t).Client.Create(context.Background(), ns))
	return ns.Name
}

// directClient is a client of its own, as another controller process has.
func directClient(t *testing.T) client.WithWatch {
	t.Helper()
	env := controlPlane.Env(t)
	c, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	require.NoError(t, err)
	return c
}

// TestSigningKeyIsCreatedOnceAndKept: the first controller creates the
// Secret; a restart, or another instance, signs with the same key.
func TestSigningKeyIsCreatedOnceAndKept(t *testing.T) {
	ctx := context.Background()
	ns := controllerNamespace(t)
	first, err := LoadTokenSigner(ctx, directClient(t), ns)
	require.NoError(t, err)

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SigningKeySecretName}}
	require.NoError(t, get(t, ctx, secret))
	assert.Equal(t, corev1.SecretTypeOpaque, secret.Type)
	assert.Equal(t, ptrTo(true), secret.Immutable, "the key cannot be edited, only replaced")
	assert.Len(t, secret.Data, 1)
	assert.Contains(t, secret.Data, SigningKeyField)

	again, err := LoadTokenSigner(ctx, directClient(t), ns)
	require.NoError(t, err)
	assert.Equal(t, first.Trust(), again.Trust(), "the second instance signs with the first one's key")
	kept := &corev1.Secret{ObjectMeta: secret.ObjectMeta}
	require.NoError(t, get(t, ctx, kept))
	assert.Equal(t, secret.ResourceVersion, kept.ResourceVersion, "the Secret was not written again")
}

// TestRacingControllersShareOneKey: a controller whose create loses to
// another's (created between its get and its create) signs with the
// winner's key.
func TestRacingControllersShareOneKey(t *testing.T) {
	ctx := context.Background()

	t.Run("the loser of the create reads back the winner's key", func(t *testing.T) {
		ns := controllerNamespace(t)
		key := client.ObjectKey{Namespace: ns, Name: SigningKeySecretName}
		winner, err := newSigningKeySecret(key)
		require.NoError(t, err)
		var lost atomic.Bool
		loser := interceptor.NewClient(directClient(t), interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				require.NoError(t, controlPlane.Env(t).Client.Create(ctx, winner.DeepCopy()), "the other replica creates first")
				err := c.Create(ctx, obj, opts...)
				lost.Store(true)
				return err
			},
		})
		signer, err := LoadTokenSigner(ctx, loser, ns)
		require.NoError(t, err)
		require.True(t, lost.Load(), "the race was run")
		want, err := signerFromSecret(winner)
		require.NoError(t, err)
		assert.Equal(t, want.Trust(), signer.Trust())
	})

	t.Run("replicas starting together all sign with one key", func(t *testing.T) {
		ns := controllerNamespace(t)
		const replicas = 4
		keys := make([]string, replicas)
		var wg sync.WaitGroup
		for i := range replicas {
			c := directClient(t)
			wg.Go(func() {
				signer, err := LoadTokenSigner(ctx, c, ns)
				if assert.NoError(t, err) {
					keys[i] = signer.Trust().PublicKeysPEM
				}
			})
		}
		wg.Wait()
		for i := range replicas {
			assert.Equal(t, keys[0], keys[i], fmt.Sprintf("replica %d", i))
		}
	})
}
