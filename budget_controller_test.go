package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// TestAConsumerOverCephsBudgetCreatesNothing: on three OSDs with
// mon_max_pg_per_osd lowered to 60 (the OSDs' hard limit 180), one
// three-copy block pool fits ((3 + 96) / 3 = 33 PG copies per OSD, up to
// (99 + 400) / 3 = 166 once the autoscaler grows it) and is made with
// Ceph's TOO_MANY_PGS warning in a condition; a second does not (up to
// 198): the younger is Degraded, reason OverBudget, and gets no Rook
// object; the older is untouched.
func TestAConsumerOverCephsBudgetCreatesNothing(t *testing.T) {
	h := newHarness(t)
	h.cfg.CephMaxPGPerOSD = 60
	h.start()
	h.withPooledNodes("budget", 3)

	first := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "first"}}
	h.createConsumer(first)
	h.waitPhase(first, func() cephv1alpha1.StorageStatus { return first.Status }, cephv1alpha1.StorageProvisioning)
	var pool cephv1.CephBlockPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-first"}, &pool))
	before := pool.ResourceVersion
	// Checked at every reconcile: once the plugin knows the three OSDs
	// (the CephCluster's devices, written after the pool is Ready), the
	// condition says what Ceph warns of over them.
	h.eventually("the first is made with Ceph's warning", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(first), first))
		warned := meta.FindStatusCondition(first.Status.Conditions, ConditionCephWarning)
		const want = "BlockStorage first brings placement groups to 33 per OSD over 3 OSDs (it adds 96 PG copies to 3), up to 166 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); past 60 (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS"
		if warned == nil || warned.Status != metav1.ConditionTrue || warned.Reason != ReasonTooManyPGs || !strings.Contains(warned.Message, want) {
			return fmt.Errorf("conditions %+v", first.Status.Conditions)
		}
		return nil
	})
	h.eventually("an Event says so too", func() error {
		var events eventsv1List
		return events.find(h, first.Name, ReasonTooManyPGs)
	})

	time.Sleep(time.Second) // the second is younger by creationTimestamp, not only by name
	second := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "second"}}
	h.createConsumer(second)
	h.waitPhase(second, func() cephv1alpha1.StorageStatus { return second.Status }, cephv1alpha1.StorageDegraded)

	ready := meta.FindStatusCondition(second.Status.Conditions, cephv1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, ReasonOverBudget, ready.Reason)
	assert.Contains(t, second.Status.Message, "BlockStorage second would bring placement groups to 65 per OSD over 3 OSDs (it adds 96 PG copies to 99), up to 198 once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (100); an OSD withholds PGs past 180 (mon_max_pg_per_osd 60 × osd_max_pg_per_osd_hard_ratio 3)")
	err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-second"}, &cephv1.CephBlockPool{})
	assert.True(t, apierrors.IsNotFound(err), "no CephBlockPool for a consumer over budget: %v", err)

	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&pool), &pool))
	assert.Equal(t, before, pool.ResourceVersion, "the older consumer's pool is untouched")
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(first), first))
	assert.NotEqual(t, cephv1alpha1.StorageDegraded, first.Status.Phase)
}

