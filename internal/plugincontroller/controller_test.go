package plugincontroller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

func TestInstallationCreatesExactlyItsObjects(t *testing.T) {
	env := controlPlane.Env(t)
	h := startController(t)
	ctx := context.Background()
	inst := h.install(t, "widgets", map[string]string{"REPLICAS": "5", "LOG_LEVEL": "debug"})
	deploy := deployedPlugin(t, inst)
	require.NoError(t, get(t, ctx, inst))
	ns := NamespaceName(inst.Name)
	scope := ScopeClusterRoleName(inst.Name)
	owned := func(t *testing.T, obj client.Object) {
		t.Helper()
		assert.Equal(t, ManagedByValue, obj.GetLabels()[LabelManagedBy], "%T labelled", obj)
		assert.Equal(t, inst.Name, obj.GetLabels()[LabelInstallation], "%T labelled", obj)
		assert.True(t, metav1.IsControlledBy(obj, inst), "%T %s is controlled by the installation", obj, obj.GetName())
	}

	t.Run("namespace", func(t *testing.T) {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		require.NoError(t, get(t, ctx, obj))
		owned(t, obj)
	})
	t.Run("exactly one service account, role binding, deployment and service, all named plugin", func(t *testing.T) {
		var sas corev1.ServiceAccountList
		var rbs rbacv1.RoleBindingList
		var deploys appsv1.DeploymentList
		var svcs corev1.ServiceList
		for _, list := range []client.ObjectList{&sas, &rbs, &deploys, &svcs} {
			require.NoError(t, env.Client.List(ctx, list, client.InNamespace(ns)))
			items, err := meta.ExtractList(list)
			require.NoError(t, err)
			require.Len(t, items, 1, "%T", list)
			obj := items[0].(client.Object)
			assert.Equal(t, "plugin", obj.GetName())
			owned(t, obj)
		}
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}, rbs.Items[0].RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "plugin", Namespace: ns}}, rbs.Items[0].Subjects)
		assert.Equal(t, []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}, svcs.Items[0].Spec.Ports)
	})
	t.Run("deployment runs the pinned image with the ids and config", func(t *testing.T) {
		pod := deploy.Spec.Template.Spec
		require.Len(t, pod.Containers, 1)
		c := pod.Containers[0]
		assert.Equal(t, "plugin", c.Name)
		assert.Equal(t, "plugin", pod.ServiceAccountName)
		assert.Equal(t, testImage, c.Image)
		assert.Equal(t, []corev1.EnvVar{
			{Name: "FUNDAMENT_CLUSTER_ID", Value: testCluster.ClusterID},
			{Name: "FUNDAMENT_INSTALL_ID", Value: string(inst.UID)},
			{Name: "FUNDAMENT_ORGANIZATION_ID", Value: testCluster.OrganizationID},
			{Name: "FUNDAMENT_TOKEN_ISSUER", Value: TokenIssuer},
			{Name: "FUNDAMENT_TOKEN_AUDIENCE", Value: inst.Name},
			{Name: "FUNDAMENT_TOKEN_PUBLIC_KEYS", Value: h.tokens.Trust().PublicKeysPEM},
			{Name: "FUNP_LOG_LEVEL", Value: "debug"},
			{Name: "FUNP_REPLICAS", Value: "5"},
		}, c.Env)
		assert.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path)
		assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
		assert.Equal(t, int32(8080), c.ReadinessProbe.HTTPGet.Port.IntVal)
		assert.NotEmpty(t, deploy.Spec.Template.Annotations[AnnotationConfigHash])
	})
	t.Run("cluster role copies the definition's rules, resourceNames preserved, and is bound to the plugin", func(t *testing.T) {
		var roles rbacv1.ClusterRoleList
		require.NoError(t, env.Client.List(ctx, &roles, client.MatchingLabels{LabelInstallation: inst.Name}))
		require.Len(t, roles.Items, 1)
		role := roles.Items[0]
		assert.Equal(t, scope, role.Name)
		owned(t, &role)
		assert.Equal(t, []rbacv1.PolicyRule{
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"settings", "other-settings"}, Verbs: []string{"get", "update"}},
		}, role.Rules)

		var bindings rbacv1.ClusterRoleBindingList
		require.NoError(t, env.Client.List(ctx, &bindings, client.MatchingLabels{LabelInstallation: inst.Name}))
		require.Len(t, bindings.Items, 1)
		binding := bindings.Items[0]
		assert.Equal(t, scope, binding.Name)
		owned(t, &binding)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scope}, binding.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "plugin", Namespace: ns}}, binding.Subjects)
	})
	t.Run("status names the namespace and says the plugin does not answer yet", func(t *testing.T) {
		status := statusOf(t, inst, "installing", func(s pluginsv1.PluginInstallationStatus) bool {
			return s.Namespace == ns && s.Phase == pluginsv1.PhaseInstalling
		})
		assert.False(t, status.Ready)
		assert.Equal(t, ReasonPluginUnreachable, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Reason)
		assert.Contains(t, status.Message, "the plugin does not answer")
	})
}

