package main

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// DefaultClassAnnotation marks the cluster's default StorageClass.
const DefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// CSI secret parameter names. The secrets live in the CephCluster's
// namespace; Rook creates them.
const (
	csiPrefix                     = "csi.storage.k8s.io/"
	paramProvisionerSecretName    = csiPrefix + "provisioner-secret-name"
	paramProvisionerSecretNS      = csiPrefix + "provisioner-secret-namespace"
	paramControllerExpandSecret   = csiPrefix + "controller-expand-secret-name"
	paramControllerExpandSecretNS = csiPrefix + "controller-expand-secret-namespace"
	paramNodeStageSecretName      = csiPrefix + "node-stage-secret-name"
	paramNodeStageSecretNS        = csiPrefix + "node-stage-secret-namespace"
	paramFSType                   = csiPrefix + "fstype"
)

// RBDProvisioner is the RBD CSI driver: it follows the operator namespace.
func RBDProvisioner(cfg Config) string { return cfg.OperatorNamespace + ".rbd.csi.ceph.com" }

// CephFSProvisioner is the CephFS CSI driver: it follows the operator
// namespace.
func CephFSProvisioner(cfg Config) string { return cfg.OperatorNamespace + ".cephfs.csi.ceph.com" }

// BucketProvisioner is Rook's ObjectBucketClaim provisioner. Unlike the CSI
// drivers it follows the CephCluster's namespace, not the operator's.
func BucketProvisioner(cfg Config) string { return cfg.ClusterNamespace + ".ceph.rook.io/bucket" }

// RenderRBDStorageClass is the RBD (ReadWriteOnce) StorageClass ceph-<name>
// of a BlockStorage, over its CephBlockPool, controlled by the
// BlockStorage; the cluster default when spec.default is set.
func RenderRBDStorageClass(bs *cephv1alpha1.BlockStorage, cfg Config) *storagev1.StorageClass {
	name := BlockPoolName(bs.Name)
	sc := storageClass(name, bs, "BlockStorage", RBDProvisioner(cfg), map[string]string{
		"clusterID":                   cfg.ClusterNamespace,
		"pool":                        name,
		"imageFormat":                 "2",
		"imageFeatures":               "layering",
		paramFSType:                   "ext4",
		paramProvisionerSecretName:    "rook-csi-rbd-provisioner",
		paramProvisionerSecretNS:      cfg.ClusterNamespace,
		paramControllerExpandSecret:   "rook-csi-rbd-provisioner",
		paramControllerExpandSecretNS: cfg.ClusterNamespace,
		paramNodeStageSecretName:      "rook-csi-rbd-node",
		paramNodeStageSecretNS:        cfg.ClusterNamespace,
	})
	sc.AllowVolumeExpansion = ptrTo(true)
	if bs.Spec.Default {
		sc.Annotations = map[string]string{DefaultClassAnnotation: "true"}
	}
	return sc
}

// RenderCephFSStorageClass is the CephFS (ReadWriteMany) StorageClass
// cephfs-<name> of a FileStorage, controlled by the FileStorage. It names
// the filesystem's data pool (<fs>-data): without it PVCs fail.
func RenderCephFSStorageClass(fs *cephv1alpha1.FileStorage, cfg Config) *storagev1.StorageClass {
	name := FilesystemName(fs.Name)
	sc := storageClass(name, fs, "FileStorage", CephFSProvisioner(cfg), map[string]string{
		"clusterID":                   cfg.ClusterNamespace,
		"fsName":                      name,
		"pool":                        FilesystemDataPoolName(name),
		"mounter":                     cfg.CephFSMounter,
		paramProvisionerSecretName:    "rook-csi-cephfs-provisioner",
		paramProvisionerSecretNS:      cfg.ClusterNamespace,
		paramControllerExpandSecret:   "rook-csi-cephfs-provisioner",
		paramControllerExpandSecretNS: cfg.ClusterNamespace,
		paramNodeStageSecretName:      "rook-csi-cephfs-node",
		paramNodeStageSecretNS:        cfg.ClusterNamespace,
	})
	sc.AllowVolumeExpansion = ptrTo(true)
	return sc
}

