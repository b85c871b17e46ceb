package main

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// TestAPoolNamingADiskNotReadYetRepublishesEveryNode: a pool event whose
// Disk the plugin cannot read (its cache still relisting after an API
// server outage, as a CI run found: claimedBy never written) enqueues
// every discovery ConfigMap, so the claim is published once the Disk is
// there; nothing else would re-plan it. The reconciler reads the real API
// server here, where the Disk does not exist at all.
func TestAPoolNamingADiskNotReadYetRepublishesEveryNode(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	ns := "claims-lag"
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: DiscoveryConfigMapName("lag-1"), Labels: map[string]string{DiscoveryAppLabel: DiscoveryAppValue}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: DiscoveryConfigMapName("lag-2"), Labels: map[string]string{DiscoveryAppLabel: DiscoveryAppValue}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "something-else"}},
	} {
		require.NoError(t, env.Client.Create(ctx, cm))
	}
	r := &DiskInventoryReconciler{Client: env.Client, Namespace: ns, Recorder: events.NewFakeRecorder(100)}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()

	pool := &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: "lagging"}, Spec: cephv1alpha1.DiskPoolSpec{Disks: []string{"lag-1-not-read-yet"}}}
	r.poolClaimsHandler().Create(ctx, event.CreateEvent{Object: pool}, q)

	var got []string
	for q.Len() > 0 {
		req, _ := q.Get()
		got = append(got, req.Name)
		q.Done(req)
	}
	slices.Sort(got)
	assert.Equal(t, []string{DiscoveryConfigMapName("lag-1"), DiscoveryConfigMapName("lag-2")}, got, "every discovery ConfigMap, nothing else")
}