func TestRefusedInstallationsDeployNothing(t *testing.T) {
	env := controlPlane.Env(t)
	h := startController(t)
	ctx := context.Background()

	t.Run("a hash mismatch fails the installation, and fixing the hash deploys it", func(t *testing.T) {
		raw := publishedDefinition("mismatch", "1.0.0")
		h.publish(t, h.org, "mismatch", "1.0.0", raw)
		inst := &pluginsv1.PluginInstallation{
			ObjectMeta: metav1.ObjectMeta{Name: h.org + "--mismatch"},
			Spec:       pluginsv1.PluginInstallationSpec{DefinitionRef: refTo(h.org, "mismatch", "1.0.0", []byte("what was approved"))},
		}
		require.NoError(t, env.Client.Create(ctx, inst))
		t.Cleanup(func() { uninstall(t, inst) })
		status := statusOf(t, inst, "failed", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseFailed })
		assert.False(t, status.Ready)
		assert.Contains(t, status.Message, "hashes to "+definition.Hash(raw))
		assert.Contains(t, status.Message, "nothing is deployed")
		assert.Equal(t, ReasonDefinitionHashMismatch, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Reason)
		assert.Empty(t, status.Namespace)
		assertNothingDeployed(t, inst.Name)

		updateLatest(t, inst, func() { inst.Spec.DefinitionRef.DefinitionHash = definition.Hash(raw) })
		deployedPlugin(t, inst)
	})

	t.Run("a hash mismatch is fetched again, so a corrected registry deploys it unedited", func(t *testing.T) {
		approved := publishedDefinition("corrected", "1.0.0")
		// The registry first serves other bytes than the approved ones.
		h.publish(t, h.org, "corrected", "1.0.0", append(append([]byte(nil), approved...), "# republished\n"...))
		inst := &pluginsv1.PluginInstallation{
			ObjectMeta: metav1.ObjectMeta{Name: h.org + "--corrected"},
			Spec:       pluginsv1.PluginInstallationSpec{DefinitionRef: refTo(h.org, "corrected", "1.0.0", approved)},
		}
		require.NoError(t, env.Client.Create(ctx, inst))
		t.Cleanup(func() { uninstall(t, inst) })
		statusOf(t, inst, "failed", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseFailed })
		assertNothingDeployed(t, inst.Name)

		h.publish(t, h.org, "corrected", "1.0.0", approved)
		deployedPlugin(t, inst)
	})

	t.Run("an invalid name is rejected by the API server with the rule", func(t *testing.T) {
		raw := publishedDefinition("widgets", "1.0.0")
		inst := &pluginsv1.PluginInstallation{
			ObjectMeta: metav1.ObjectMeta{Name: h.org + "--gadgets"},
			Spec:       pluginsv1.PluginInstallationSpec{DefinitionRef: refTo(h.org, "widgets", "1.0.0", raw)},
		}
		err := env.Client.Create(ctx, inst)
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "invalid, got %v", err)
		assert.Contains(t, err.Error(), "metadata.name must equal <organizationName>--<pluginName>")
		assertNothingDeployed(t, inst.Name)
	})

	t.Run("a foreign object in the way fails the installation and is left alone", func(t *testing.T) {
		foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(h.org + "--squatted")}}
		require.NoError(t, env.Client.Create(ctx, foreign))
		inst := h.install(t, "squatted", nil)
		status := statusOf(t, inst, "failed", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseFailed })
		assert.Contains(t, status.Message, "Namespace "+foreign.Name+" exists and is not controlled by this installation")
		assert.Equal(t, ReasonObjectConflict, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Reason)

		require.NoError(t, env.Client.Delete(ctx, inst))
		eventually(t, "the installation is gone", func(ctx context.Context) error { return gone(t, ctx, inst) })
		require.NoError(t, get(t, ctx, foreign))
		assert.Nil(t, foreign.DeletionTimestamp, "someone else's namespace is not deleted")
	})
}

