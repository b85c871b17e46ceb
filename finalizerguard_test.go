package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// TestOnlyThePluginRemovesARetirementsFinalizer: with the guard applied
// for the plugin's identity, a console user allowed to patch
// DiskRetirements can confirm one but not strip its finalizer; the plugin
// can. The API server judges it (a ValidatingAdmissionPolicy).
func TestOnlyThePluginRemovesARetirementsFinalizer(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	require.NoError(t, retirement.ApplyFinalizerGuard(ctx, env.Client, fieldOwner))
	policy, binding := retirement.FinalizerGuardPolicy("")
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, policy) })
	require.NoError(t, retirement.ApplyFinalizerGuard(ctx, env.Client, fieldOwner), "applying it again changes nothing")

	const user = "console-user"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "guard-test-console"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{cephv1alpha1.GroupVersion.Group}, Resources: []string{"diskretirements"}, Verbs: []string{"get", "list", "patch", "update"},
	}}}
	bind := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "guard-test-console"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	for _, o := range []client.Object{role, bind} {
		require.NoError(t, env.Client.Create(ctx, o))
		t.Cleanup(func() { _ = env.Client.Delete(ctx, o) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	console, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(t, err)

	r := &cephv1alpha1.DiskRetirement{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Finalizers: []string{cephv1alpha1.RetirementFinalizer}},
		Spec:       cephv1alpha1.DiskRetirementSpec{Disk: "some-disk", Suspend: true},
	}
	require.NoError(t, env.Client.Create(ctx, r))
	t.Cleanup(func() {
		var left cephv1alpha1.DiskRetirement
		if env.Client.Get(ctx, client.ObjectKeyFromObject(r), &left) == nil {
			left.Finalizers = nil
			_ = env.Client.Update(ctx, &left)
			_ = env.Client.Delete(ctx, &left)
		}
	})

	strip := func(c client.Client) error {
		var cur cephv1alpha1.DiskRetirement
		if err := c.Get(ctx, client.ObjectKeyFromObject(r), &cur); err != nil {
			return err
		}
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Finalizers = nil
		return c.Patch(ctx, &cur, patch)
	}
	err = testenv.Eventually(ctx, 30*time.Second, func(context.Context) error {
		err := strip(console)
		if err == nil {
			// The policy was not in force yet (the API server loads it
			// asynchronously): put the finalizer back and try again.
			var cur cephv1alpha1.DiskRetirement
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &cur); err != nil {
				return err
			}
			cur.Finalizers = []string{cephv1alpha1.RetirementFinalizer}
			if err := env.Client.Update(ctx, &cur); err != nil {
				return err
			}
			return fmt.Errorf("the console user stripped the finalizer before the policy was in force")
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "only the ceph-rook plugin removes a DiskRetirement's finalizer") {
			return fmt.Errorf("%v", err)
		}
		return nil
	})
	require.NoError(t, err, "the policy denies the console user")

	var cur cephv1alpha1.DiskRetirement
	require.NoError(t, console.Get(ctx, client.ObjectKeyFromObject(r), &cur))
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Suspend = false
	require.NoError(t, console.Patch(ctx, &cur, patch), "confirming keeps the finalizer: allowed")

	require.NoError(t, strip(env.Client), "the plugin's identity removes it")
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(r), &cur))
	assert.Empty(t, cur.Finalizers)
}
