package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// installLockName is the Lease every plugin instance holds while it
// installs. It is not the manager's leader Lease: during a rolling update the
// new instance installs while the old one still leads.
const installLockName = "ceph-rook-plugin-install"

// The install lock's timing: a holder that died (SIGKILL, node loss) is
// taken over after installLockDuration.
const (
	installLockDuration = 15 * time.Second
	installLockRenew    = 10 * time.Second
	installLockRetry    = 2 * time.Second
)

// withInstallLock runs install while holding the install Lease, so that one
// instance installs at a time. That is what lets the Helm release be
// installed exclusively (a revision left pending was left by an instance that
// died mid-install, and is recovered at once rather than after Helm's
// timeout). With leader election off the plugin is the only instance by
// configuration, and needs no lock. Losing the Lease mid-install cancels the
// install's context.
func withInstallLock(ctx context.Context, c client.Client, restCfg *rest.Config, cfg Config, install func(context.Context) error) error {
	if !cfg.LeaderElection {
		return install(ctx)
	}
	// The Lease lives in the operator namespace, which Helm would create.
	if err := createNamespaceIfMissing(ctx, c, cfg.OperatorNamespace); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("install lock: %w", err)
	}
	host, _ := os.Hostname()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.OperatorNamespace, Name: installLockName},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: host + "_" + rand.String(8)},
	}
	lockCtx, release := context.WithCancel(ctx)
	defer release()
	started, installed := make(chan struct{}), make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            installLockName,
		LeaseDuration:   installLockDuration,
		RenewDeadline:   installLockRenew,
		RetryPeriod:     installLockRetry,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				close(started)
				installed <- install(ctx)
				release() // done: give the lock back
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return fmt.Errorf("install lock: %w", err)
	}
	elector.Run(lockCtx)
	select {
	case <-started:
	default:
		// Never acquired: the plugin is stopping.
		return errors.Join(errors.New("waiting for the install lock"), ctx.Err())
	}
	// Run returns when the install released the lock, or when the lock was
	// lost or ctx ended, which cancels the install's context: either way
	// the install returns.
	err = <-installed
	if err == nil && ctx.Err() == nil {
		return nil
	}
	if ctx.Err() == nil && lockCtx.Err() == nil {
		return errors.Join(errors.New("lost the install lock"), err)
	}
	return err
}
