package simulate

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// OSDDeployment is the Deployment Rook v1.18 runs a host OSD in, with
// what the plugin reads of it as Rook writes it: the name
// rook-ceph-osd-<id>, the labels app=rook-ceph-osd and ceph-osd-id
// (pkg/operator/ceph/cluster/osd/labels.go), and in the first container's
// environment the node, the OSD's UUID and its block path, a raw-mode OSD's
// kernel device (envs.go, spec.go). Its status says its pod runs.
func OSDDeployment(namespace string, id int, node, blockPath string) *appsv1.Deployment {
	labels := map[string]string{rook.AppLabel: rook.OSDApp, rook.OSDIDLabel: strconv.Itoa(id), "topology-location-host": node, SimulatedLabel: "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-osd-" + strconv.Itoa(id), Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{rook.AppLabel: rook.OSDApp, rook.OSDIDLabel: strconv.Itoa(id)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: node},
					Containers: []corev1.Container{{
						Name:  rook.OSDContainer,
						Image: "quay.io/ceph/ceph:v19.2.3",
						Env: []corev1.EnvVar{
							{Name: rook.EnvNodeName, Value: node},
							{Name: rook.EnvOSDUUID, Value: fmt.Sprintf("00000000-0000-4000-8000-%012d", id)},
							{Name: "ROOK_OSD_ID", Value: strconv.Itoa(id)},
							{Name: rook.EnvBlockPath, Value: blockPath},
							{Name: "ROOK_CV_MODE", Value: "raw"},
						},
					}},
				},
			},
		},
	}
}

// CreateOSD creates an OSD Deployment and gives it the status the
// deployment controller would: its one pod runs.
func CreateOSD(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	if err := c.Create(ctx, d); err != nil {
		return err
	}
	return SyncDeploymentStatus(ctx, c, d)
}

// SyncDeploymentStatus plays the deployment controller (which envtest does
// not run): status.replicas follows spec.replicas.
func SyncDeploymentStatus(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.Replicas == want && d.Status.ObservedGeneration == d.Generation {
		return nil
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Status.Replicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas = want, want, want, want
	d.Status.ObservedGeneration = d.Generation
	return c.Status().Patch(ctx, d, patch)
}

// FinishJob writes a Job's final status: the conditions, counts and times
// the API server requires of a finished Job (SuccessCriteriaMet before
// Complete, FailureTarget before Failed).
func FinishJob(ctx context.Context, c client.Client, job *batchv1.Job, succeeded bool) error {
	now := metav1.NewTime(time.Now())
	start := metav1.NewTime(now.Add(-time.Second))
	patch := client.MergeFrom(job.DeepCopy())
	job.Status.StartTime = &start
	cond := func(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: reason, LastProbeTime: now, LastTransitionTime: now}
	}
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached")}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"), cond(batchv1.JobFailed, "BackoffLimitExceeded")}
	}
	return c.Status().Patch(ctx, job, patch)
}

// OSDs plays Rook's OSD side in the cluster namespace: an OSD Deployment
// for every device the CephCluster newly lists (Rook prepares devices when
// the CephCluster changes, not on every pass; the OSD takes the lowest free
// ID, as Ceph hands them out), and on every node it prepares one for each
// OSD a device's label names that has none (Rook's prepare lists every
// raw OSD on the node, pkg/daemon/ceph/osd/volume.go, and the operator
// starts a Deployment for each); the deployment controller's status for
// them; and Ceph itself (Ceph). HoldStoppedPods lets a test hold an OSD's
// pod back.
type OSDs struct {
	Client    client.Client
	Namespace string
	// Ceph is Ceph's side: the OSD map, PGs, labels and the plugin's Ceph
	// Jobs. Made on the first Step when nil.
	Ceph *Ceph
	// HoldStoppedPods keeps a stopped OSD's pod running (a slow shutdown).
	HoldStoppedPods atomic.Bool

	prepared map[string]bool // node + "\x00" + kernel path
}

// Step does one pass.
func (o *OSDs) Step(ctx context.Context) error {
	if o.prepared == nil {
		o.prepared = map[string]bool{}
	}
	if o.Ceph == nil {
		o.Ceph = &Ceph{Client: o.Client, Namespace: o.Namespace}
	}
	deployments, err := o.deployments(ctx)
	if err != nil {
		return err
	}
	used := map[int]bool{}
	for i := range deployments.Items {
		d := &deployments.Items[i]
		id, _ := strconv.Atoi(d.Labels[rook.OSDIDLabel])
		used[id] = true
		o.prepared[d.Spec.Template.Spec.NodeSelector[corev1.LabelHostname]+"\x00"+envValue(d, rook.EnvBlockPath)] = true
		if !(o.HoldStoppedPods.Load() && d.Spec.Replicas != nil && *d.Spec.Replicas == 0) {
			if err := SyncDeploymentStatus(ctx, o.Client, d); err != nil {
				return err
			}
		}
		o.Ceph.SetUp(id, d.Status.Replicas > 0)
	}
	if err := o.prepareListed(ctx, used); err != nil {
		return err
	}
	return o.Ceph.Step(ctx)
}

