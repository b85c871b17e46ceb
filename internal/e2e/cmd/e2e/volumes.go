package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fundament-oss/ceph-rook/internal/e2e/images"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// The volumes phase (-volumes) needs Rook's CSI images and the snapshot
// controller's in every node's containerd. They cannot be built by the
// project (their sources are not on the Go module proxy) and nothing can
// be pulled here, so `just e2e` does not run it; hack/e2e/README.md says
// where a machine that has them keeps them.
const (
	snapshotNamespace       = "snapshot-controller"
	snapshotControllerImage = "registry.k8s.io/sig-storage/snapshot-controller:v8.2.1"
	gib                     = int64(1) << 30
)

// volumes proves the classes against real ceph-csi: a PVC from each class
// binds to an RBD image or CephFS subvolume that Ceph shows as the class
// says; the CephFS volume is mounted (ceph-fuse) by pods on two nodes and
// the bytes one writes the other reads; each consumer's VolumeSnapshotClass
// turns Ready once a snapshot controller leads; snapshots, restores, clones
// and expansion are read back from Ceph.
func (r *run) volumes() error {
	if err := r.csiRunning(); err != nil {
		return err
	}
	if err := r.snapshotAPI(); err != nil {
		return err
	}
	for _, consumer := range []struct{ kind, class string }{{"BlockStorage", "ceph-e2e"}, {"FileStorage", "cephfs-e2e"}} {
		if err := r.snapshotClassReady(consumer.kind, consumer.class); err != nil {
			return err
		}
	}
	if err := r.blockVolumes(); err != nil {
		return err
	}
	return r.fileVolumes()
}

// csiRunning waits for Rook's CSI provisioners and node plugins.
func (r *run) csiRunning() error {
	return r.until(10*time.Minute, func(ctx context.Context) error {
		for _, name := range []string{"csi-rbdplugin-provisioner", "csi-cephfsplugin-provisioner"} {
			var d appsv1.Deployment
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: "rook-ceph", Name: name}, &d); err != nil {
				return err
			}
			if d.Status.ReadyReplicas < 1 {
				return fmt.Errorf("deployment %s: %d ready", name, d.Status.ReadyReplicas)
			}
		}
		for _, name := range []string{"csi-rbdplugin", "csi-cephfsplugin"} {
			var ds appsv1.DaemonSet
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: "rook-ceph", Name: name}, &ds); err != nil {
				return err
			}
			if ds.Status.NumberReady != ds.Status.DesiredNumberScheduled || ds.Status.DesiredNumberScheduled == 0 {
				return fmt.Errorf("daemonset %s: %d of %d ready", name, ds.Status.NumberReady, ds.Status.DesiredNumberScheduled)
			}
		}
		r.step("Rook's CSI provisioners and node plugins run (RBD and CephFS)")
		return nil
	})
}

// snapshotAPI installs the external-snapshotter's CRDs (those the plugin's
// tests use) and runs its snapshot controller, as a distribution would.
func (r *run) snapshotAPI() error {
	files, err := testenv.SnapshotCRDFiles()
	if err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(r.restConfig, envtest.CRDInstallOptions{Paths: files, ErrorIfPathMissing: true}); err != nil {
		return fmt.Errorf("install the snapshot CRDs: %w", err)
	}
	labels := map[string]string{"app": "snapshot-controller"}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: snapshotNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "snapshot-controller", Namespace: snapshotNamespace}},
		// A test fixture, not the product: the controller's own ClusterRole
		// is the external-snapshotter's business.
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-snapshot-controller"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "snapshot-controller", Namespace: snapshotNamespace}},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "snapshot-controller", Namespace: snapshotNamespace},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: "snapshot-controller",
						Containers: []corev1.Container{{
							Name: "snapshot-controller", Image: snapshotControllerImage, ImagePullPolicy: corev1.PullNever,
							Args: []string{"--v=2", "--leader-election=true", "--leader-election-namespace=" + snapshotNamespace},
						}},
					},
				},
			},
		},
	}
	for _, o := range objs {
		if err := r.c.Create(r.ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	r.step("snapshot CRDs installed, snapshot controller %s deployed", snapshotControllerImage)
	return nil
}

// snapshotClassReady waits for the consumer to say its VolumeSnapshotClass
// is in place and a snapshot controller leads: the plugin saw the CRDs
// arrive after it and found the controller's Lease.
func (r *run) snapshotClassReady(kind, class string) error {
	return r.until(5*time.Minute, func(ctx context.Context) error {
		obj := object(kind, "e2e", nil)
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		name, _, _ := unstructured.NestedString(obj.Object, "status", "snapshotClassName")
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			cond, _ := c.(map[string]any)
			if cond["type"] == "SnapshotClass" && cond["status"] == "True" && name == class {
				var vsc snapshotv1.VolumeSnapshotClass
				if err := r.c.Get(ctx, client.ObjectKey{Name: class}, &vsc); err != nil {
					return err
				}
				r.step("%s e2e: SnapshotClass True (%s), VolumeSnapshotClass %s driver %s", kind, cond["message"], class, vsc.Driver)
				return nil
			}
		}
		return fmt.Errorf("%s e2e: snapshotClassName %q, conditions %v", kind, name, conds)
	})
}

