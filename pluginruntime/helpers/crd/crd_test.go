package crd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/crd"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// controlPlane is the package's API server, started by the first test that needs it.
var controlPlane = testenv.NewShared(testenv.Options{})

func TestMain(m *testing.M) { controlPlane.Main(m) }

// newCRD is a minimal namespaced CRD; group keeps tests apart.
func newCRD(group, kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

func testGroup() string { return fmt.Sprintf("t%s.example.com", rand.String(6)) }

func TestWaitEstablishedWaitsForACRDCreatedLater(t *testing.T) {
	env := controlPlane.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	group := testGroup()
	pools, buckets := newCRD(group, "Pool", "pools"), newCRD(group, "Bucket", "buckets")
	require.NoError(t, env.Client.Create(ctx, pools))

	done := make(chan error, 1)
	go func() {
		done <- crd.WaitEstablished(ctx, env.Client, []string{pools.Name, buckets.Name}, crd.WithInterval(100*time.Millisecond))
	}()

	select {
	case err := <-done:
		t.Fatalf("returned before the second CRD existed: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	require.NoError(t, env.Client.Create(ctx, buckets))

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("WaitEstablished did not return after the CRD was created")
	}
	var got apiextensionsv1.CustomResourceDefinition
	require.NoError(t, env.Client.Get(ctx, ctrlclient.ObjectKey{Name: buckets.Name}, &got))
	assert.True(t, established(&got), "it returned because the CRD is Established")
}

func TestCheck(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	group := testGroup()
	pools := newCRD(group, "Pool", "pools")
	require.NoError(t, env.Client.Create(ctx, pools))
	require.NoError(t, crd.WaitEstablished(ctx, env.Client, []string{pools.Name}, crd.WithInterval(100*time.Millisecond)))

	t.Run("an established CRD passes", func(t *testing.T) {
		assert.NoError(t, crd.Check(ctx, env.Client, pools.Name))
	})
	t.Run("a missing CRD is a transient error naming it", func(t *testing.T) {
		err := crd.Check(ctx, env.Client, pools.Name, "widgets."+group)
		require.Error(t, err)
		assert.True(t, pluginerrors.IsTransient(err))
		assert.Equal(t, "CRDs not ready: widgets."+group+": not found", err.Error())
	})
}

func TestWaitEstablishedTimesOutOnConflictingNames(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	group := testGroup()
	first := newCRD(group, "Pool", "pools")
	// Same kind, other plural: the API server refuses the second's names,
	// so it never becomes Established.
	second := newCRD(group, "Pool", "poolz")
	require.NoError(t, env.Client.Create(ctx, first))
	require.NoError(t, crd.WaitEstablished(ctx, env.Client, []string{first.Name}, crd.WithInterval(100*time.Millisecond)))
	require.NoError(t, env.Client.Create(ctx, second))

	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := crd.WaitEstablished(waitCtx, env.Client, []string{second.Name}, crd.WithInterval(100*time.Millisecond))
	require.Error(t, err)
	assert.True(t, pluginerrors.IsTransient(err))
	assert.Contains(t, err.Error(), "poolz."+group+": names not accepted (ListKindConflict")
}

func established(obj *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range obj.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
