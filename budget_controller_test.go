package main

import (
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// TestAConsumerOverCephsBudgetCreatesNothing: on three OSDs with
// mon_max_pg_per_osd lowered to 40, one three-copy block pool fits
// ((3 + 96) / 3 = 33 PG copies per OSD) and a second does not (65): the
// younger is Degraded, reason OverBudget, and gets no Rook object; the
// older is untouched.
func TestAConsumerOverCephsBudgetCreatesNothing(t *testing.T) {
	h := newHarness(t)
	h.cfg.CephMaxPGPerOSD = 40
	h.start()
	h.withPooledNodes("budget", 3)

	first := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "first"}}
	h.createConsumer(first)
	h.waitPhase(first, func() cephv1alpha1.StorageStatus { return first.Status }, cephv1alpha1.StorageProvisioning)
	var pool cephv1.CephBlockPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-first"}, &pool))
	before := pool.ResourceVersion

	time.Sleep(time.Second) // the second is younger by creationTimestamp, not only by name
	second := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "second"}}
	h.createConsumer(second)
	h.waitPhase(second, func() cephv1alpha1.StorageStatus { return second.Status }, cephv1alpha1.StorageDegraded)

	ready := meta.FindStatusCondition(second.Status.Conditions, cephv1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, ReasonOverBudget, ready.Reason)
	assert.Contains(t, second.Status.Message, "BlockStorage second would bring placement groups to 65 per OSD over 3 OSDs (it adds 96 PG copies to 99); Ceph refuses more than 40 (mon_max_pg_per_osd)")
	err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-second"}, &cephv1.CephBlockPool{})
	assert.True(t, apierrors.IsNotFound(err), "no CephBlockPool for a consumer over budget: %v", err)

	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&pool), &pool))
	assert.Equal(t, before, pool.ResourceVersion, "the older consumer's pool is untouched")
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(first), first))
	assert.NotEqual(t, cephv1alpha1.StorageDegraded, first.Status.Phase)
}
