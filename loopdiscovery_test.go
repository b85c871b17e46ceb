package main

import (
	"context"
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func discoverDaemonSet(ns string, env ...corev1.EnvVar) *appsv1.DaemonSet {
	labels := map[string]string{"app": RookDiscoverDaemonSet}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RookDiscoverDaemonSet},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "rook-discover", Image: "docker.io/rook/ceph:v1.18.0", Env: env}}},
			},
		},
	}
}

func TestDiscoveryMissesLoopDevices(t *testing.T) {
	tests := []struct {
		name string
		env  []corev1.EnvVar
		want bool
	}{
		{"built before Rook read its loop-device setting", []corev1.EnvVar{{Name: "POD_NAMESPACE"}}, true},
		{"loop devices allowed", []corev1.EnvVar{{Name: rookAllowLoopDevicesEnv, Value: "true"}}, false},
		{"explicitly not allowed still misses them", []corev1.EnvVar{{Name: rookAllowLoopDevicesEnv, Value: "false"}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DiscoveryMissesLoopDevices(discoverDaemonSet("ns", tc.env...)))
		})
	}
}

// TestLoopDiscoveryAsksRookToReapplyItsConfig: a discovery DaemonSet
// without loop devices makes the reconciler touch Rook's config ConfigMap,
// which is what makes Rook rebuild the DaemonSet; one with them is left alone.
func TestLoopDiscoveryAsksRookToReapplyItsConfig(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	ns := "loop-discovery"
	require.NoError(t, createNamespaceIfMissing(ctx, env.Client, ns))
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: RookOperatorConfigMap}, Data: map[string]string{"ROOK_CEPH_ALLOW_LOOP_DEVICES": "true"}}
	require.NoError(t, env.Client.Create(ctx, config))
	ds := discoverDaemonSet(ns)
	require.NoError(t, env.Client.Create(ctx, ds))
	r := &LoopDiscoveryReconciler{Client: env.Client, Namespace: ns}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(ds)}

	_, err := r.Reconcile(ctx, req)
	require.NoError(t, err)
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(config), config))
	assert.Equal(t, "1", config.Annotations[cephv1alpha1.ReconcileForLoopDevicesAnnotation], "Rook's config is touched, naming the DaemonSet generation")
	assert.Equal(t, "true", config.Data["ROOK_CEPH_ALLOW_LOOP_DEVICES"], "its settings are kept")

	ds.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: rookAllowLoopDevicesEnv, Value: "true"}}
	require.NoError(t, env.Client.Update(ctx, ds))
	rv := config.ResourceVersion
	_, err = r.Reconcile(ctx, req)
	require.NoError(t, err)
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(config), config))
	assert.Equal(t, rv, config.ResourceVersion, "nothing is written once Rook lists loop devices")
}
