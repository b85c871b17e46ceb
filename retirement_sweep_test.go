package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A retirement deleted with its finalizer stripped (by an identity the
// guard lets through) leaves its OSD out or stopped: the sweep gives it
// back, started before it is marked in, and takes its marks off.
func TestTheSweepGivesBackWhatAStrippedRetirementLeft(t *testing.T) {
	for _, tc := range []struct {
		name  string
		phase cephv1alpha1.DiskRetirementPhase
		hold  func(*rookPlayer)
	}{
		{"marked out", cephv1alpha1.RetirementDraining, func(p *rookPlayer) { p.ceph.Stuck.Store(true) }},
		{"stopped", cephv1alpha1.RetirementStoppingOSD, func(p *rookPlayer) { p.osds.HoldStoppedPods.Store(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rook, disks := retirementCluster(t)
			tc.hold(rook)
			r := h.retire("stripped", disks["ret-2"]["/dev/sdb"].Name, "")
			r = h.waitRetirement("stripped", tc.phase)
			id := *r.Status.OSDID
			rook.osds.HoldStoppedPods.Store(false)

			patch := client.MergeFrom(r.DeepCopy())
			r.Finalizers = nil
			require.NoError(t, h.c.Patch(h.ctx, r, patch))
			require.NoError(t, client.IgnoreNotFound(h.c.Delete(context.Background(), r)))
			h.waitGone(r)

			h.eventually("the OSD is up and in, unmarked", func() error {
				d, err := h.osdDeployment(id)
				if err != nil {
					return err
				}
				_, up, in, _ := rook.ceph.OSD(int(id))
				_, annotated := d.Annotations[cephv1alpha1.RetirementAnnotation]
				if *d.Spec.Replicas != 1 || !up || !in || annotated || d.Labels["ceph.rook.io/do-not-reconcile"] != "" || len(h.cephJobs()) > 0 {
					return errNotYet
				}
				return nil
			})
			rook.check()
		})
	}
}