// assertNothingDeployed checks that no object of the installation exists.
func assertNothingDeployed(t *testing.T, installation string) {
	t.Helper()
	ctx := context.Background()
	assert.NoError(t, gone(t, ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(installation)}}))
	assert.NoError(t, gone(t, ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ScopeClusterRoleName(installation)}}))
	assert.NoError(t, gone(t, ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ScopeClusterRoleName(installation)}}))
	var deploys appsv1.DeploymentList
	require.NoError(t, controlPlane.Env(t).Client.List(ctx, &deploys, client.MatchingLabels{LabelInstallation: LabelValue(installation)}))
	assert.Empty(t, deploys.Items)
}

func TestStatusFollowsThePluginPhase(t *testing.T) {
	h := startController(t)
	inst := h.install(t, "phases", nil)
	plugin := h.runPlugin(t, deployedPlugin(t, inst))
	reason := func(s pluginsv1.PluginInstallationStatus) string {
		if c := meta.FindStatusCondition(s.Conditions, pluginsv1.ConditionReady); c != nil {
			return c.Reason
		}
		return ""
	}

	status := statusOf(t, inst, "installing, as the plugin says", func(s pluginsv1.PluginInstallationStatus) bool {
		return s.Phase == pluginsv1.PhaseInstalling && reason(s) == "PluginInstalling"
	})
	assert.False(t, status.Ready)

	close(plugin.release)
	status = statusOf(t, inst, "running", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseRunning })
	assert.True(t, status.Ready)
	assert.Equal(t, metav1.ConditionTrue, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Status)

	host := <-plugin.hosts
	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "the CRDs went missing"})
	status = statusOf(t, inst, "degraded", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseDegraded })
	assert.False(t, status.Ready)
	assert.Equal(t, "the CRDs went missing", status.Message)
	assert.Equal(t, "PluginDegraded", reason(status))
}

// TestHostilePluginAnswersStillWriteStatus: whatever a plugin answers,
// the installation's status can still be written, and says what happened.
// A message over the Ready condition's 32768 characters, or an object
// over the API server's limit, would otherwise fail every status write.
func TestHostilePluginAnswersStillWriteStatus(t *testing.T) {
	h := startController(t)
	t.Run("a message too long for the condition is stored truncated", func(t *testing.T) {
		inst := h.install(t, "chatty", nil)
		// 36000 characters, over the condition's 32768, in 48000 bytes,
		// within what the controller reads.
		said := strings.Repeat("éaa", 12000)
		h.servePlugin(t, deployedPlugin(t, inst).Namespace, statusHandler(statusPlugin{phase: "running", message: said}))

		status := statusOf(t, inst, "running, with the message stored", func(s pluginsv1.PluginInstallationStatus) bool {
			return s.Phase == pluginsv1.PhaseRunning && strings.HasPrefix(s.Message, "éaa")
		})
		assert.Less(t, len(status.Message), len(said))
		assert.True(t, utf8.ValidString(status.Message), "cut between characters")
		assert.Regexp(t, `… \(\d+ more bytes\)$`, status.Message)
		assert.Equal(t, status.Message, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Message)
	})
	t.Run("an answer too large to store is refused, and the refusal stored", func(t *testing.T) {
		inst := h.install(t, "flooding", nil)
		var sent atomic.Int64
		h.servePlugin(t, deployedPlugin(t, inst).Namespace, hugeStatusAnswer(4<<20, &sent))

		status := statusOf(t, inst, "the refusal", func(s pluginsv1.PluginInstallationStatus) bool {
			return strings.Contains(s.Message, "larger than configured max")
		})
		assert.Equal(t, ReasonPluginUnreachable, meta.FindStatusCondition(status.Conditions, pluginsv1.ConditionReady).Reason)
		assert.False(t, status.Ready)
	})
}

