package main

import (
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestObjectStorageDerivesAStoreAndBucketClass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("obj", 1)
	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "s3"}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 2}}
	h.createConsumer(store)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageProvisioning)

	assert.Equal(t, int32(1), store.Status.Replicas)
	assert.Equal(t, "osd", store.Status.FailureDomain, "a single node still provisions, on the osd domain")
	var rgw cephv1.CephObjectStore
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "cephobj-s3"}, &rgw))
	assert.True(t, rgw.Spec.PreservePoolsOnDelete)
	assert.Equal(t, int32(2), rgw.Spec.Gateway.Instances)
	assert.False(t, rgw.Spec.DataPool.Replicated.RequireSafeReplicaSize, "size 1 needs the safety check off")
	var sc storagev1.StorageClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "cephobj-s3"}, &sc))
	assert.Equal(t, h.cfg.ClusterNamespace+".ceph.rook.io/bucket", sc.Provisioner, "the bucket provisioner follows the CephCluster namespace")
	assert.Equal(t, "cephobj-s3", sc.Parameters["objectStoreName"])

	t.Run("a gateway edit patches the store and keeps fields the old Rook types do not know", func(t *testing.T) {
		// spec.gateway.rgwConfig is new in Rook v1.18; the typed module the
		// plugin compiles against drops it on decode, so only a patch of
		// what changed keeps it.
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"gateway":{"rgwConfig":{"rgw_thread_pool_size":"512"}}}}`))
		require.NoError(t, h.c.Patch(h.ctx, &rgw, patch))
		h.update(store, func() { store.Spec.GatewayInstances = 3 })
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephObjectStore"))
		h.eventually("three gateways", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&rgw), live))
			if n, _, _ := unstructured.NestedInt64(live.Object, "spec", "gateway", "instances"); n != 3 {
				return errNotYet
			}
			return nil
		})
		value, _, _ := unstructured.NestedString(live.Object, "spec", "gateway", "rgwConfig", "rgw_thread_pool_size")
		assert.Equal(t, "512", value, "another writer's v1.18 field survives the plugin's patch")
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&rgw), &rgw))
	})

	h.markReady(&rgw)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageReady)
}

// Rook's status says only "Failure"; its reason is in a ReconcileFailed
// Event (the real cluster found a store Rook could not re-create, and the
// consumer said nothing but "phase: Failure").
func TestObjectStorageSaysWhyRookFails(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("objfail", 1)
	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "again"}}
	h.createConsumer(store)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageProvisioning)
	var rgw cephv1.CephObjectStore
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "cephobj-again"}, &rgw))

	const why = `failed to reconcile CephObjectStore "rook-ceph/cephobj-again". failed to commit RGW configuration period changes: exit status 22`
	// Another object's failure, in the same namespace, is not this one's.
	require.NoError(t, h.c.Create(h.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "someone-else", Namespace: h.cfg.ClusterNamespace},
		InvolvedObject: corev1.ObjectReference{Kind: "CephObjectStore", Namespace: rgw.Namespace, Name: "cephobj-other", UID: "other"},
		Type:           corev1.EventTypeWarning, Reason: "ReconcileFailed", Message: "not this store", LastTimestamp: metav1.Now(),
	}))
	// What Rook's recorder writes (reporting.ReportReconcileResult).
	require.NoError(t, h.c.Create(h.ctx, &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "cephobj-again.failed", Namespace: h.cfg.ClusterNamespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephObjectStore",
			Namespace: rgw.Namespace, Name: rgw.Name, UID: rgw.UID,
		},
		Type: corev1.EventTypeWarning, Reason: "ReconcileFailed", Message: why,
		LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "rook-ceph-object-controller"},
		ReportingController: "rook-ceph-object-controller",
	}))
	// Someone else's "success" hides nothing: only Rook's object controller
	// speaks for the store.
	require.NoError(t, h.c.Create(h.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "cephobj-again.forged", Namespace: h.cfg.ClusterNamespace},
		InvolvedObject: corev1.ObjectReference{Kind: "CephObjectStore", Namespace: rgw.Namespace, Name: rgw.Name, UID: rgw.UID},
		Type:           corev1.EventTypeNormal, Reason: "ReconcileSucceeded", Message: "all good",
		LastTimestamp: metav1.NewTime(time.Now().Add(time.Minute)), Source: corev1.EventSource{Component: "intruder"},
	}))
	// Rook says "Failure" after a failed attempt and "Progressing" while it
	// retries: even then, the reason shows.
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Progressing"}}`))
	require.NoError(t, h.c.Status().Patch(h.ctx, &rgw, patch))

	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageDegraded)
	want := "Rook cannot reconcile CephObjectStore " + h.cfg.ClusterNamespace + "/cephobj-again (it retries): " + why
	assert.Equal(t, want, store.Status.Message)
	ready := meta.FindStatusCondition(store.Status.Conditions, cephv1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, ReasonRookFailed, ready.Reason)

	// Rook succeeds later: its phase says so, whatever old Events say.
	h.markReady(&rgw)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageReady)
}
