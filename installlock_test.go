package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestInstallLockSerialisesInstalls(t *testing.T) {
	env := controlPlane.Env(t)
	cfg := harnessConfig(t)
	ctx := context.Background()
	var running, overlaps, runs atomic.Int32
	install := func(context.Context) error {
		if running.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(100 * time.Millisecond)
		running.Add(-1)
		runs.Add(1)
		return nil
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			assert.NoError(t, withInstallLock(ctx, clientAsPlugin(t, env), configAsPlugin(t, env), cfg, install))
		})
	}
	wg.Wait()
	assert.Equal(t, int32(2), runs.Load(), "every instance installs")
	assert.Zero(t, overlaps.Load(), "never two at a time")

	var lease coordinationv1.Lease
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: cfg.OperatorNamespace, Name: installLockName}, &lease))
	assert.Empty(t, ptr.Deref(lease.Spec.HolderIdentity, ""), "the lock is given back after the install")
}

func TestInstallLockIsTakenOverFromADeadHolder(t *testing.T) {
	env := controlPlane.Env(t)
	cfg := harnessConfig(t)
	ctx := context.Background()
	require.NoError(t, createNamespaceIfMissing(ctx, env.Client, cfg.OperatorNamespace))
	now := metav1.NewMicroTime(time.Now())
	require.NoError(t, env.Client.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: cfg.OperatorNamespace, Name: installLockName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("killed-mid-install"), LeaseDurationSeconds: ptr.To(int32(2)),
			AcquireTime: &now, RenewTime: &now,
		},
	}))
	ran := false
	require.NoError(t, withInstallLock(ctx, clientAsPlugin(t, env), configAsPlugin(t, env), cfg, func(context.Context) error { ran = true; return nil }))
	assert.True(t, ran, "the install runs once the dead holder's lease expired")
}

func TestInstallLockIsNotTakenWithoutLeaderElection(t *testing.T) {
	env := controlPlane.Env(t)
	cfg := harnessConfig(t)
	cfg.LeaderElection = false
	ran := false
	require.NoError(t, withInstallLock(context.Background(), clientAsPlugin(t, env), configAsPlugin(t, env), cfg, func(context.Context) error { ran = true; return nil }))
	assert.True(t, ran)
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: cfg.OperatorNamespace, Name: installLockName}, &coordinationv1.Lease{})
	assert.True(t, apierrors.IsNotFound(err), "a single instance takes no lock: %v", err)
}

func TestInstallLockEndsWithTheContext(t *testing.T) {
	env := controlPlane.Env(t)
	cfg := harnessConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := withInstallLock(ctx, clientAsPlugin(t, env), configAsPlugin(t, env), cfg, func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
}
