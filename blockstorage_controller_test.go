package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// withPooledNodes publishes one HDD on each of n nodes and pools them all.
func (h *harness) withPooledNodes(prefix string, n int) *cephv1alpha1.DiskPool {
	h.t.Helper()
	var names []string
	for i := 1; i <= n; i++ {
		node := fmt.Sprintf("%s-%d", prefix, i)
		h.publishDiscovery(node, hdd("sdb", fmt.Sprintf("0x%s%02db", prefix, i)))
		names = append(names, h.waitDisks(node, 1)["/dev/sdb"].Name)
	}
	pool := h.createPool(prefix, names...)
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
	return pool
}

func (h *harness) createConsumer(obj client.Object) {
	h.t.Helper()
	require.NoError(h.t, h.c.Create(h.ctx, obj))
}

// waitPhase waits until the consumer reports phase for its current spec.
func (h *harness) waitPhase(obj client.Object, status func() cephv1alpha1.StorageStatus, phase cephv1alpha1.StoragePhase) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("%s is %s", obj.GetName(), phase), func() error {
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		s := status()
		if s.Phase != phase || s.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("phase %q (observed %d of %d): %s", s.Phase, s.ObservedGeneration, obj.GetGeneration(), s.Message)
		}
		return nil
	})
}

// markReady plays Rook: the derived object reports Ready.
func (h *harness) markReady(obj client.Object) {
	h.t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Ready"}}`))
	require.NoError(h.t, h.c.Status().Patch(h.ctx, obj, patch))
}

func TestBlockStorageWithoutDisksIsDegradedAndDerivesNothing(t *testing.T) {
	h := newHarness(t)
	h.start()
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "nodisks"}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)

	assert.Equal(t, "no DiskPool contributes disks", bs.Status.Message)
	ready := meta.FindStatusCondition(bs.Status.Conditions, cephv1alpha1.ConditionReady)
	require.NotNil(t, ready)
	assert.Equal(t, ReasonNoDisks, ready.Reason)
	err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-nodisks"}, &cephv1.CephBlockPool{})
	assert.True(t, apierrors.IsNotFound(err), "no CephBlockPool without disks: %v", err)
	err = h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-nodisks"}, &storagev1.StorageClass{})
	assert.True(t, apierrors.IsNotFound(err), "no StorageClass without disks: %v", err)
}

func TestBlockStorageProvisionsAndClampsReplication(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("clamp", 2)
	three := int32(3)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "clamped"}, Spec: cephv1alpha1.BlockStorageSpec{Replicas: &three}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)

	assert.Equal(t, int32(2), bs.Status.Replicas, "3 requested on 2 nodes clamps to 2")
	assert.Equal(t, "host", bs.Status.FailureDomain)
	assert.Contains(t, bs.Status.Message, "3 replicas requested but disks come from only 2 nodes; using 2")
	assert.Equal(t, "ceph-clamped", bs.Status.StorageClassName)

	var pool cephv1.CephBlockPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-clamped"}, &pool))
	assert.Equal(t, uint(2), pool.Spec.Replicated.Size)
	assert.Equal(t, "host", pool.Spec.FailureDomain)
	assert.True(t, IsControlledBy(&pool, bs.UID))
	var sc storagev1.StorageClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-clamped"}, &sc))
	assert.Equal(t, h.cfg.OperatorNamespace+".rbd.csi.ceph.com", sc.Provisioner)
	assert.Equal(t, h.cfg.ClusterNamespace, sc.Parameters["clusterID"])
	assert.True(t, IsControlledBy(&sc, bs.UID))

	h.markReady(&pool)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageReady)
	assert.Contains(t, bs.Status.Message, "using 2", "the clamp reason stays in status once Ready")
}

func TestForeignObjectsWithTheDerivedNameAreNeverAdopted(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("foreign", 1)

	t.Run("a foreign StorageClass", func(t *testing.T) {
		foreign := &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "ceph-taken", Labels: map[string]string{"owner": "someone-else"}},
			Provisioner: "example.com/other",
		}
		require.NoError(t, h.c.Create(h.ctx, foreign))
		before := rawJSON(t, foreign)

		bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}
		h.createConsumer(bs)
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)
		assert.Contains(t, bs.Status.Message, "StorageClass ceph-taken already exists and is not owned by this resource")

		var after storagev1.StorageClass
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(foreign), &after))
		assert.JSONEq(t, before, rawJSON(t, &after), "the foreign StorageClass is byte-for-byte untouched")

		require.NoError(t, h.c.Delete(h.ctx, &after))
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
	})

	t.Run("a foreign CephBlockPool", func(t *testing.T) {
		foreign := &cephv1.CephBlockPool{
			ObjectMeta: metav1.ObjectMeta{Name: "ceph-squatted", Namespace: h.cfg.ClusterNamespace},
			Spec:       cephv1.NamedBlockPoolSpec{PoolSpec: cephv1.PoolSpec{Replicated: cephv1.ReplicatedSpec{Size: 1, RequireSafeReplicaSize: false}}},
		}
		require.NoError(t, h.c.Create(h.ctx, foreign))
		before := rawJSON(t, foreign)

		bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "squatted"}}
		h.createConsumer(bs)
		h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)
		assert.Contains(t, bs.Status.Message, "CephBlockPool "+h.cfg.ClusterNamespace+"/ceph-squatted already exists")

		var after cephv1.CephBlockPool
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(foreign), &after))
		assert.JSONEq(t, before, rawJSON(t, &after), "the foreign CephBlockPool is byte-for-byte untouched")
		err := h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-squatted"}, &storagev1.StorageClass{})
		assert.True(t, apierrors.IsNotFound(err), "nothing else is derived either")
	})
}