func TestDeletionUninstallsThenRemovesEverything(t *testing.T) {
	env := controlPlane.Env(t)
	h := startController(t)
	ctx := context.Background()

	t.Run("the plugin is asked to uninstall, then RBAC, namespace and finalizer go", func(t *testing.T) {
		inst := h.install(t, "leaving", nil)
		deploy := deployedPlugin(t, inst)
		plugin := h.runPlugin(t, deploy)
		close(plugin.release)
		statusOf(t, inst, "running", func(s pluginsv1.PluginInstallationStatus) bool { return s.Ready })

		require.NoError(t, env.Client.Delete(ctx, inst))
		select {
		case <-plugin.uninstalled:
		case <-time.After(30 * time.Second):
			t.Fatal("the plugin was not asked to uninstall")
		}
		assertRemoved(t, inst, deploy)
	})

	t.Run("a plugin that does not answer does not block deletion", func(t *testing.T) {
		inst := h.install(t, "silent", nil)
		deploy := deployedPlugin(t, inst)
		require.NoError(t, env.Client.Delete(ctx, inst))
		assertRemoved(t, inst, deploy)
	})
}

// assertRemoved waits for an installation's deletion to complete: the
// installation and its cluster-scoped RBAC gone, its namespace deleted
// (envtest has no namespace controller, so it may stay Terminating), and
// its namespaced objects collected by the garbage collector.
func assertRemoved(t *testing.T, inst *pluginsv1.PluginInstallation, deploy *appsv1.Deployment) {
	t.Helper()
	eventually(t, "the installation is gone", func(ctx context.Context) error { return gone(t, ctx, inst) })
	scope := ScopeClusterRoleName(inst.Name)
	ctx := context.Background()
	assert.NoError(t, gone(t, ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: scope}}))
	assert.NoError(t, gone(t, ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: scope}}))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(inst.Name)}}
	if err := get(t, ctx, ns); !apierrors.IsNotFound(err) {
		require.NoError(t, err)
		assert.NotNil(t, ns.DeletionTimestamp, "the namespace's deletion was requested")
	}
	eventually(t, "the garbage collector removes the owned Deployment", func(ctx context.Context) error { return gone(t, ctx, deploy) })
}

func TestConfigEditRollsTheDeployment(t *testing.T) {
	h := startController(t)
	inst := h.install(t, "configured", map[string]string{"TIER": "fast"})
	deploy := deployedPlugin(t, inst)
	oldHash := deploy.Spec.Template.Annotations[AnnotationConfigHash]

	updateLatest(t, inst, func() { inst.Spec.Config = map[string]string{"TIER": "cheap", "DEBUG": "true"} })

	eventually(t, "the Deployment has the new FUNP_ variables", func(ctx context.Context) error {
		if err := get(t, ctx, deploy); err != nil {
			return err
		}
		env := deploy.Spec.Template.Spec.Containers[0].Env
		want := []corev1.EnvVar{{Name: "FUNP_DEBUG", Value: "true"}, {Name: "FUNP_TIER", Value: "cheap"}}
		if len(env) != 8 || !assert.ObjectsAreEqual(want, env[6:]) {
			return fmt.Errorf("env is %v", env)
		}
		return nil
	})
	assert.NotEqual(t, oldHash, deploy.Spec.Template.Annotations[AnnotationConfigHash], "the pod template changed, so the Deployment rolls")
}