// blockVolumes: a PVC from the BlockStorage's class, its image in the
// pool; a snapshot, a restore and a clone, each an image Ceph shows; the
// volume grown. No pod mounts an RBD volume: this kernel has no rbd module.
func (r *run) blockVolumes() error {
	const class, pool = "ceph-e2e", "ceph-e2e"
	if err := r.createAppsNamespaceIfMissing(); err != nil {
		return err
	}
	image, err := r.boundImage("block", class, corev1.ReadWriteOnce, gib, nil)
	if err != nil {
		return err
	}
	info, err := r.rbdInfo(pool, image)
	if err != nil {
		return err
	}
	if info.Size != gib || !strings.Contains(strings.Join(info.Features, ","), "layering") {
		return fmt.Errorf("rbd image %s/%s: size %d, features %v; want 1 GiB with layering (the class's imageFeatures)", pool, image, info.Size, info.Features)
	}
	r.step("PVC block bound: rbd image %s/%s, %d bytes, features %v", pool, image, info.Size, info.Features)

	snap, err := r.readySnapshot("block-snap", "block", class)
	if err != nil {
		return err
	}
	r.step("VolumeSnapshot block-snap ready: snapshot handle %s", snap)
	for _, from := range []*corev1.TypedLocalObjectReference{
		{APIGroup: new(snapshotv1.GroupName), Kind: "VolumeSnapshot", Name: "block-snap"},
		{Kind: "PersistentVolumeClaim", Name: "block"},
	} {
		name := "block-from-" + strings.ToLower(from.Kind)
		child, err := r.boundImage(name, class, corev1.ReadWriteOnce, gib, from)
		if err != nil {
			return err
		}
		info, err := r.rbdInfo(pool, child)
		if err != nil {
			return err
		}
		r.step("PVC %s (from %s %s) bound: rbd image %s/%s, %d bytes, parent %s", name, from.Kind, from.Name, pool, child, info.Size, info.Parent.Image)
	}

	if err := r.expand("block", 2*gib); err != nil {
		return err
	}
	return r.until(3*time.Minute, func(context.Context) error {
		info, err := r.rbdInfo(pool, image)
		if err != nil {
			return err
		}
		if info.Size != 2*gib {
			return fmt.Errorf("rbd image %s/%s is %d bytes, want 2 GiB", pool, image, info.Size)
		}
		r.step("PVC block grown: rbd image %s/%s is %d bytes", pool, image, info.Size)
		return nil
	})
}

