package cephjob

import (
	"context"
	"fmt"

	"github.com/fundament-oss/ceph-rook/internal/rook"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The I/O around Ceph Jobs that the retirement and the upgrade share:
// reading a Job's answer, deleting a Job once read, and the image every
// Ceph Job runs.

// Get reads owner's Ceph Job of namespace and its pods: the Job (nil when
// there is no such Job) and its answer. A Job of that name that is not
// owner's (created by someone else before the plugin's, which Create then
// took for its own) is not read: its answer is Foreign. Only the pods the
// Job itself controls answer: by the controller-uid label, and the
// controller reference the Job controller sets on its pods.
func Get(ctx context.Context, live client.Reader, namespace, name string, owner types.UID) (*batchv1.Job, Answer, error) {
	var job batchv1.Job
	err := live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &job)
	if apierrors.IsNotFound(err) {
		return nil, Answer{}, nil
	}
	if err != nil {
		return nil, Answer{}, fmt.Errorf("read Ceph Job %s: %w", name, err)
	}
	if !ownedBy(&job, owner) {
		return &job, Answer{Done: true, Foreign: true, Message: fmt.Sprintf("Job %s/%s is not the plugin's (its %s label and owner reference do not name %s): not read, and left as it is", namespace, name, OwnerLabel, owner)}, nil
	}
	var pods corev1.PodList
	// By the Job's UID, not its name: the pods of an earlier Job of the
	// same name (deleted, its pods not yet collected) are not this one's.
	if err := live.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, Answer{}, fmt.Errorf("list the pods of Ceph Job %s: %w", name, err)
	}
	var controlled []corev1.Pod
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == job.UID {
			controlled = append(controlled, p)
		}
	}
	return &job, Read(&job, controlled), nil
}

// ownedBy says job is owner's Ceph Job: labelled with owner's UID and
// owned by it, as Render makes it.
func ownedBy(job *batchv1.Job, owner types.UID) bool {
	if job.Labels[OwnerLabel] != string(owner) || job.Labels[rook.AppLabel] != App {
		return false
	}
	for _, ref := range job.OwnerReferences {
		if ref.UID == owner {
			return true
		}
	}
	return false
}

// Delete deletes owner's Ceph Job whose answer was read, with its pod; a
// Job of that name that is not owner's is left as it is (never delete what
// the plugin did not create), and one replaced since it was read is not
// deleted either (the UID precondition).
func Delete(ctx context.Context, c client.Client, live client.Reader, namespace, name string, owner types.UID) error {
	job, answer, err := Get(ctx, live, namespace, name, owner)
	if job == nil || err != nil || answer.Foreign {
		return err
	}
	return client.IgnoreNotFound(c.Delete(ctx, job, client.Preconditions{UID: &job.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground)))
}

// OperatorImage is the running Rook operator's image, which every Ceph
// Job runs (its ceph CLI matches the running Rook).
func OperatorImage(ctx context.Context, live client.Reader, operatorNamespace string) (string, error) {
	var operator appsv1.Deployment
	if err := live.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: rook.OperatorDeployment}, &operator); err != nil {
		return "", fmt.Errorf("read the Rook operator's image: %w", err)
	}
	if len(operator.Spec.Template.Spec.Containers) == 0 {
		return "", fmt.Errorf("deployment %s has no containers", rook.OperatorDeployment)
	}
	return operator.Spec.Template.Spec.Containers[0].Image, nil
}
