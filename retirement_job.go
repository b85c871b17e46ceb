package main

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rook's OSD removal Job, in the shape of Rook v1.18.0's
// deploy/examples/osd-purge.yaml: Rook's own image running `ceph osd
// remove`, under the rook-ceph-purge-osd ServiceAccount the operator chart
// creates in the cluster namespace, reading the mon endpoints and admin
// secret Rook keeps there. `--force-osd-removal false` makes it wait until
// Ceph says the OSD is safe to destroy (pkg/daemon/ceph/osd/remove.go).
const (
	purgeServiceAccount = "rook-ceph-purge-osd"
	purgeAppLabel       = "rook-ceph-purge-osd"
	// RetirementLabel names the DiskRetirement a removal Job belongs to.
	RetirementLabel = "ceph.fundament.io/retirement"
	// removalJobPrefix + OSD ID names the Job: one name per OSD, so the
	// API server itself refuses a second Job for the same OSD.
	removalJobPrefix = "ceph-rook-remove-osd-"
)

// RemovalJobName is the removal Job of an OSD.
func RemovalJobName(osdID int32) string {
	return removalJobPrefix + strconv.Itoa(int(osdID))
}

// RenderRemovalJob is the Job that removes osdID, run with rookImage (the
// operator's own image, so the ceph CLI matches the running Rook).
func RenderRemovalJob(namespace, retirement string, osdID int32, rookImage string) *batchv1.Job {
	labels := map[string]string{"app": purgeAppLabel, RetirementLabel: retirement}
	secretKey := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "rook-ceph-mon"}, Key: key}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: RemovalJobName(osdID), Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: purgeServiceAccount,
					RestartPolicy:      corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  "osd-removal",
						Image: rookImage,
						Args: []string{"ceph", "osd", "remove",
							"--preserve-pvc", "false",
							"--force-osd-removal", "false",
							"--osd-ids", strconv.Itoa(int(osdID))},
						Env: []corev1.EnvVar{
							{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "ROOK_MON_ENDPOINTS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "rook-ceph-mon-endpoints"}, Key: "data"}}},
							{Name: "ROOK_CEPH_USERNAME", ValueFrom: secretKey("ceph-username")},
							{Name: "ROOK_CONFIG_DIR", Value: "/var/lib/rook"},
							{Name: "ROOK_CEPH_CONFIG_OVERRIDE", Value: "/etc/rook/config/override.conf"},
							{Name: "ROOK_FSID", ValueFrom: secretKey("fsid")},
							{Name: "ROOK_LOG_LEVEL", Value: "DEBUG"},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "ceph-conf-emptydir", MountPath: "/etc/ceph"},
							{Name: "rook-config", MountPath: "/var/lib/rook"},
							{Name: "ceph-admin-secret", MountPath: "/var/lib/rook-ceph-mon"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "ceph-admin-secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName: "rook-ceph-mon", Optional: new(false),
							Items: []corev1.KeyToPath{{Key: "ceph-secret", Path: "secret.keyring"}},
						}}},
						{Name: "ceph-conf-emptydir", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "rook-config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}

// removalJobState reads a Job's conditions.
func removalJobState(job *batchv1.Job) JobState {
	if job == nil {
		return JobState{}
	}
	s := JobState{Exists: true, Retirement: job.Labels[RetirementLabel]}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			s.Succeeded = true
		case batchv1.JobFailed:
			s.Failed, s.Message = true, c.Reason+": "+c.Message
		}
	}
	return s
}