func TestDriftIsRepairedAndConvergenceWritesNothing(t *testing.T) {
	h := startController(t)
	ctx := context.Background()
	inst := h.install(t, "drifting", map[string]string{"TIER": "fast"})
	deploy := deployedPlugin(t, inst)
	ns := NamespaceName(inst.Name)
	scope := ScopeClusterRoleName(inst.Name)
	statusOf(t, inst, "observed", func(s pluginsv1.PluginInstallationStatus) bool { return s.Namespace == ns })

	t.Run("a converged installation causes no writes", func(t *testing.T) {
		objs := []client.Object{
			&pluginsv1.PluginInstallation{ObjectMeta: metav1.ObjectMeta{Name: inst.Name}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}},
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}},
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: scope}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: scope}},
		}
		versions := func() map[string]string {
			out := map[string]string{}
			for _, obj := range objs {
				require.NoError(t, get(t, ctx, obj))
				out[fmt.Sprintf("%T", obj)] = obj.GetResourceVersion()
			}
			return out
		}
		before := versions()
		time.Sleep(10 * testPollInterval) // ten polls
		assert.Equal(t, before, versions())
	})

	t.Run("edited env is restored", func(t *testing.T) {
		require.NoError(t, get(t, ctx, deploy))
		patched := deploy.DeepCopy()
		c := &patched.Spec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "FUNP_SNEAKY", Value: "1"})
		c.Image = "registry.example.com/other:latest"
		require.NoError(t, controlPlane.Env(t).Client.Patch(ctx, patched, client.MergeFrom(deploy)))
		eventually(t, "the Deployment is repaired", func(ctx context.Context) error {
			if err := get(t, ctx, deploy); err != nil {
				return err
			}
			c := deploy.Spec.Template.Spec.Containers[0]
			if c.Image != testImage || len(c.Env) != 7 {
				return fmt.Errorf("image %s, env %v", c.Image, c.Env)
			}
			return nil
		})
	})

	t.Run("a widened cluster role is narrowed again", func(t *testing.T) {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: scope}}
		require.NoError(t, get(t, ctx, role))
		want := role.DeepCopy().Rules
		updateLatest(t, role, func() {
			role.Rules[1].ResourceNames = nil
			role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
		})
		eventually(t, "the ClusterRole is repaired", func(ctx context.Context) error {
			if err := get(t, ctx, role); err != nil {
				return err
			}
			if !assert.ObjectsAreEqual(want, role.Rules) {
				return fmt.Errorf("rules %v", role.Rules)
			}
			return nil
		})
	})

	t.Run("a deleted role binding is recreated", func(t *testing.T) {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}}
		require.NoError(t, get(t, ctx, rb))
		oldUID := rb.UID
		require.NoError(t, controlPlane.Env(t).Client.Delete(ctx, rb))
		eventually(t, "the RoleBinding is back", func(ctx context.Context) error {
			if err := get(t, ctx, rb); err != nil {
				return err
			}
			if rb.UID == oldUID {
				return errors.New("still the old binding")
			}
			return nil
		})
	})

	t.Run("a service stripped of the controller's labels is found and relabelled", func(t *testing.T) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plugin"}}
		require.NoError(t, get(t, ctx, svc))
		patched := svc.DeepCopy()
		delete(patched.Labels, LabelManagedBy)
		patched.Labels["team"] = "storage"
		require.NoError(t, controlPlane.Env(t).Client.Patch(ctx, patched, client.MergeFrom(svc)))
		// Out of the controller's cache now, so only the next poll sees it.
		eventually(t, "the Service is relabelled", func(ctx context.Context) error {
			if err := get(t, ctx, svc); err != nil {
				return err
			}
			if svc.Labels[LabelManagedBy] != ManagedByValue {
				return fmt.Errorf("labels %v", svc.Labels)
			}
			return nil
		})
		assert.Equal(t, "storage", svc.Labels["team"], "labels others add are kept")
	})
}

