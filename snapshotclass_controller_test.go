package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// waitSnapshotCondition waits until the consumer's SnapshotClass condition
// has reason, and returns it.
func (h *harness) waitSnapshotCondition(obj consumerObject, reason string) metav1.Condition {
	h.t.Helper()
	var cond metav1.Condition
	h.eventually(fmt.Sprintf("%s's SnapshotClass condition is %s", obj.GetName(), reason), func() error {
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		c := meta.FindStatusCondition(obj.StorageStatus().Conditions, ConditionSnapshotClass)
		if c == nil || c.Reason != reason {
			return fmt.Errorf("SnapshotClass condition %+v", c)
		}
		cond = *c
		return nil
	})
	return cond
}

// snapshotControllerLeads plays the external-snapshotter's controller: it
// takes its leader Lease in a namespace of its own, until the test ends.
func (h *harness) snapshotControllerLeads() {
	h.t.Helper()
	ns := "snapshot-" + h.cfg.OperatorNamespace
	require.NoError(h.t, createNamespaceIfMissing(h.ctx, h.c, ns))
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: SnapshotControllerLease, Namespace: ns},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptrTo("snapshot-controller-0_" + ns)},
	}
	require.NoError(h.t, h.c.Create(h.ctx, lease))
	h.t.Cleanup(func() { _ = h.c.Delete(h.ctx, lease) })
}

// Each BlockStorage and FileStorage derives a VolumeSnapshotClass that the
// real snapshot CRD accepts, names it in status, and says whether a
// snapshot controller leads; deleting the consumer collects the class.
func TestBlockAndFileStorageDeriveASnapshotClass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("snap", 3)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: cephv1alpha1.FileStorageSpec{MetadataServers: 1}}
	h.createConsumer(bs)
	h.createConsumer(fs)

	for _, tt := range []struct {
		consumer   consumerObject
		class      string
		driverKind string
	}{
		{bs, "ceph-fast", "rbd"},
		{fs, "cephfs-shared", "cephfs"},
	} {
		cond := h.waitSnapshotCondition(tt.consumer, ReasonNoSnapshotController)
		assert.Equal(t, metav1.ConditionUnknown, cond.Status, "no controller seen is not proof there is none")
		assert.Contains(t, cond.Message, "no Lease snapshot-controller-leader has a holder")
		assert.Equal(t, tt.class, tt.consumer.StorageStatus().SnapshotClassName)
		var class snapshotv1.VolumeSnapshotClass
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: tt.class}, &class))
		assert.Equal(t, h.cfg.OperatorNamespace+"."+tt.driverKind+".csi.ceph.com", class.Driver)
		assert.Equal(t, h.cfg.ClusterNamespace, class.Parameters["clusterID"])
		assert.Equal(t, "true", class.Labels[VeleroSnapshotClassLabel])
		assert.True(t, IsControlledBy(&class, tt.consumer.GetUID()))
		var sc storagev1.StorageClass
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: tt.class}, &sc))
		assert.Equal(t, sc.Provisioner, class.Driver, "a snapshot's driver is its volume's")
		assert.NotEqual(t, cephv1alpha1.StorageDegraded, tt.consumer.StorageStatus().Phase)
	}

	h.snapshotControllerLeads()
	for _, consumer := range []consumerObject{bs, fs} {
		cond := h.waitSnapshotCondition(consumer, ReasonSnapshotClassReady)
		assert.Equal(t, metav1.ConditionTrue, cond.Status)
	}

	require.NoError(t, h.c.Delete(h.ctx, bs))
	h.eventually("the garbage collector removes the BlockStorage's class", func() error {
		err := h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-fast"}, &snapshotv1.VolumeSnapshotClass{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("class still there: %v", err)
	})
}