// RenderBucketStorageClass is the StorageClass cephobj-<name> of an
// ObjectStorage that ObjectBucketClaims reference, controlled by the
// ObjectStorage.
//
// Rook's bucket provisioner reads objectStoreName only; the store's
// namespace is its own CephCluster's (pkg/operator/ceph/object/bucket,
// setObjectStoreName), and region is read by nothing: a claim's
// BUCKET_REGION stays empty and RGW enforces no region. objectStoreNamespace
// and region are kept as labels a reader of the class can use, and because
// parameters are immutable: dropping them would make every existing class
// drift.
func RenderBucketStorageClass(store *cephv1alpha1.ObjectStorage, cfg Config) *storagev1.StorageClass {
	name := ObjectStoreName(store.Name)
	return storageClass(name, store, "ObjectStorage", BucketProvisioner(cfg), map[string]string{
		"objectStoreName":      name,
		"objectStoreNamespace": cfg.ClusterNamespace,
		"region":               cfg.S3Region,
	})
}

// storageClass sets every immutable field (provisioner, parameters,
// reclaimPolicy, volumeBindingMode) explicitly: a field left to the API
// server's default would read back as drift, and drift in these fields can
// only be fixed by deleting the class.
func storageClass(name string, owner metav1.Object, ownerKind, provisioner string, params map[string]string) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		TypeMeta:          metav1.TypeMeta{APIVersion: storagev1.SchemeGroupVersion.String(), Kind: "StorageClass"},
		ObjectMeta:        derivedMeta(name, "", owner, ownerKind),
		Provisioner:       provisioner,
		Parameters:        params,
		ReclaimPolicy:     ptrTo(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptrTo(storagev1.VolumeBindingImmediate),
	}
}

// StorageClassDrift lists, sorted, every immutable field in which have
// differs from want. The API server refuses to change these fields, so a
// reconciler must not try: it goes Degraded with StorageClassDriftMessage.
func StorageClassDrift(want, have *storagev1.StorageClass) []string {
	var diffs []string
	if want.Provisioner != have.Provisioner {
		diffs = append(diffs, fmt.Sprintf("provisioner is %q, want %q", have.Provisioner, want.Provisioner))
	}
	if w, h := reclaimPolicy(want), reclaimPolicy(have); w != h {
		diffs = append(diffs, fmt.Sprintf("reclaimPolicy is %q, want %q", h, w))
	}
	if w, h := bindingMode(want), bindingMode(have); w != h {
		diffs = append(diffs, fmt.Sprintf("volumeBindingMode is %q, want %q", h, w))
	}
	diffs = append(diffs, mapDrift("parameters", want.Parameters, have.Parameters, true)...)
	sort.Strings(diffs)
	return diffs
}

// mapDrift lists the keys of want whose value in have differs, sorted, and
// with exact also the keys only have has.
func mapDrift(field string, want, have map[string]string, exact bool) []string {
	var diffs []string
	for _, k := range sortedKeys(keysOf(want, have)) {
		w, wok := want[k]
		h, hok := have[k]
		switch {
		case !hok:
			diffs = append(diffs, fmt.Sprintf("%s.%s is missing, want %q", field, k, w))
		case !wok:
			if exact {
				diffs = append(diffs, fmt.Sprintf("%s.%s is %q, want it absent", field, k, h))
			}
		case w != h:
			diffs = append(diffs, fmt.Sprintf("%s.%s is %q, want %q", field, k, h, w))
		}
	}
	return diffs
}

func keysOf(maps ...map[string]string) map[string]bool {
	keys := map[string]bool{}
	for _, m := range maps {
		for k := range m {
			keys[k] = true
		}
	}
	return keys
}

// StorageClassDriftMessage explains drift to the operator: which fields
// differ and that the class must be deleted to be re-created.
func StorageClassDriftMessage(name string, diffs []string) string {
	return fmt.Sprintf("StorageClass %s differs in immutable fields (%s): delete it so it can be re-created",
		name, strings.Join(diffs, "; "))
}

// reclaimPolicy reads a class's policy as the API server defaults it.
func reclaimPolicy(sc *storagev1.StorageClass) corev1.PersistentVolumeReclaimPolicy {
	if sc.ReclaimPolicy == nil {
		return corev1.PersistentVolumeReclaimDelete
	}
	return *sc.ReclaimPolicy
}

// bindingMode reads a class's binding mode as the API server defaults it.
func bindingMode(sc *storagev1.StorageClass) storagev1.VolumeBindingMode {
	if sc.VolumeBindingMode == nil {
		return storagev1.VolumeBindingImmediate
	}
	return *sc.VolumeBindingMode
}
