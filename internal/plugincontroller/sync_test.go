package plugincontroller

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

func TestCovers(t *testing.T) {
	tests := []struct {
		name    string
		desired any
		live    any
		want    bool
	}{
		{"equal values cover", map[string]any{"a": "x"}, map[string]any{"a": "x"}, true},
		{"fields desired leaves out are the server's", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": 1}, true},
		{"a changed value does not cover", map[string]any{"a": "x"}, map[string]any{"a": "y"}, false},
		{"a missing value does not cover", map[string]any{"a": "x"}, map[string]any{}, false},
		{"a longer list does not cover", []string{"a"}, []string{"a", "b"}, false},
		{"a shorter list does not cover", []string{"a", "b"}, []string{"a"}, false},
		{"an empty list is covered by none", []string{}, nil, true},
		{"an empty map asks for nothing", map[string]string{}, nil, true},
		{"false is a value", map[string]any{"a": false}, map[string]any{"a": true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Covers(tc.desired, tc.live))
		})
	}
}

// defaulted is what the API server makes of a rendered Deployment.
func defaulted(d *appsv1.Deployment) *appsv1.Deployment {
	live := d.DeepCopy()
	live.UID = "live-uid"
	live.ResourceVersion = "7"
	live.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	live.Spec.RevisionHistoryLimit = ptrTo[int32](10)
	live.Spec.ProgressDeadlineSeconds = ptrTo[int32](600)
	spec := &live.Spec.Template.Spec
	spec.RestartPolicy = corev1.RestartPolicyAlways
	spec.DNSPolicy = corev1.DNSClusterFirst
	spec.SchedulerName = "default-scheduler"
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo[int64](30)
	}
	c := &spec.Containers[0]
	c.TerminationMessagePath = "/dev/termination-log"
	c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		p.HTTPGet.Scheme = corev1.URISchemeHTTP
		p.TimeoutSeconds, p.PeriodSeconds, p.SuccessThreshold, p.FailureThreshold = 1, 10, 1, 3
	}
	return live
}

func TestSyncDeployment(t *testing.T) {
	inst, def := testInstallation(map[string]string{"REPLICAS": "5"})
	desired := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster, Tokens: testTokens.Trust()}).Deployment
	setEnv := func(l *appsv1.Deployment, name, value string) {
		env := l.Spec.Template.Spec.Containers[0].Env
		i := slices.IndexFunc(env, func(e corev1.EnvVar) bool { return e.Name == name })
		require.GreaterOrEqual(t, i, 0, "%s is rendered", name)
		env[i].Value = value
	}
	tests := []struct {
		name  string
		drift func(live *appsv1.Deployment)
		want  syncAction
	}{
		{name: "server defaults are not drift", drift: func(*appsv1.Deployment) {}, want: inSync},
		{name: "labels others add are not drift", drift: func(l *appsv1.Deployment) { l.Labels["team"] = "storage" }, want: inSync},
		{name: "a removed label of ours is drift", drift: func(l *appsv1.Deployment) { delete(l.Labels, LabelManagedBy) }, want: patchLive},
		{name: "an edited env value is drift", drift: func(l *appsv1.Deployment) { setEnv(l, "FUNP_REPLICAS", "9") }, want: patchLive},
		{name: "another public key is drift", drift: func(l *appsv1.Deployment) {
			setEnv(l, pluginruntime.EnvTokenPublicKeys, newTestSigner(t).Trust().PublicKeysPEM)
		}, want: patchLive},
		{name: "another audience is drift", drift: func(l *appsv1.Deployment) { setEnv(l, pluginruntime.EnvTokenAudience, "acme--gadgets") }, want: patchLive},
		{name: "an added env var is drift", drift: func(l *appsv1.Deployment) {
			c := &l.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "FUNP_EXTRA", Value: "1"})
		}, want: patchLive},
		{name: "another image is drift", drift: func(l *appsv1.Deployment) { l.Spec.Template.Spec.Containers[0].Image = "evil:latest" }, want: patchLive},
		{name: "scaling up is drift", drift: func(l *appsv1.Deployment) { l.Spec.Replicas = ptrTo[int32](3) }, want: patchLive},
		{name: "a rolling update strategy is drift", drift: func(l *appsv1.Deployment) {
			l.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
		}, want: patchLive},
		{name: "another selector needs a new deployment", drift: func(l *appsv1.Deployment) {
			l.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
		}, want: recreate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := defaulted(desired)
			tc.drift(live)
			got := syncDeployment(desired, live)
			assert.Equal(t, tc.want, got)
			if got == patchLive {
				assert.Equal(t, inSync, syncDeployment(desired, live), "after the patch the live object is in sync")
				assert.Equal(t, desired.Spec.Template.Spec.Containers[0].Env, live.Spec.Template.Spec.Containers[0].Env)
				assert.Equal(t, "7", live.ResourceVersion, "metadata not ours is kept")
			}
		})
	}
}