// prepareListed starts an OSD on every listed device not prepared before.
func (o *OSDs) prepareListed(ctx context.Context, used map[int]bool) error {
	var disks cephv1alpha1.DiskList
	if err := o.Client.List(ctx, &disks); err != nil {
		return err
	}
	kernelPath, detected := map[string]string{}, map[string]string{}
	for _, d := range disks.Items {
		for _, name := range []string{d.Status.StablePath, d.Status.Path} {
			if name != "" {
				kernelPath[d.Status.NodeName+"\x00"+name] = d.Status.Path
				detected[d.Status.NodeName+"\x00"+name] = detectedClass(d.Status.Rotational)
			}
		}
	}
	clusters, err := cephClusters(ctx, o.Client, o.Namespace)
	if err != nil {
		return err
	}
	var listed []ListedDevice
	configured := map[ListedDevice]string{}
	for i := range clusters.Items {
		listed = append(listed, clusterDevices(&clusters.Items[i])...)
		maps.Copy(configured, configuredClasses(&clusters.Items[i]))
	}
	prepared := map[string]bool{} // nodes whose prepare ran in this pass
	for _, dev := range listed {
		path := kernelPath[dev.Node+"\x00"+dev.Device]
		key := dev.Node + "\x00" + path
		if path == "" || o.prepared[key] {
			continue
		}
		o.prepared[key] = true
		prepared[dev.Node] = true
		id := 0
		for used[id] || o.Ceph.Exists(id) { // Ceph hands out the lowest ID its OSD map lacks
			id++
		}
		used[id] = true
		// ceph-volume writes the device's label before the operator makes
		// the OSD's Deployment.
		d := OSDDeployment(o.Namespace, id, dev.Node, path)
		class := configured[dev]
		if class == "" {
			class = detected[dev.Node+"\x00"+dev.Device]
		}
		withDeviceClass(d, class)
		o.Ceph.Prepared(id, dev.Node, path, envValue(d, rook.EnvOSDUUID), class)
		if err := CreateOSD(ctx, o.Client, d); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	if len(prepared) == 0 {
		return nil
	}
	// Rook's operator starts the OSDs a prepare found once the prepare has
	// run, against the Deployments there are then, not those of the pass's
	// first read: a Deployment deleted in between is one to start again.
	running, err := o.deployedIDs(ctx)
	if err != nil {
		return err
	}
	for node := range prepared {
		for path, id := range o.Ceph.LabelledOSDs(node) {
			if running[id] {
				continue
			}
			// An OSD whose label survived its removal: Rook starts it again.
			running[id] = true
			if err := CreateOSD(ctx, o.Client, OSDDeployment(o.Namespace, id, node, path)); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		}
	}
	return nil
}

// deployments are the OSD Deployments of the cluster namespace.
func (o *OSDs) deployments(ctx context.Context) (*appsv1.DeploymentList, error) {
	var deployments appsv1.DeploymentList
	err := o.Client.List(ctx, &deployments, client.InNamespace(o.Namespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp})
	return &deployments, err
}

// deployedIDs are the OSD IDs that have a Deployment now.
func (o *OSDs) deployedIDs(ctx context.Context) (map[int]bool, error) {
	deployments, err := o.deployments(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[int]bool{}
	for _, d := range deployments.Items {
		id, _ := strconv.Atoi(d.Labels[rook.OSDIDLabel])
		ids[id] = true
	}
	return ids, nil
}

// JobFinished is true once the Job is Complete or Failed.
func JobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func envValue(d *appsv1.Deployment, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// detectedClass is the device class Ceph's OSD gives itself when none is
// configured: hdd on a rotational device, else ssd.
func detectedClass(rotational bool) string {
	if rotational {
		return "hdd"
	}
	return "ssd"
}

// withDeviceClass gives an OSD Deployment its class as Rook writes it: the
// label device-class (labels.go) and ROOK_OSD_DEVICE_CLASS (envs.go),
// from the device's config.deviceClass, which ceph-volume was given as
// --crush-device-class.
func withDeviceClass(d *appsv1.Deployment, class string) {
	d.Labels["device-class"] = class
	d.Spec.Template.Labels["device-class"] = class
	c := &d.Spec.Template.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "ROOK_OSD_DEVICE_CLASS", Value: class})
}

// configuredClasses are the devices of one CephCluster's device list that
// carry a config.deviceClass, and that class.
func configuredClasses(cluster *unstructured.Unstructured) map[ListedDevice]string {
	classes := map[ListedDevice]string{}
	eachDevice(cluster, func(node, device string, entry map[string]any) {
		config, _ := entry["config"].(map[string]any)
		if class, _ := config["deviceClass"].(string); class != "" {
			classes[ListedDevice{Node: node, Device: device}] = class
		}
	})
	return classes
}

// ListedDevice is one device of the CephCluster's spec.storage.nodes.
type ListedDevice struct{ Node, Device string }

// ListedDevices reads the CephCluster's device list.
func ListedDevices(ctx context.Context, c client.Client, namespace string) ([]ListedDevice, error) {
	list, err := cephClusters(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	var out []ListedDevice
	for i := range list.Items {
		out = append(out, clusterDevices(&list.Items[i])...)
	}
	return out, nil
}

// cephClusters lists the CephClusters of namespace.
func cephClusters(ctx context.Context, c client.Client, namespace string) (*unstructured.UnstructuredList, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: "CephClusterList"})
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	return list, nil
}

// clusterDevices is what one CephCluster's spec.storage.nodes lists.
func clusterDevices(cluster *unstructured.Unstructured) []ListedDevice {
	var out []ListedDevice
	eachDevice(cluster, func(node, device string, _ map[string]any) {
		out = append(out, ListedDevice{Node: node, Device: device})
	})
	return out
}

// eachDevice calls visit with every named device entry of the CephCluster's
// spec.storage.nodes.
func eachDevice(cluster *unstructured.Unstructured, visit func(node, device string, entry map[string]any)) {
	nodes, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		name, _ := node["name"].(string)
		devices, _ := node["devices"].([]any)
		for _, d := range devices {
			dev, _ := d.(map[string]any)
			if devName, _ := dev["name"].(string); devName != "" {
				visit(name, devName, dev)
			}
		}
	}
}
