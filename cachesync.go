package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// defaultCacheSyncTimeout bounds Start's wait for the caches; it matches
// the time controller-runtime gives a controller's own watches to sync.
const defaultCacheSyncTimeout = 2 * time.Minute

// cacheSyncPoll is how often the wait looks at the informers again. A kind
// the API server does not serve is asked for again at this pace, one
// discovery request each time.
const cacheSyncPoll = 250 * time.Millisecond

// errManagerStopped is waitForCaches' answer when the manager's Start
// returned before the caches synced; the manager's own error says why.
var errManagerStopped = errors.New("the manager stopped before its caches synced")

// watchedKinds are the kinds the reconcilers of setupReconcilers watch or
// read through the manager's cache, so every one has an informer once they
// run. Start waits for all of them before it reports ready: a reconciler
// reading a kind whose informer has not synced would block, and one that
// can never sync (a CRD not served, RBAC that forbids the list) would
// leave the plugin ready and doing nothing.
func watchedKinds(cfg Config) []client.Object {
	cluster := newCephClusterObject()
	kinds := []client.Object{
		&corev1.ConfigMap{},            // discovery: the disk inventory's input
		&cephv1alpha1.Disk{},           // the pools' input
		&cephv1alpha1.DiskPool{},       // the inventory's claims, the union
		&cephv1alpha1.DiskRetirement{}, // the retirements
		cluster,                        // the union's target, the plugin's health
		&storagev1.StorageClass{},      // derived by every consumer
		nodeMetadata(),                 // whose reports the inventory publishes
		snapshotCRDMetadata(),          // the snapshot API arriving or going
		&coordinationv1.Lease{},        // the snapshot controller's, by name
		&appsv1.Deployment{},           // Rook's OSDs: the Disk each runs on
	}
	for _, kind := range consumerKinds {
		kinds = append(kinds, kind.NewObject(), kind.NewRookObject())
	}
	if cfg.DevLoopDevices {
		kinds = append(kinds, &appsv1.DaemonSet{}) // Rook's discovery DaemonSet
	}
	return kinds
}

// The VolumeSnapshotClass informer is not among the watched kinds: it
// starts only once the snapshot CRD serves v1 (snapshotClassWatch), and a
// cluster without snapshots must still become ready.

// snapshotCRDMetadata is a CRD as the consumers watch it: metadata only.
func snapshotCRDMetadata() client.Object {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return crd
}

// nodeMetadata is a Node as the inventory watches it: metadata only.
func nodeMetadata() client.Object {
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	return node
}

// kindName is the Kind of obj: its GroupVersionKind when set (unstructured
// objects), else its Go type's name, which is the Kind for API types.
func kindName(obj client.Object) string {
	if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind != "" {
		return kind
	}
	return reflect.TypeOf(obj).Elem().Name()
}

// waitForCaches waits until the informer of every kind in c has synced.
//
// It requests the informers only once cachesUp is closed, that is once the
// manager has started its cache and synced the informers registered before
// it started: an informer requested earlier joins the set the manager waits
// for before it starts anything else, and one that never syncs would then
// keep the manager from ever returning, even after its context ends
// (controller-runtime v0.25's runnableGroup.Start loops on a done context).
// Informers requested later start at once and are the same ones the
// controllers use.
//
// It returns nil when all have synced; errManagerStopped as soon as
// managerStopped is closed; ctx.Err() when ctx ends; and, after timeout, an
// error naming the kinds that did not sync (with why their informer could
// not be made, when that is what failed).
func waitForCaches(ctx context.Context, c cache.Cache, kinds []client.Object, timeout time.Duration, cachesUp, managerStopped <-chan struct{}) error {
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case <-cachesUp:
	case <-managerStopped:
		return errManagerStopped
	case <-waitCtx.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the manager's caches did not sync within %s", timeout)
	}
	informers := make([]cache.Informer, len(kinds))
	problems := make([]error, len(kinds))
	ticker := time.NewTicker(cacheSyncPoll)
	defer ticker.Stop()
	for {
		synced := true
		for i, kind := range kinds {
			if informers[i] == nil {
				// Not blocking: the wait is bounded here, not in GetInformer.
				informers[i], problems[i] = c.GetInformer(waitCtx, kind, cache.BlockUntilSynced(false))
			}
			synced = synced && informers[i] != nil && informers[i].HasSynced()
		}
		if synced {
			return nil
		}
		select {
		case <-ticker.C:
		case <-managerStopped:
			return errManagerStopped
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return unsyncedError(kinds, informers, problems, timeout)
		}
	}
}

// unsyncedError names, sorted, the kinds whose informer has not synced.
func unsyncedError(kinds []client.Object, informers []cache.Informer, problems []error, timeout time.Duration) error {
	var pending []string
	for i, kind := range kinds {
		switch {
		case informers[i] == nil:
			pending = append(pending, fmt.Sprintf("%s (%v)", kindName(kind), problems[i]))
		case !informers[i].HasSynced():
			pending = append(pending, kindName(kind))
		}
	}
	slices.Sort(pending)
	return fmt.Errorf("the caches of %s did not sync within %s: is each kind served, and may the plugin list and watch it?",
		strings.Join(pending, ", "), timeout)
}
