package simulate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OSDDeployment is the Deployment Rook v1.18.0 runs a host OSD in, with
// what the plugin reads of it as Rook writes it: the name
// rook-ceph-osd-<id>, the labels app=rook-ceph-osd and ceph-osd-id
// (pkg/operator/ceph/cluster/osd/labels.go), and in the first container's
// environment the node, the OSD's UUID and its block path, a raw-mode OSD's
// kernel device (envs.go, spec.go). Its status says its pod runs.
func OSDDeployment(namespace string, id int, node, blockPath string) *appsv1.Deployment {
	labels := map[string]string{"app": "rook-ceph-osd", "ceph-osd-id": strconv.Itoa(id), "topology-location-host": node, SimulatedLabel: "true"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-osd-" + strconv.Itoa(id), Namespace: namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rook-ceph-osd", "ceph-osd-id": strconv.Itoa(id)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{corev1.LabelHostname: node},
					Containers: []corev1.Container{{
						Name:  "osd",
						Image: "quay.io/ceph/ceph:v19.2.3",
						Env: []corev1.EnvVar{
							{Name: "ROOK_NODE_NAME", Value: node},
							{Name: "ROOK_OSD_UUID", Value: fmt.Sprintf("00000000-0000-4000-8000-%012d", id)},
							{Name: "ROOK_OSD_ID", Value: strconv.Itoa(id)},
							{Name: "ROOK_BLOCK_PATH", Value: blockPath},
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

// RunRemovalJob plays Rook's `ceph osd remove --osd-ids N` to its end, as
// pkg/daemon/ceph/osd/remove.go does it: an OSD whose pod still runs is
// "up" and skipped (the Job still succeeds); a stopped one is marked out,
// waited on until safe to destroy, its Deployment deleted and purged. ok
// false makes the Job fail instead, having removed nothing (what happens
// when Rook cannot reach the monitors). It writes the Job's final status
// as the Job controller would.
func RunRemovalJob(ctx context.Context, c client.Client, job *batchv1.Job, osdID int, ok bool) error {
	if ok {
		var d appsv1.Deployment
		err := c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: "rook-ceph-osd-" + strconv.Itoa(osdID)}, &d)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		case d.Status.Replicas == 0:
			if err := c.Delete(ctx, &d); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return FinishJob(ctx, c, job, ok)
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