func TestDeletingAConsumerCollectsItsObjectsButKeepsTheOSDs(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("gc", 1)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "collected"}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
	devices := h.clusterDevices()
	require.Len(t, devices["gc-1"], 1)

	require.NoError(t, h.c.Delete(h.ctx, bs, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	h.eventually("garbage collection removes the StorageClass and the CephBlockPool", func() error {
		scErr := h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-collected"}, &storagev1.StorageClass{})
		poolErr := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-collected"}, &cephv1.CephBlockPool{})
		if !apierrors.IsNotFound(scErr) || !apierrors.IsNotFound(poolErr) {
			return fmt.Errorf("StorageClass: %v, CephBlockPool: %v", scErr, poolErr)
		}
		return nil
	})
	assert.Equal(t, devices, h.clusterDevices(), "the OSD devices stay in the CephCluster")
}

func TestOnlyTheOldestDefaultBlockStorageHoldsTheDefaultClass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("dflt", 1)
	first := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "first"}, Spec: cephv1alpha1.BlockStorageSpec{Default: true}}
	h.createConsumer(first)
	h.waitPhase(first, func() cephv1alpha1.StorageStatus { return first.Status }, cephv1alpha1.StorageProvisioning)
	second := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "second"}, Spec: cephv1alpha1.BlockStorageSpec{Default: true}}
	h.createConsumer(second)
	h.waitPhase(second, func() cephv1alpha1.StorageStatus { return second.Status }, cephv1alpha1.StorageProvisioning)

	assert.Equal(t, "true", h.classAnnotation("ceph-first"))
	assert.Equal(t, "", h.classAnnotation("ceph-second"), "only one class is the default")
	assert.Contains(t, second.Status.Message, "older BlockStorage first asked first and holds it")
	cond := meta.FindStatusCondition(second.Status.Conditions, ConditionDefaultClass)
	require.NotNil(t, cond)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)

	// When the holder gives it up, the next in line takes it.
	require.NoError(t, h.c.Delete(h.ctx, first))
	h.eventually("the second class becomes the default", func() error {
		if got := h.classAnnotation("ceph-second"); got != "true" {
			return fmt.Errorf("annotation %q", got)
		}
		return nil
	})
}

func TestAutomaticSizingAnnouncesAResizeWhenANodeJoins(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withPooledNodes("grow", 1)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "growing"}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
	require.Equal(t, int32(1), bs.Status.Replicas)
	require.Equal(t, "osd", bs.Status.FailureDomain)

	h.publishDiscovery("grow-2", hdd("sdb", "0xgrow02b"))
	joined := h.waitDisks("grow-2", 1)["/dev/sdb"].Name
	h.update(pool, func() { pool.Spec.Disks = append(pool.Spec.Disks, joined) })

	h.eventually("the consumer is resized to 2 replicas across hosts", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(bs), bs))
		if bs.Status.Replicas != 2 || bs.Status.FailureDomain != "host" {
			return fmt.Errorf("replicas %d domain %s", bs.Status.Replicas, bs.Status.FailureDomain)
		}
		return nil
	})
	cond := meta.FindStatusCondition(bs.Status.Conditions, ConditionReplicationChanged)
	require.NotNil(t, cond, "a resize that re-replicates data is never silent")
	assert.Contains(t, cond.Message, "from 1 (osd) to 2 (host)")
	h.eventually("an Event says so too", func() error {
		var events eventsv1List
		return events.find(h, bs.Name, "ReplicationChanged")
	})
}

