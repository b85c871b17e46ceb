package retirement

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// retiringLabelValue is the value of Rook's do-not-reconcile label on an
// OSD the plugin stopped.
const retiringLabelValue = "retiring"

// OrphanAction is what the sweep does to one OSD Deployment.
type OrphanAction string

const (
	OrphanNone OrphanAction = ""
	// OrphanScaleUp starts the OSD again and lifts the label.
	OrphanScaleUp OrphanAction = "ScaleUp"
	// OrphanMarkIn runs a Ceph Job that marks the OSD in.
	OrphanMarkIn OrphanAction = "MarkIn"
	// OrphanRetryIn deletes a failed "in" Job, for another next time.
	OrphanRetryIn OrphanAction = "RetryIn"
	// OrphanDone takes the annotation off and deletes the "in" Job.
	OrphanDone OrphanAction = "Done"
)

// OrphanFacts is what the sweep knows of one OSD Deployment.
type OrphanFacts struct {
	// Annotated: it carries RetirementAnnotation; Stopped: the plugin's
	// do-not-reconcile label.
	Annotated, Stopped bool
	// Owned: an unfinished DiskRetirement has this OSD (its UID is the
	// annotation's, or its status names the OSD).
	Owned bool
	// Purging: a retirement asked Ceph to purge the OSD
	// (RetirementPurgeAnnotation): it may be gone from Ceph.
	Purging bool
	// In is the sweep's "in" Job: nil when there is none.
	In *cephjob.Answer
}

// SweepOSD decides the sweep's next action for one OSD Deployment: start
// it before marking it in (as an abort does), then take the annotation off.
// An OSD whose purge was asked is never given back: it may be gone from
// Ceph, and started again it would only crash-loop (the sweep warns).
func SweepOSD(f OrphanFacts) OrphanAction {
	switch {
	case f.Owned || !f.Annotated && !f.Stopped || f.Purging:
		return OrphanNone
	case f.Stopped:
		return OrphanScaleUp
	case f.In == nil:
		return OrphanMarkIn
	case !f.In.Done:
		return OrphanNone
	case !f.In.Succeeded:
		return OrphanRetryIn
	}
	return OrphanDone
}

// Sweeper runs the sweep every Timing.Sweep (and at start).
type Sweeper struct {
	Reconciler *Reconciler
	Log        *slog.Logger
}

func (s *Sweeper) Start(ctx context.Context) error {
	for {
		if err := s.sweep(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("sweep of half-done retirements", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.Reconciler.timing().Sweep):
		}
	}
}

// sweep gives back every OSD a retirement that is gone left touched.
func (s *Sweeper) sweep(ctx context.Context) error {
	r := s.Reconciler
	var list appsv1.DeploymentList
	if err := r.Live.List(ctx, &list, client.InNamespace(r.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp}); err != nil {
		return fmt.Errorf("list Rook's OSD Deployments: %w", err)
	}
	var rets cephv1alpha1.DiskRetirementList
	if err := r.Live.List(ctx, &rets); err != nil {
		return fmt.Errorf("list DiskRetirements: %w", err)
	}
	for i := range list.Items {
		d := &list.Items[i]
		f, err := s.facts(ctx, d, rets.Items)
		if err != nil {
			return err
		}
		if f.Purging && !f.Owned {
			s.Log.Warn("an OSD whose purge a retirement asked has no retirement any more: left stopped; delete its Deployment once `ceph osd tree` no longer lists it", "deployment", d.Name)
		}
		if err := s.act(ctx, d, SweepOSD(f)); err != nil {
			return fmt.Errorf("give back %s: %w", d.Name, err)
		}
	}
	return nil
}

func (s *Sweeper) facts(ctx context.Context, d *appsv1.Deployment, rets []cephv1alpha1.DiskRetirement) (OrphanFacts, error) {
	uid, annotated := d.Annotations[cephv1alpha1.RetirementAnnotation]
	_, purging := d.Annotations[cephv1alpha1.RetirementPurgeAnnotation]
	f := OrphanFacts{Annotated: annotated, Stopped: d.Labels[cephv1.SkipReconcileLabelKey] == retiringLabelValue, Purging: purging}
	if !f.Annotated && !f.Stopped {
		return f, nil
	}
	id, _ := strconv.ParseInt(d.Labels[rook.OSDIDLabel], 10, 32)
	for _, ret := range rets {
		if ret.Status.Phase.Finished() {
			continue
		}
		if string(ret.UID) == uid || ret.Status.OSDID != nil && int64(*ret.Status.OSDID) == id {
			f.Owned = true
		}
	}
	in, _, err := s.Reconciler.readCephJob(ctx, sweepInJobName(d), d.UID)
	if err != nil {
		return f, err
	}
	f.In = in
	return f, nil
}

// sweepInJobName is the sweep's "in" Job of an OSD Deployment.
func sweepInJobName(d *appsv1.Deployment) string {
	return cephjob.Name(d.UID, cephjob.Request{Verb: cephjob.VerbIn})
}

func (s *Sweeper) act(ctx context.Context, d *appsv1.Deployment, action OrphanAction) error {
	r := s.Reconciler
	id, _ := strconv.ParseInt(d.Labels[rook.OSDIDLabel], 10, 32)
	switch action {
	case OrphanScaleUp:
		s.Log.Warn("an OSD a retirement stopped has no retirement any more: starting it again", "deployment", d.Name)
		return r.scaleOSD(ctx, int32(id), 1)
	case OrphanMarkIn:
		s.Log.Warn("an OSD a retirement marked out has no retirement any more: marking it in", "deployment", d.Name)
		image, err := r.rookImage(ctx)
		if err != nil {
			return err
		}
		owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID}
		job := cephjob.Render(d.Namespace, owner, cephjob.Request{Verb: cephjob.VerbIn, OSDID: int32(id)}, image)
		return client.IgnoreAlreadyExists(r.Client.Create(ctx, job))
	case OrphanRetryIn:
		return r.deleteCephJob(ctx, sweepInJobName(d), d.UID)
	case OrphanDone:
		if err := r.annotateOSD(ctx, int32(id), cephv1alpha1.RetirementAnnotation, ""); err != nil {
			return err
		}
		return r.deleteCephJob(ctx, sweepInJobName(d), d.UID)
	}
	return nil
}
