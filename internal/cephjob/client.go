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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The I/O around Ceph Jobs that the retirement and the upgrade share:
// reading a Job's answer, deleting a Job once read, and the image every
// Ceph Job runs.

// Get reads a Ceph Job of namespace and its pods: the Job (nil when
// there is no such Job) and its answer.
func Get(ctx context.Context, live client.Reader, namespace, name string) (*batchv1.Job, Answer, error) {
	var job batchv1.Job
	err := live.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &job)
	if apierrors.IsNotFound(err) {
		return nil, Answer{}, nil
	}
	if err != nil {
		return nil, Answer{}, fmt.Errorf("read Ceph Job %s: %w", name, err)
	}
	var pods corev1.PodList
	// By the Job's UID, not its name: the pods of an earlier Job of the
	// same name (deleted, its pods not yet collected) are not this one's.
	if err := live.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, Answer{}, fmt.Errorf("list the pods of Ceph Job %s: %w", name, err)
	}
	return &job, Read(&job, pods.Items), nil
}

// Delete deletes a Ceph Job whose answer was read, with its pod.
func Delete(ctx context.Context, c client.Client, namespace, name string) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return client.IgnoreNotFound(c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)))
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