// TestCephRooksOwnDefinitionDeploys installs this repository's
// definition.yaml the way the platform does: published under its version
// without the "v", pinned by an installation the CRD accepts.
func TestCephRooksOwnDefinitionDeploys(t *testing.T) {
	h := startController(t)
	source, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "definition.yaml"))
	require.NoError(t, err)
	// Publishing injects the digest-pinned image.
	raw := []byte(strings.Replace(string(source), "\nspec:\n", "\nspec:\n  image: "+testImage+"\n", 1))
	def, err := definition.ParseDefinition(raw, definition.RequireImage())
	require.NoError(t, err)
	version := def.Metadata.PublishedVersion()
	require.NotEqual(t, def.Metadata.Version, version, "the definition carries the release tag's v")

	h.publish(t, h.org, def.Metadata.Name, version, raw)
	inst := &pluginsv1.PluginInstallation{
		ObjectMeta: metav1.ObjectMeta{Name: h.org + "--" + def.Metadata.Name},
		Spec:       pluginsv1.PluginInstallationSpec{DefinitionRef: refTo(h.org, def.Metadata.Name, version, raw)},
	}
	require.NoError(t, controlPlane.Env(t).Client.Create(context.Background(), inst), "the CRD accepts the published version %q", version)
	t.Cleanup(func() { uninstall(t, inst) })
	deployedPlugin(t, inst)
	status := statusOf(t, inst, "not failed", func(s pluginsv1.PluginInstallationStatus) bool { return s.Namespace != "" })
	assert.NotEqual(t, pluginsv1.PhaseFailed, status.Phase, status.Message)
}

// updateLatest reads obj, applies edit and updates it, again on a
// Conflict: the controller writes the same objects (finalizers, status,
// repairs), and an edit on a stale read would fail under load.
func updateLatest(t *testing.T, obj client.Object, edit func()) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := get(t, context.Background(), obj); err != nil {
			return err
		}
		edit()
		return controlPlane.Env(t).Client.Update(context.Background(), obj)
	}))
}

// TestPollsCarryATokenForTheirInstallation: what the controller sends
// with every poll is a token that the plugin's check, configured from the
// Deployment's own environment, accepts.
func TestPollsCarryATokenForTheirInstallation(t *testing.T) {
	h := startController(t)
	inst := h.install(t, "guarded", nil)
	deploy := deployedPlugin(t, inst)
	var seen atomic.Value // the last poll's Authorization header
	status := statusHandler(statusPlugin{phase: "running"})
	h.servePlugin(t, deploy.Namespace, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization"))
		status.ServeHTTP(w, r)
	}))
	statusOf(t, inst, "running", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseRunning })

	header, _ := seen.Load().(string)
	token, ok := strings.CutPrefix(header, "Bearer ")
	require.True(t, ok, "a bearer token, not %q", header)
	claims, err := validatorFromEnv(t, deploy.Spec.Template.Spec.Containers[0].Env, time.Now()).Validate(context.Background(), token)
	require.NoError(t, err)
	assert.Equal(t, []string{inst.Name}, []string(claims.Audience))
}

// TestANewSigningKeyRollsTheDeployment: a controller restarted with
// another key (its Secret replaced) puts the new public key into the
// running plugin's Deployment, and the plugin, run with it, accepts the
// new key's tokens.
func TestANewSigningKeyRollsTheDeployment(t *testing.T) {
	h := startController(t)
	inst := h.install(t, "rekeyed", nil)
	deploy := deployedPlugin(t, inst)
	oldKey := h.tokens.Trust().PublicKeysPEM
	require.Equal(t, oldKey, envValue(t, deploy.Spec.Template.Spec.Containers[0].Env, pluginruntime.EnvTokenPublicKeys))

	h.restart(t, newTestSigner(t))
	newKey := h.tokens.Trust().PublicKeysPEM
	require.NotEqual(t, oldKey, newKey)
	eventually(t, "the Deployment has the new public key", func(ctx context.Context) error {
		if err := get(t, ctx, deploy); err != nil {
			return err
		}
		if got := envValue(t, deploy.Spec.Template.Spec.Containers[0].Env, pluginruntime.EnvTokenPublicKeys); got != newKey {
			return fmt.Errorf("public key is still %q", got)
		}
		return nil
	})
	close(h.runPlugin(t, deploy).release)
	statusOf(t, inst, "running under the new key", func(s pluginsv1.PluginInstallationStatus) bool { return s.Phase == pluginsv1.PhaseRunning })
}