func TestSyncService(t *testing.T) {
	inst, def := testInstallation(nil)
	desired := RenderObjects(RenderInput{Installation: inst, Definition: def}).Service
	tests := []struct {
		name  string
		drift func(live *corev1.Service)
		want  syncAction
	}{
		{name: "an allocated cluster IP is not drift", drift: func(l *corev1.Service) {
			l.Spec.ClusterIP, l.Spec.ClusterIPs = "10.0.0.7", []string{"10.0.0.7"}
			l.Spec.SessionAffinity = corev1.ServiceAffinityNone
		}, want: inSync},
		{name: "an extra selector label is drift", drift: func(l *corev1.Service) { l.Spec.Selector["tier"] = "x" }, want: patchLive},
		{name: "another target port is drift", drift: func(l *corev1.Service) { l.Spec.Ports[0].TargetPort = intstr.FromInt32(9090) }, want: patchLive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := desired.DeepCopy()
			tc.drift(live)
			assert.Equal(t, tc.want, syncService(desired, live))
			assert.Equal(t, inSync, syncService(desired, live))
		})
	}
}

func TestSyncRBAC(t *testing.T) {
	inst, def := testInstallation(nil)
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def})
	t.Run("cluster role", func(t *testing.T) {
		tests := []struct {
			name  string
			drift func(live *rbacv1.ClusterRole)
			want  syncAction
		}{
			{name: "the same rules are in sync", drift: func(*rbacv1.ClusterRole) {}, want: inSync},
			{name: "an added rule is drift", drift: func(l *rbacv1.ClusterRole) {
				l.Rules = append(l.Rules, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
			}, want: patchLive},
			{name: "dropped resourceNames are drift (they widen the rule)", drift: func(l *rbacv1.ClusterRole) { l.Rules[1].ResourceNames = nil }, want: patchLive},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				live := objs.ClusterRole.DeepCopy()
				tc.drift(live)
				assert.Equal(t, tc.want, syncClusterRole(objs.ClusterRole, live))
				assert.Equal(t, objs.ClusterRole.Rules, live.Rules)
			})
		}
	})
	t.Run("a binding to another role needs a new binding", func(t *testing.T) {
		live := objs.ClusterRoleBinding.DeepCopy()
		live.RoleRef.Name = "cluster-admin"
		assert.Equal(t, recreate, syncClusterRoleBinding(objs.ClusterRoleBinding, live))
		rb := objs.RoleBinding.DeepCopy()
		rb.RoleRef.Name = "cluster-admin"
		assert.Equal(t, recreate, syncRoleBinding(objs.RoleBinding, rb))
	})
	t.Run("an added subject is drift", func(t *testing.T) {
		live := objs.RoleBinding.DeepCopy()
		live.Subjects = append(live.Subjects, rbacv1.Subject{Kind: "User", Name: "mallory"})
		assert.Equal(t, patchLive, syncRoleBinding(objs.RoleBinding, live))
		assert.Equal(t, objs.RoleBinding.Subjects, live.Subjects)
	})
}