// fileVolumes: a ReadWriteMany PVC from the FileStorage's class, its
// subvolume in the filesystem, mounted by pods on two nodes with the
// bytes crossing; a snapshot restored into a new PVC shows the bytes of
// before; a clone binds; the volume grown, seen by the mounting pod.
func (r *run) fileVolumes() error {
	const class, fs = "cephfs-e2e", "cephfs-e2e"
	if len(r.nodes) < 2 {
		return fmt.Errorf("the CephFS volume is mounted on two nodes; the cluster has %v", r.nodes)
	}
	subvolume, err := r.boundSubvolume("shared", class, gib, nil)
	if err != nil {
		return err
	}
	r.step("PVC shared bound: subvolume %s of %s (group csi)", subvolume, fs)

	writer, reader := "shared-"+r.nodes[0], "shared-"+r.nodes[1]
	for i, pod := range []string{writer, reader} {
		if err := r.mountingPod(pod, "shared", r.nodes[i]); err != nil {
			return err
		}
	}
	before := fmt.Sprintf("written on %s at %s", r.nodes[0], time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := r.inPod(writer, "printf %s '"+before+"' > /data/payload && sync"); err != nil {
		return err
	}
	got, err := r.inPod(reader, "cat /data/payload")
	if err != nil {
		return err
	}
	if got != before {
		return fmt.Errorf("pod %s on %s read %q; %s wrote %q", reader, r.nodes[1], got, writer, before)
	}
	r.step("pod %s on %s wrote %d bytes (sha256 %s); pod %s on %s read the same", writer, r.nodes[0], len(before), digest(before), reader, r.nodes[1])

	if _, err := r.readySnapshot("shared-snap", "shared", class); err != nil {
		return err
	}
	snaps, err := r.cephCLI(r.ctx, "fs", "subvolume", "snapshot", "ls", fs, subvolume, "csi", "--format=json")
	if err != nil {
		return err
	}
	r.step("VolumeSnapshot shared-snap ready; Ceph lists the subvolume's snapshots: %s", compact(snaps))
	if _, err := r.inPod(writer, "printf %s ' and more after the snapshot' >> /data/payload && sync"); err != nil {
		return err
	}
	restored, err := r.boundSubvolume("shared-restored", class, gib,
		&corev1.TypedLocalObjectReference{APIGroup: new(snapshotv1.GroupName), Kind: "VolumeSnapshot", Name: "shared-snap"})
	if err != nil {
		return err
	}
	if err := r.mountingPod("restored", "shared-restored", r.nodes[1]); err != nil {
		return err
	}
	if got, err := r.inPod("restored", "cat /data/payload"); err != nil || got != before {
		return fmt.Errorf("the restored PVC reads %q (%v); the snapshot was taken of %q", got, err, before)
	}
	r.step("PVC shared-restored (subvolume %s) from the snapshot, mounted on %s, reads the bytes of before the snapshot", restored, r.nodes[1])
	clone, err := r.boundSubvolume("shared-clone", class, gib, &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "shared"})
	if err != nil {
		return err
	}
	r.step("PVC shared-clone bound: subvolume %s", clone)

	if err := r.expand("shared", 2*gib); err != nil {
		return err
	}
	return r.until(3*time.Minute, func(ctx context.Context) error {
		var info struct {
			Quota json.Number `json:"bytes_quota"`
		}
		out, err := r.cephCLI(ctx, "fs", "subvolume", "info", fs, subvolume, "csi", "--format=json")
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(out), &info); err != nil {
			return fmt.Errorf("subvolume info %q: %w", out, err)
		}
		size, err := r.inPod(reader, "df -B1 --output=size /data | tail -1")
		if err != nil {
			return err
		}
		if info.Quota.String() != strconv.FormatInt(2*gib, 10) || strings.TrimSpace(size) != strconv.FormatInt(2*gib, 10) {
			return fmt.Errorf("subvolume %s quota %s, the mount's size %s; want 2 GiB", subvolume, info.Quota, size)
		}
		r.step("PVC shared grown: subvolume quota %s bytes; pod %s sees a %s-byte filesystem", info.Quota, reader, strings.TrimSpace(size))
		return nil
	})
}

func (r *run) createAppsNamespaceIfMissing() error {
	if err := r.createAppsNamespace(); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// boundImage creates a PVC and returns the RBD image its PV names.
func (r *run) boundImage(name, class string, mode corev1.PersistentVolumeAccessMode, size int64, from *corev1.TypedLocalObjectReference) (string, error) {
	pv, err := r.boundPVC(name, class, mode, size, from)
	if err != nil {
		return "", err
	}
	return pv.Spec.CSI.VolumeAttributes["imageName"], nil
}

// boundSubvolume creates a ReadWriteMany PVC and returns the CephFS
// subvolume its PV names.
func (r *run) boundSubvolume(name, class string, size int64, from *corev1.TypedLocalObjectReference) (string, error) {
	pv, err := r.boundPVC(name, class, corev1.ReadWriteMany, size, from)
	if err != nil {
		return "", err
	}
	return pv.Spec.CSI.VolumeAttributes["subvolumeName"], nil
}

// boundPVC creates a PVC of class (from a data source, if any) and waits
// for its PV.
func (r *run) boundPVC(name, class string, mode corev1.PersistentVolumeAccessMode, size int64, from *corev1.TypedLocalObjectReference) (*corev1.PersistentVolume, error) {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appsNamespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: *resource.NewQuantity(size, resource.BinarySI)}},
			DataSource:       from,
		},
	}
	if err := r.c.Create(r.ctx, pvc); err != nil {
		return nil, fmt.Errorf("create PVC %s: %w", name, err)
	}
	pv := &corev1.PersistentVolume{}
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("PVC %s is %s", name, pvc.Status.Phase)
		}
		return r.c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)
	})
	if err != nil {
		events, _ := r.kubectlOut("-n", appsNamespace, "get", "events", "--field-selector", "involvedObject.name="+name)
		return nil, fmt.Errorf("%w; events: %s", err, events)
	}
	if pv.Spec.CSI == nil {
		return nil, fmt.Errorf("PV %s of PVC %s is not a CSI volume", pv.Name, name)
	}
	return pv, nil
}