// An explicit count clamped to the nodes there are grows silently when a
// node joins unless every change is announced; and a change the spec made
// must not be blamed on nodes.
func TestExplicitReplicasAnnounceEveryChangeWithItsCause(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withPooledNodes("explicit", 1)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "explicit"}, Spec: cephv1alpha1.BlockStorageSpec{Replicas: ptrTo(int32(3))}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
	require.Equal(t, int32(1), bs.Status.Replicas, "clamped to the one node")

	h.publishDiscovery("explicit-2", hdd("sdb", "0xexpl02b"))
	joined := h.waitDisks("explicit-2", 1)["/dev/sdb"].Name
	h.update(pool, func() { pool.Spec.Disks = append(pool.Spec.Disks, joined) })
	changed := func(want string) *metav1.Condition {
		var cond *metav1.Condition
		h.eventually("ReplicationChanged says "+want, func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(bs), bs))
			cond = meta.FindStatusCondition(bs.Status.Conditions, ConditionReplicationChanged)
			if cond == nil || !strings.Contains(cond.Message, want) {
				return fmt.Errorf("condition %+v", cond)
			}
			return nil
		})
		return cond
	}
	cond := changed("from 1 (osd) to 2 (host)")
	assert.Equal(t, ReasonNodesJoined, cond.Reason)
	h.eventually("an Event says so too", func() error {
		var events eventsv1List
		return events.find(h, bs.Name, "ReplicationChanged")
	})

	h.update(bs, func() { bs.Spec.Replicas = ptrTo(int32(1)) })
	cond = changed("from 2 (host) to 1 (osd)")
	assert.Equal(t, ReasonSpecChanged, cond.Reason, "no node left: the spec changed")
	assert.Contains(t, cond.Message, "Ceph drops the extra copies")
}

func (h *harness) classAnnotation(name string) string {
	var sc storagev1.StorageClass
	require.NoError(h.t, h.c.Get(h.ctx, client.ObjectKey{Name: name}, &sc))
	return sc.Annotations[DefaultClassAnnotation]
}

func rawJSON(t *testing.T, obj any) string {
	data, err := json.Marshal(obj)
	require.NoError(t, err)
	return string(data)
}

// A class of ours whose immutable fields differ cannot be fixed by an
// update: the consumer goes Degraded naming the field and the way out.
func TestStorageClassDriftInImmutableFieldsIsReportedNotUpdated(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("drift", 1)
	h.stop()
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "drifted"}}
	h.createConsumer(bs) // while the plugin is down
	want := RenderRBDStorageClass(bs, h.cfg)
	want.Parameters["imageFeatures"] = "layering,exclusive-lock"
	require.NoError(t, h.c.Create(h.ctx, want))
	before := rawJSON(t, want)

	h.start()
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageDegraded)
	assert.Contains(t, bs.Status.Message, `parameters.imageFeatures is "layering,exclusive-lock", want "layering"`)
	assert.Contains(t, bs.Status.Message, "delete it so it can be re-created")
	var after storagev1.StorageClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(want), &after))
	assert.JSONEq(t, before, rawJSON(t, &after), "an immutable field is never sent to the API server")

	require.NoError(t, h.c.Delete(h.ctx, &after))
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)
}

// staleReads is a cached client that has not seen one object yet: Get
// says NotFound for it, while the API server has it.
type staleReads struct {
	client.Client
	unseen client.ObjectKey
}

func (c staleReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == c.unseen {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// fixedView is a CephCluster that is there, with nodes contributing.
type fixedView struct{ nodes int }

func (fixedView) ClusterDevices(context.Context) (map[DeviceID]bool, error) {
	return map[DeviceID]bool{}, nil
}
func (v fixedView) Tiers(context.Context) (Tiers, error) {
	return Tiers{All: Tier{Nodes: v.nodes, OSDs: v.nodes}}, nil
}
func (fixedView) Capacity(context.Context) (RawCapacity, error) { return RawCapacity{}, nil }
func (fixedView) Subscribe() <-chan event.GenericEvent          { return nil }

// A watch event can be handled before the informer of the Rook object has
// seen the create that preceded it; the create then fails AlreadyExists.
// That is a retry, not a Degraded status.
func TestACreateTheCacheHasNotSeenIsRetriedNotReported(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	cfg := testConfigFor(t, "stale-cache")
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "stale-cache"}}
	require.NoError(t, env.Client.Create(ctx, bs))
	t.Cleanup(func() { _ = env.Client.Delete(ctx, bs) })
	// What the reconcile before created.
	pool := RenderBlockPool(bs, cfg.ClusterNamespace, mustReplication(t, nil, 1))
	require.NoError(t, env.Client.Create(ctx, pool))

	r := &ConsumerReconciler[*cephv1alpha1.BlockStorage, *cephv1.CephBlockPool]{Kind: blockStorageKind, consumerDeps: consumerDeps{
		Client:   staleReads{Client: env.Client, unseen: client.ObjectKeyFromObject(pool)},
		Config:   cfg,
		View:     fixedView{nodes: 1},
		Clock:    clock.RealClock{},
		Live:     env.Client,
		Recorder: events.NewFakeRecorder(100),
	}}
	_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bs)})
	require.Error(t, err, "the reconcile is retried")
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(bs), bs))
	assert.Empty(t, bs.Status.Phase, "no Degraded status for the cache's lag: %s", bs.Status.Message)
}