// A class someone else made under the derived name is reported and left
// alone, and the consumer is not Degraded for it; one of ours that someone
// edits or deletes is put back.
func TestSnapshotClassesAreNeverAdoptedAndAreRestored(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("snapown", 1)

	foreign := &snapshotv1.VolumeSnapshotClass{
		ObjectMeta:     metav1.ObjectMeta{Name: "ceph-taken"},
		Driver:         "someone-elses.csi.example.com",
		DeletionPolicy: snapshotv1.VolumeSnapshotContentRetain,
	}
	require.NoError(t, h.c.Create(h.ctx, foreign))
	taken := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}
	h.createConsumer(taken)
	cond := h.waitSnapshotCondition(taken, ReasonForeignObject)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Contains(t, cond.Message, "VolumeSnapshotClass ceph-taken already exists and is not owned by this resource")
	assert.Empty(t, taken.Status.SnapshotClassName)
	assert.Equal(t, "ceph-taken", taken.Status.StorageClassName, "the volumes are unaffected")
	assert.NotEqual(t, cephv1alpha1.StorageDegraded, taken.Status.Phase)
	var after snapshotv1.VolumeSnapshotClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(foreign), &after))
	assert.Equal(t, foreign.Driver, after.Driver)
	assert.Equal(t, foreign.DeletionPolicy, after.DeletionPolicy)
	assert.Empty(t, after.OwnerReferences, "never adopted")

	ours := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "ours"}}
	h.createConsumer(ours)
	h.waitSnapshotCondition(ours, ReasonNoSnapshotController)
	var class snapshotv1.VolumeSnapshotClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-ours"}, &class))
	want := class.DeepCopy()

	t.Run("an edit is restored and announced", func(t *testing.T) {
		class.DeletionPolicy = snapshotv1.VolumeSnapshotContentRetain
		class.Parameters["clusterID"] = "elsewhere"
		delete(class.Labels, VeleroSnapshotClassLabel)
		class.Labels["team"] = "db"
		require.NoError(t, h.c.Update(h.ctx, &class))
		h.eventually("the class is restored", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-ours"}, &class))
			if drift := SnapshotClassDrift(want, &class); len(drift) > 0 {
				return fmt.Errorf("drift: %v", drift)
			}
			return nil
		})
		assert.Equal(t, "db", class.Labels["team"], "someone's own label stays")
		h.eventually("an Event says what was restored", func() error {
			note := h.eventNote(ours.UID, "SnapshotClassRestored")
			if note == "" {
				return errNotYet
			}
			assert.Contains(t, note, `deletionPolicy is "Retain", want "Delete"`)
			assert.Contains(t, note, `parameters.clusterID is "elsewhere"`)
			return nil
		})
	})

	t.Run("a deleted class is made again", func(t *testing.T) {
		require.NoError(t, h.c.Delete(h.ctx, &class))
		h.eventually("the class is back", func() error {
			var again snapshotv1.VolumeSnapshotClass
			if err := h.c.Get(h.ctx, client.ObjectKey{Name: "ceph-ours"}, &again); err != nil {
				return err
			}
			if again.UID == class.UID {
				return errNotYet
			}
			return nil
		})
	})
}

// eventNote is the note of the newest Event with reason about the object
// with uid, "" when there is none.
func (h *harness) eventNote(uid types.UID, reason string) string {
	h.t.Helper()
	var events corev1.EventList
	require.NoError(h.t, h.c.List(h.ctx, &events))
	note := ""
	for _, e := range events.Items {
		if e.InvolvedObject.UID == uid && e.Reason == reason {
			note = e.Message
		}
	}
	return note
}

// On a control plane without the snapshot CRDs a consumer works and says
// snapshots are missing; a CRD that does not serve v1 is named; once the
// real CRDs are installed, the class is made without a restart.
func TestSnapshotClassFollowsTheSnapshotAPI(t *testing.T) {
	cp, err := testenv.Start(testenv.Options{Scheme: testScheme(), OurCRDs: true, RookCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cp.Stop()) })
	h := newHarnessOn(t, cp)
	h.start()
	h.withPooledNodes("snapapi", 1)
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "early"}, Spec: cephv1alpha1.FileStorageSpec{MetadataServers: 1}}
	h.createConsumer(fs)

	cond := h.waitSnapshotCondition(fs, ReasonSnapshotAPIMissing)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Contains(t, cond.Message, "the snapshot API is not installed")
	assert.Equal(t, cephv1alpha1.StorageProvisioning, fs.Status.Phase, "everything else goes on")
	assert.Equal(t, "cephfs-early", fs.Status.StorageClassName)
	assert.Empty(t, fs.Status.SnapshotClassName)

	files, err := testenv.SnapshotCRDFiles()
	require.NoError(t, err)
	t.Run("a CRD that serves only v1beta1 is named", func(t *testing.T) {
		old := v1beta1Only(t, files[0])
		require.NoError(t, h.c.Create(h.ctx, old))
		cond := h.waitSnapshotCondition(fs, ReasonSnapshotAPIVersion)
		assert.Contains(t, cond.Message, "serves [v1beta1], not snapshot.storage.k8s.io/v1")
		require.NoError(t, h.c.Delete(h.ctx, old))
		h.eventually("the old CRD is gone", func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(old), old); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD still there: %v", err)
			}
			return nil
		})
	})

	_, err = envtest.InstallCRDs(cp.Config, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true})
	require.NoError(t, err)
	h.waitSnapshotCondition(fs, ReasonNoSnapshotController)
	assert.Equal(t, "cephfs-early", fs.Status.SnapshotClassName)
	var class snapshotv1.VolumeSnapshotClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "cephfs-early"}, &class))
	assert.True(t, IsControlledBy(&class, fs.UID))
}

// v1beta1Only is the real VolumeSnapshotClass CRD as the external-snapshotter
// before v4 served it: v1beta1 alone.
func v1beta1Only(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(data, &crd))
	require.True(t, strings.HasPrefix(filepath.Base(file), "snapshot.storage.k8s.io_volumesnapshotclasses"), file)
	var kept []apiextensionsv1.CustomResourceDefinitionVersion
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1beta1" {
			v.Served, v.Storage, v.Deprecated, v.DeprecationWarning = true, true, false, nil
			kept = append(kept, v)
		}
	}
	require.Len(t, kept, 1, "the CRD carries a v1beta1 schema")
	crd.Spec.Versions = kept
	return &crd
}