// readySnapshot snapshots a PVC with a class and waits until the snapshot
// is ready to use; it returns the snapshot's handle in ceph-csi.
func (r *run) readySnapshot(name, pvc, class string) (string, error) {
	snap := &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appsNamespace},
		Spec: snapshotv1.VolumeSnapshotSpec{
			VolumeSnapshotClassName: &class,
			Source:                  snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: &pvc},
		},
	}
	if err := r.c.Create(r.ctx, snap); err != nil {
		return "", fmt.Errorf("create VolumeSnapshot %s: %w", name, err)
	}
	var handle string
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(snap), snap); err != nil {
			return err
		}
		st := snap.Status
		if st == nil || st.ReadyToUse == nil || !*st.ReadyToUse || st.BoundVolumeSnapshotContentName == nil {
			return fmt.Errorf("VolumeSnapshot %s not ready: %+v", name, st)
		}
		var content snapshotv1.VolumeSnapshotContent
		if err := r.c.Get(ctx, client.ObjectKey{Name: *st.BoundVolumeSnapshotContentName}, &content); err != nil {
			return err
		}
		if content.Status == nil || content.Status.SnapshotHandle == nil {
			return fmt.Errorf("VolumeSnapshotContent %s has no handle", content.Name)
		}
		handle = *content.Status.SnapshotHandle
		return nil
	})
	return handle, err
}

// expand asks for a larger PVC.
func (r *run) expand(name string, size int64) error {
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":"%d"}}}}`, size)
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appsNamespace}}
	if err := r.c.Patch(r.ctx, pvc, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		return fmt.Errorf("grow PVC %s: %w", name, err)
	}
	r.step("PVC %s: asked for %d bytes", name, size)
	return nil
}

// mountingPod runs a pod on node that mounts the PVC at /data, under the
// restricted Pod Security level, and waits until it runs.
func (r *run) mountingPod(name, pvc, node string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appsNamespace},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: node},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: new(true), RunAsUser: new(int64(1000)), FSGroup: new(int64(1000)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "app", Image: images.CephImage, ImagePullPolicy: corev1.PullNever,
				Command:      []string{"sleep", "infinity"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: new(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc},
			}}},
		},
	}
	if err := r.createAfresh(pod); err != nil {
		return err
	}
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if !podReady(pod) {
			return fmt.Errorf("pod %s on %s is %s", name, node, pod.Status.Phase)
		}
		return nil
	})
	if err != nil {
		events, _ := r.kubectlOut("-n", appsNamespace, "get", "events", "--field-selector", "involvedObject.name="+name)
		return fmt.Errorf("%w; events: %s", err, events)
	}
	r.step("pod %s on %s mounts PVC %s (ceph-fuse)", name, node, pvc)
	return nil
}

func (r *run) inPod(pod, script string) (string, error) {
	return r.kubectlOut("-n", appsNamespace, "exec", pod, "--", "sh", "-c", script)
}

// rbdImageInfo is what `rbd info --format=json` says of an image.
type rbdImageInfo struct {
	Size     int64    `json:"size"`
	Features []string `json:"features"`
	Parent   struct {
		Image string `json:"image"`
	} `json:"parent"`
}

func (r *run) rbdInfo(pool, image string) (rbdImageInfo, error) {
	var info rbdImageInfo
	out, err := r.kubectlOut("-n", "rook-ceph", "exec", "deploy/rook-ceph-operator", "--", "rbd",
		"--conf=/var/lib/rook/rook-ceph/rook-ceph.config", "--keyring=/var/lib/rook/rook-ceph/client.admin.keyring", "--name=client.admin",
		"info", pool+"/"+image, "--format=json")
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return info, fmt.Errorf("rbd info %s/%s: %q: %w", pool, image, out, err)
	}
	return info, nil
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func compact(s string) string { return strings.Join(strings.Fields(s), " ") }
