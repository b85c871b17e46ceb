package main

import (
	"context"
	"fmt"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/upgrade"
)

// retirementView is the plugin's view of the storage cluster as a
// retirement reads it (retirement.Cluster): the CephCluster's device list
// from the ClusterView, and what every consumer kind needs of the disks
// that remain.
type retirementView struct {
	view   *ClusterView
	client client.Client
	// live reads the CephCluster's upgrade annotations from the API
	// server: an upgrade writes them before it asks Ceph whether it may
	// take a step, and lists the retirements after, so a retirement that
	// reads them fresh before it touches anything never runs beside a
	// step (upgrade.UnderWay).
	live client.Reader
}

func (c retirementView) Read(ctx context.Context) (retirement.ClusterState, error) {
	cluster, err := c.view.ReadCephCluster(ctx)
	if err != nil {
		return nil, err
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephCluster"))
	if err := c.live.Get(ctx, c.view.Cluster, meta); err != nil {
		return nil, fmt.Errorf("read CephCluster %s: %w", c.view.Cluster, err)
	}
	return retirementViewRead{retirementView: c, cluster: cluster, upgrade: upgrade.UnderWay(meta.Annotations)}, nil
}

// retirementViewRead is one read of the CephCluster.
type retirementViewRead struct {
	retirementView
	cluster cephCluster
	upgrade string
}

func (s retirementViewRead) UpgradeUnderWay() string { return s.upgrade }

func (s retirementViewRead) Listed(d *cephv1alpha1.Disk) bool {
	return s.cluster.devices[DeviceIDOf(d)]
}

// PreflightInput is the shared OSD set without gone (with joining, a
// replacement that is not an OSD yet, counted as one) and every consumer's
// replication now.
func (s retirementViewRead) PreflightInput(ctx context.Context, gone, joining *cephv1alpha1.Disk) (retirement.PreflightInput, error) {
	union, err := s.view.ComputeUnion(ctx, s.cluster.devices)
	if err != nil {
		return retirement.PreflightInput{}, err
	}
	goneID := DeviceIDOf(gone)
	var after []*cephv1alpha1.Disk
	for _, d := range union.Disks {
		if DeviceIDOf(d) != goneID {
			after = append(after, d)
		}
	}
	if joining != nil {
		after = append(after, joining)
	}
	in := retirement.PreflightInput{After: roomByClass(TiersOf(after)), Before: roomByClass(union.Tiers)}
	for _, kind := range consumerKinds {
		consumers, err := kind.List(ctx, s.client)
		if err != nil {
			return retirement.PreflightInput{}, err
		}
		for _, c := range consumers {
			if !c.GetDeletionTimestamp().IsZero() {
				continue
			}
			// A refused consumer keeps the pools it has, and needs them.
			place, ok, err := kind.Kept(ctx, s.client, s.view.Cluster.Namespace, c, union.Tiers)
			if err != nil {
				return retirement.PreflightInput{}, err
			}
			if !ok {
				continue // refused before it had pools: it holds no data
			}
			name := kind.Kind() + " " + c.GetName()
			in.Consumers = append(in.Consumers, retirement.ConsumerNeed{Consumer: name, Size: place.Data.Size, Domain: place.Data.FailureDomain, Class: place.Data.DeviceClass})
			if place.Metadata.DeviceClass != place.Data.DeviceClass {
				in.Consumers = append(in.Consumers, retirement.ConsumerNeed{Consumer: name + "'s metadata", Size: place.Metadata.Size, Domain: place.Metadata.FailureDomain, Class: place.Metadata.DeviceClass})
			}
		}
	}
	return in, nil
}

// roomByClass is the hosts and OSDs of each tier present, and of every
// disk ("").
func roomByClass(t Tiers) map[cephv1alpha1.DiskType]retirement.Room {
	room := map[cephv1alpha1.DiskType]retirement.Room{"": {Hosts: t.All.Nodes, OSDs: t.All.OSDs}}
	for _, tier := range t.Present() {
		room[tier.Class] = retirement.Room{Hosts: tier.Nodes, OSDs: tier.OSDs}
	}
	return room
}
