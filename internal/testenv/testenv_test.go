package testenv_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

var controlPlane = testenv.NewShared(testenv.Options{RookCRDs: true, GarbageCollector: true})

func TestMain(m *testing.M) { controlPlane.Main(m) }

func blockPool(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1",
		"kind":       "CephBlockPool",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       spec,
	}}
}

// Rook's real CRDs are installed and the API server judges objects by them.
func TestRookCRDsValidateCephBlockPool(t *testing.T) {
	ctx := context.Background()
	strict := client.FieldValidation("Strict")

	cases := []struct {
		name    string
		spec    map[string]any
		wantErr string
	}{
		{
			name: "a valid replicated pool is accepted",
			spec: map[string]any{"failureDomain": "host", "replicated": map[string]any{"size": int64(3)}},
		},
		{
			name:    "an unknown field is rejected under strict validation",
			spec:    map[string]any{"replicated": map[string]any{"size": int64(3)}, "notAField": true},
			wantErr: `unknown field "spec.notAField"`,
		},
		{
			name:    "a negative replica size is rejected",
			spec:    map[string]any{"replicated": map[string]any{"size": int64(-1)}},
			wantErr: "spec.replicated.size",
		},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := blockPool("pool-"+string(rune('a'+i)), tc.spec)
			err := controlPlane.Env(t).Client.Create(ctx, pool, strict)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInvalid(err) || apierrors.IsBadRequest(err), "want a validation error, got %v", err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// The garbage collector runs: an object with a controller owner reference
// goes when its owner goes.
func TestGarbageCollectorCascadesOwnerDeletion(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "default"}}
	require.NoError(t, env.Client.Create(ctx, owner))
	owned := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "default"}}
	require.NoError(t, controllerutil.SetControllerReference(owner, owned, env.Scheme))
	require.NoError(t, env.Client.Create(ctx, owned))
	bystander := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bystander", Namespace: "default"}}
	require.NoError(t, env.Client.Create(ctx, bystander))

	require.NoError(t, env.Client.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationBackground)))

	err := testenv.Eventually(ctx, 30*time.Second, func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(owned), &corev1.ConfigMap{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return errors.New("owned ConfigMap still exists")
	})
	require.NoError(t, err, "the garbage collector should remove the owned object")
	assert.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(bystander), &corev1.ConfigMap{}), "an object without an owner must stay")
}

// A missing binary is a clear failure naming the command, never a skip.
func TestMissingBinariesNameTheBuildCommand(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	err := testenv.CheckPrerequisites(testenv.Options{GarbageCollector: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "just envtest")
	assert.Contains(t, err.Error(), "kube-controller-manager")
}