// TestConsumersReportCapacityAndTheirShareOfCephsBudgets: a consumer's
// status says what it can store at its replica count, from the Disks'
// sizes until Ceph reports its own, and what it takes of Ceph's budgets;
// a failure domain that moves is recorded on the Rook object, and the rule
// it leaves behind is counted.
func TestConsumersReportCapacityAndTheirShareOfCephsBudgets(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withPooledNodes("cap", 1)
	const diskBytes = int64(4000787030016) // every test disk's size
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "cap"}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
	assert.Equal(t, UsableCapacity(RawCapacity{DiskBytes: diskBytes}, 1), bs.Status.Capacity)
	assert.Equal(t, &cephv1alpha1.CephBudgetUse{Pools: 1, CrushRules: 2, PGCopies: 32}, bs.Status.CephBudget)
	var rook cephv1.CephBlockPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-cap"}, &rook))
	assert.Equal(t, "osd", rook.Annotations[cephv1alpha1.FailureDomainsAnnotation])

	h.joinPool(pool, "cap-2", "cap-3")
	h.eventually("three copies across hosts, over three disks", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(bs), bs))
		if bs.Status.Replicas != 3 || bs.Status.Capacity == nil || bs.Status.Capacity.RawBytes != 3*diskBytes {
			return fmt.Errorf("replicas %d, capacity %+v", bs.Status.Replicas, bs.Status.Capacity)
		}
		return nil
	})
	assert.Equal(t, UsableCapacity(RawCapacity{DiskBytes: 3 * diskBytes}, 3), bs.Status.Capacity)
	assert.Equal(t, &cephv1alpha1.CephBudgetUse{Pools: 1, CrushRules: 3, PGCopies: 96}, bs.Status.CephBudget,
		"the pool's _osd rule stays in Ceph beside its _host rule")
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&rook), &rook))
	assert.Equal(t, "osd,host", rook.Annotations[cephv1alpha1.FailureDomainsAnnotation])

	// Ceph reports (Rook's status check, once a minute) and the operator
	// lowers the full ratio: both reach the consumer without an edit of it.
	const cephBytes = int64(10) << 40
	cluster := h.cluster()
	require.NoError(t, h.c.Patch(h.ctx, cluster, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"storage":{"fullRatio":0.9}}}`))))
	require.NoError(t, h.c.Status().Patch(h.ctx, cluster, client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"status":{"ceph":{"capacity":{"bytesTotal":%d,"bytesUsed":1024}}}}`, cephBytes))))
	want := UsableCapacity(RawCapacity{CephBytes: cephBytes, FullRatio: 0.9}, 3)
	h.eventually("the capacity Ceph reports", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(bs), bs))
		if !equality.Semantic.DeepEqual(want, bs.Status.Capacity) {
			return fmt.Errorf("capacity %+v", bs.Status.Capacity)
		}
		return nil
	})
	assert.Equal(t, cephv1alpha1.CapacityFromCeph, bs.Status.Capacity.Source)
	assert.Equal(t, int32(90), bs.Status.Capacity.FullRatioPercent)
}

// An ObjectStorage's metadata pools replicate as automatic sizing says,
// whatever the consumer asks for its data: one copy of the data asked for
// on three nodes leaves the metadata pools at three copies on host, and
// their move from osd to host is recorded and counted apart from the data
// pool, which stays on osd.
func TestObjectStorageMetadataPoolsAreBudgetedAsRendered(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withPooledNodes("meta", 1)
	one := int32(1)
	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "meta"}, Spec: cephv1alpha1.ObjectStorageSpec{Replicas: &one}}
	h.createConsumer(store)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageProvisioning)

	h.joinPool(pool, "meta-2", "meta-3")
	var rook cephv1.CephObjectStore
	h.eventually("the metadata pools at three copies on host, the data at one on osd", func() error {
		if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: ObjectStoreName("meta")}, &rook); err != nil {
			return err
		}
		if m, d := rook.Spec.MetadataPool, rook.Spec.DataPool; m.Replicated.Size != 3 || m.FailureDomain != "host" || d.Replicated.Size != 1 || d.FailureDomain != "osd" {
			return fmt.Errorf("metadata %d on %s, data %d on %s", m.Replicated.Size, m.FailureDomain, d.Replicated.Size, d.FailureDomain)
		}
		return nil
	})
	assert.Equal(t, "osd", rook.Annotations[cephv1alpha1.FailureDomainsAnnotation])
	assert.Equal(t, "osd,host", rook.Annotations[cephv1alpha1.MetadataFailureDomainsAnnotation])
	h.eventually("the status counts the metadata pools as rendered", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(store), store))
		// Six metadata pools of 8 PGs at three copies, the data pool's 32
		// at one; each metadata pool keeps its _osd rule beside _host.
		want := &cephv1alpha1.CephBudgetUse{Pools: 7, CrushRules: 6*3 + 2, PGCopies: 6*8*3 + 32}
		if !equality.Semantic.DeepEqual(want, store.Status.CephBudget) {
			return fmt.Errorf("budget %+v, want %+v", store.Status.CephBudget, want)
		}
		return nil
	})
}

// joinPool publishes a disk on each of nodes and adds it to pool, one node
// at a time, as an operator adds the disks of nodes that join.
func (h *harness) joinPool(pool *cephv1alpha1.DiskPool, nodes ...string) {
	h.t.Helper()
	for _, node := range nodes {
		h.publishDiscovery(node, hdd("sdb", "0x"+node+"b"))
		joined := h.waitDisks(node, 1)["/dev/sdb"].Name
		h.update(pool, func() { pool.Spec.Disks = append(pool.Spec.Disks, joined) })
	}
}
