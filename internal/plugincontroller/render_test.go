package plugincontroller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

var testCluster = ClusterIdentity{ClusterID: "cluster-7", OrganizationID: "org-42"}

func testInstallation(config map[string]string) (*pluginsv1.PluginInstallation, *definition.PluginDefinition) {
	raw := publishedDefinition("widgets", "1.2.3")
	def := definition.MustParseDefinition(raw, definition.RequireImage())
	return &pluginsv1.PluginInstallation{
		ObjectMeta: metav1.ObjectMeta{Name: "acme--widgets", UID: types.UID("uid-1")},
		Spec: pluginsv1.PluginInstallationSpec{
			DefinitionRef: refTo("acme", "widgets", "1.2.3", raw),
			Config:        config,
		},
	}, def
}

func TestRenderObjectsNamesLabelsAndOwners(t *testing.T) {
	inst, def := testInstallation(nil)
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster})
	tests := []struct {
		name          string
		obj           client.Object
		wantNamespace string
		wantName      string
	}{
		{"namespace is plugin-<installation>", objs.Namespace, "", "plugin-acme--widgets"},
		{"service account is plugin in the namespace", objs.ServiceAccount, "plugin-acme--widgets", "plugin"},
		{"role binding is plugin in the namespace", objs.RoleBinding, "plugin-acme--widgets", "plugin"},
		{"deployment is plugin in the namespace", objs.Deployment, "plugin-acme--widgets", "plugin"},
		{"service is plugin in the namespace", objs.Service, "plugin-acme--widgets", "plugin"},
		{"cluster role is plugin-<installation>-scope", objs.ClusterRole, "", "plugin-acme--widgets-scope"},
		{"cluster role binding is named as its role", objs.ClusterRoleBinding, "", "plugin-acme--widgets-scope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantNamespace, tc.obj.GetNamespace())
			assert.Equal(t, tc.wantName, tc.obj.GetName())
			want := map[string]string{LabelManagedBy: ManagedByValue, LabelInstallation: "acme--widgets"}
			if tc.obj == objs.Namespace {
				want["pod-security.kubernetes.io/enforce"] = "restricted"
				want["pod-security.kubernetes.io/enforce-version"] = "latest"
			}
			assert.Equal(t, want, tc.obj.GetLabels())
			owner := metav1.GetControllerOf(tc.obj)
			require.NotNil(t, owner, "controlled by the installation")
			assert.Equal(t, metav1.OwnerReference{
				APIVersion: "plugins.fundament.io/v1", Kind: "PluginInstallation", Name: "acme--widgets", UID: "uid-1",
				Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true),
			}, *owner)
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestRenderObjectsRBAC(t *testing.T) {
	inst, def := testInstallation(nil)
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster})
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "plugin", Namespace: "plugin-acme--widgets"}}

	t.Run("the plugin is admin of its own namespace", func(t *testing.T) {
		assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}, objs.RoleBinding.RoleRef)
		assert.Equal(t, subject, objs.RoleBinding.Subjects)
	})
	t.Run("cluster role copies permissions.rbac verbatim, resourceNames included", func(t *testing.T) {
		assert.Equal(t, []rbacv1.PolicyRule{
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings", "other-settings"}, Verbs: []string{"get", "update"}},
		}, objs.ClusterRole.Rules)
		objs.ClusterRole.Rules[0].Verbs[0] = "changed"
		assert.Equal(t, "get", def.Spec.Permissions.RBAC[0].Verbs[0], "the rules are a copy, not the definition's slices")
	})
	t.Run("a definition without rbac gives an empty cluster role", func(t *testing.T) {
		bare := *def
		bare.Spec.Permissions.RBAC = nil
		assert.Empty(t, RenderObjects(RenderInput{Installation: inst, Definition: &bare}).ClusterRole.Rules)
	})
	t.Run("cluster role binding grants the scope role to the plugin", func(t *testing.T) {
		assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "plugin-acme--widgets-scope"}, objs.ClusterRoleBinding.RoleRef)
		assert.Equal(t, subject, objs.ClusterRoleBinding.Subjects)
	})
}

