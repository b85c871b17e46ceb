package cephjob

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// controlPlane is the package's API server, started by the first test
// that needs it.
var controlPlane = testenv.NewShared(testenv.Options{})

func TestMain(m *testing.M) { controlPlane.Main(m) }

// finish marks job done as the Job controller would, with a pod of it
// that ended with exit code and message; controlled says whether the pod
// carries the Job's controller reference, as the Job controller's pods do.
func finish(ctx context.Context, t *testing.T, c client.Client, job *batchv1.Job, pod string, code int32, message string, controlled bool) {
	t.Helper()
	now := metav1.Now()
	if len(job.Status.Conditions) == 0 {
		job.Status = batchv1.JobStatus{StartTime: &now, CompletionTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
		require.NoError(t, c.Status().Update(ctx, job))
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: job.Namespace, Labels: map[string]string{batchv1.ControllerUidLabel: string(job.UID)}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "ceph", Image: "rook/ceph"}}}}
	if controlled {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
	}
	require.NoError(t, c.Create(ctx, p))
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ceph", Image: "rook/ceph",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message}}}}
	require.NoError(t, c.Status().Update(ctx, p))
}

// N6: a Ceph Job's answer comes only from the owner's Job and the pods
// that Job controls; a Job of the name that someone else made first is
// neither read nor deleted.
func TestGetReadsOnlyTheOwnersJobAndItsPods(t *testing.T) {
	env := controlPlane.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-n6"}}
	require.NoError(t, c.Create(ctx, ns))

	owner := metav1.OwnerReference{APIVersion: "ceph.fundament.io/v1alpha1", Kind: "DiskRetirement", Name: "r", UID: types.UID("00000000-0000-4000-8000-0000000000aa")}
	req := Request{Verb: VerbOut, Seq: 1, OSDID: 3}
	ours := Render(ns.Name, owner, req, "rook/ceph")
	require.NoError(t, c.Create(ctx, ours))
	finish(ctx, t, c, ours, "ours", 0, "marked out osd.3.", true)
	finish(ctx, t, c, ours, "forged", 0, "marked out osd.3. (forged)", false)

	job, answer, err := Get(ctx, c, ns.Name, ours.Name, owner.UID)
	require.NoError(t, err)
	require.NotNil(t, job)
	assert.Equal(t, Answer{Done: true, Succeeded: true, Ran: true, Message: "marked out osd.3."}, answer, "the pod the Job does not control is not read")

	// Someone made a Job under the name the plugin would give another
	// owner's next Job, before the plugin did.
	other := metav1.OwnerReference{APIVersion: "ceph.fundament.io/v1alpha1", Kind: "DiskRetirement", Name: "s", UID: types.UID("00000000-0000-4000-8000-0000000000bb")}
	forged := Render(ns.Name, owner, Request{Verb: VerbZap, Seq: 2, OSDID: 3}, "rook/ceph")
	forged.Name = Name(other.UID, Request{Verb: VerbZap, Seq: 2})
	require.NoError(t, c.Create(ctx, forged))
	finish(ctx, t, c, forged, "forged-zap", 0, `wiped /dev/sdb (it held the OSD with UUID u)`, true)

	job, answer, err = Get(ctx, c, ns.Name, forged.Name, other.UID)
	require.NoError(t, err)
	require.NotNil(t, job)
	assert.True(t, answer.Foreign, "its owner label and reference name another")
	assert.False(t, answer.Succeeded)
	assert.False(t, answer.Ran)
	assert.Contains(t, answer.Message, "is not the plugin's")

	require.NoError(t, Delete(ctx, c, c, ns.Name, forged.Name, other.UID))
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(forged), &batchv1.Job{}), "a Job that is not the owner's is left as it is")

	require.NoError(t, Delete(ctx, c, c, ns.Name, ours.Name, owner.UID))
	var gone batchv1.Job
	err = c.Get(ctx, client.ObjectKeyFromObject(ours), &gone)
	assert.True(t, apierrors.IsNotFound(err) || !gone.DeletionTimestamp.IsZero(), "the owner's Job is deleted once read: %v", err)
}
