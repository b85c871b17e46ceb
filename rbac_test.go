package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/plugincontroller"
	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// The plugin's own identity in tests: the ServiceAccount the platform's
// plugin controller gives it, bound to the ClusterRole the controller
// renders from definition.yaml's rules (RenderObjects, verbatim), so every
// test that starts the plugin runs it under exactly what the definition
// asks for, on an API server that enforces RBAC. The tests themselves act
// as the administrator (controlPlane.Env(t).Client): they play Rook, the kubelet and the
// user.
var (
	pluginIdentityMu sync.Mutex
	pluginIdentities = map[*testenv.Env]*rest.Config{}
)

// asPlugin is cp's configuration as the plugin's ServiceAccount, its RBAC
// objects created on cp the first time it is asked for.
func asPlugin(cp *testenv.Env) (*rest.Config, error) {
	pluginIdentityMu.Lock()
	defer pluginIdentityMu.Unlock()
	if cfg, ok := pluginIdentities[cp]; ok {
		return rest.CopyConfig(cfg), nil
	}
	objs := renderedPluginRBAC()
	ctx := context.Background()
	for _, o := range []client.Object{objs.Namespace, objs.RoleBinding, objs.ClusterRole, objs.ClusterRoleBinding} {
		// Nothing owns them here: the PluginInstallation they would name
		// does not exist, and the garbage collector would remove them.
		o.SetOwnerReferences(nil)
		if err := cp.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create the plugin's %T %s: %w", o, o.GetName(), err)
		}
	}
	cfg := rest.CopyConfig(cp.Config)
	ns := objs.ServiceAccount.Namespace
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + objs.ServiceAccount.Name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	pluginIdentities[cp] = cfg
	return rest.CopyConfig(cfg), nil
}

// renderedPluginRBAC is what the plugin controller makes of definition.yaml
// for an installation named ceph-rook.
func renderedPluginRBAC() plugincontroller.Objects {
	inst := &pluginsv1.PluginInstallation{ObjectMeta: metav1.ObjectMeta{Name: "ceph-rook", UID: types.UID("test")}}
	return plugincontroller.RenderObjects(plugincontroller.RenderInput{
		Installation: inst,
		Definition:   definition.MustParseDefinition(definitionYAML),
	})
}

// configAsPlugin is asPlugin for a test.
func configAsPlugin(t testing.TB, cp *testenv.Env) *rest.Config {
	t.Helper()
	cfg, err := asPlugin(cp)
	require.NoError(t, err)
	return cfg
}

// clientAsPlugin is a client of cp as the plugin's ServiceAccount.
func clientAsPlugin(t testing.TB, cp *testenv.Env) client.Client {
	t.Helper()
	c, err := client.New(configAsPlugin(t, cp), client.Options{Scheme: cp.Scheme})
	require.NoError(t, err)
	return c
}

// The plugin's ClusterRole names what it may do: no wildcard, no Secrets
// (the whole cluster's would be most of cluster-admin), escalate and bind
// on RBAC objects only. The API server agrees: the plugin cannot read a
// Secret, and can still create a role granting what it does not hold, as
// installing Rook's chart needs.
func TestThePluginHoldsNeitherWildcardsNorSecrets(t *testing.T) {
	env := controlPlane.Env(t)
	for _, r := range renderedPluginRBAC().ClusterRole.Rules {
		for _, field := range [][]string{r.APIGroups, r.Resources, r.Verbs} {
			assert.NotContains(t, field, "*", "rule %v", r)
		}
		assert.NotContains(t, r.Resources, "secrets", "rule %v", r)
		if slices.Contains(r.Verbs, "escalate") || slices.Contains(r.Verbs, "bind") {
			assert.Equal(t, []string{rbacv1.GroupName}, r.APIGroups, "escalate and bind on RBAC objects only: %v", r)
		}
	}

	ctx := context.Background()
	plugin := clientAsPlugin(t, env)
	err := plugin.List(ctx, &corev1.SecretList{}, client.InNamespace("default"))
	assert.True(t, apierrors.IsForbidden(err), "listing Secrets: %v", err)

	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-test-escalate"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}},
	}
	require.NoError(t, plugin.Create(ctx, role), "escalate: a role granting what the plugin does not hold")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, role) })
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-test-bind"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "nobody", Namespace: "default"}},
	}
	require.NoError(t, plugin.Create(ctx, binding), "bind: a binding to it")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding) })
}