func TestRenderDeploymentAndService(t *testing.T) {
	inst, def := testInstallation(map[string]string{"REPLICAS": "5", "LOG_LEVEL": "debug"})
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster, Tokens: testTokens.Trust()})
	deploy := objs.Deployment.Spec
	require.Len(t, deploy.Template.Spec.Containers, 1)
	c := deploy.Template.Spec.Containers[0]

	assert.Equal(t, int32(1), *deploy.Replicas)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, deploy.Strategy.Type, "never two plugins at once")
	assert.Equal(t, map[string]string{LabelName: "plugin", LabelInstallation: "acme--widgets"}, deploy.Selector.MatchLabels)
	for k, v := range deploy.Selector.MatchLabels {
		assert.Equal(t, v, deploy.Template.Labels[k], "the template carries selector label %s", k)
	}
	assert.Equal(t, "plugin", deploy.Template.Spec.ServiceAccountName)
	assert.Equal(t, "plugin", c.Name)
	assert.Equal(t, testImage, c.Image, "the definition's digest-pinned image")
	assert.Equal(t, corev1.PullIfNotPresent, c.ImagePullPolicy)
	assert.Equal(t, []corev1.EnvVar{
		{Name: "FUNDAMENT_CLUSTER_ID", Value: "cluster-7"},
		{Name: "FUNDAMENT_INSTALL_ID", Value: "uid-1"},
		{Name: "FUNDAMENT_ORGANIZATION_ID", Value: "org-42"},
		{Name: "FUNDAMENT_TOKEN_ISSUER", Value: "plugin-controller.plugins.fundament.io"},
		{Name: "FUNDAMENT_TOKEN_AUDIENCE", Value: "acme--widgets"},
		{Name: "FUNDAMENT_TOKEN_PUBLIC_KEYS", Value: testTokens.Trust().PublicKeysPEM},
		{Name: "FUNP_LOG_LEVEL", Value: "debug"},
		{Name: "FUNP_REPLICAS", Value: "5"},
	}, c.Env)
	assert.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, intstr.FromInt32(8080), c.LivenessProbe.HTTPGet.Port)
	assert.Equal(t, intstr.FromInt32(8080), c.ReadinessProbe.HTTPGet.Port)
	assert.Equal(t, []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}, c.Ports)
	assert.Equal(t, ConfigHash(inst.Spec.DefinitionRef.DefinitionHash, inst.Spec.Config), deploy.Template.Annotations[AnnotationConfigHash])

	svc := objs.Service.Spec
	assert.Equal(t, deploy.Selector.MatchLabels, svc.Selector, "the Service selects the plugin's pods")
	assert.Equal(t, []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}, svc.Ports)
}

func TestConfigHash(t *testing.T) {
	base := ConfigHash("sha256:aa", map[string]string{"A": "1", "B": "2"})
	tests := []struct {
		name     string
		defHash  string
		config   map[string]string
		wantSame bool
	}{
		{"same definition and config hash the same", "sha256:aa", map[string]string{"B": "2", "A": "1"}, true},
		{"a changed value rolls", "sha256:aa", map[string]string{"A": "1", "B": "3"}, false},
		{"an added key rolls", "sha256:aa", map[string]string{"A": "1", "B": "2", "C": ""}, false},
		{"a removed key rolls", "sha256:aa", map[string]string{"A": "1"}, false},
		{"a new definition rolls", "sha256:bb", map[string]string{"A": "1", "B": "2"}, false},
		{"keys and values cannot be shifted into each other", "sha256:aa", map[string]string{"A": "1B2"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantSame, ConfigHash(tc.defHash, tc.config) == base)
		})
	}
}
