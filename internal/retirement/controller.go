package retirement

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// retirementPoll is how often an unfinished retirement looks again: what it
// waits on (an OSD pod stopping, Rook's Job, Rook making a replacement an
// OSD) lives in namespaces and kinds the plugin's cache does not hold, and
// retirements are few.
const retirementPoll = 5 * time.Second

// retirementOwner is a DiskRetirement as the owner of its Ceph Jobs.
func retirementOwner(ret *cephv1alpha1.DiskRetirement) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: cephv1alpha1.GroupVersion.String(), Kind: "DiskRetirement", Name: ret.Name, UID: ret.UID}
}

// Reconciler carries out DiskRetirements: it gathers the
// facts (retirementFacts), lets Next decide, writes the
// status the step names and then takes its one action.
type Reconciler struct {
	Client client.Client
	// Live reads what the cache does not hold (Rook's OSD Deployments and
	// pods, the Ceph Jobs), straight from the API server.
	Live client.Reader
	// Cluster is the rest of the plugin as a retirement reads it.
	Cluster Cluster
	// ClusterNamespace is where Rook runs Ceph (and the Ceph Jobs run);
	// OperatorNamespace where the Rook operator runs.
	ClusterNamespace, OperatorNamespace string
	// Recorder announces each phase in an Event on the DiskRetirement.
	Recorder events.EventRecorder
	// Timing is how the retirement waits on Ceph; zero is
	// DefaultTiming.
	Timing Timing
	// Clock is the time a retirement is judged at; SetupWithManager sets
	// the real one when none is given.
	Clock clock.PassiveClock
}

// Cluster is what a retirement reads of the rest of the plugin, once per
// look: whether the CephCluster lists a disk, and what the consumers need
// of the cluster. The plugin implements it over its ClusterView and its
// consumer kinds.
type Cluster interface {
	Read(ctx context.Context) (ClusterState, error)
}

// ClusterState is one read of the Cluster.
type ClusterState interface {
	// Listed says whether the CephCluster lists d's device.
	Listed(d *cephv1alpha1.Disk) bool
	// UpgradeUnderWay says what an upgrade does that a retirement must
	// not start beside (a step about to be taken, a roll), "" when
	// nothing; read fresh from the API server.
	UpgradeUnderWay() string
	// PreflightInput is the consumers' checks' input for taking gone out
	// of the cluster, with joining (a replacement that is not an OSD yet;
	// nil: none) counted in.
	PreflightInput(ctx context.Context, gone, joining *cephv1alpha1.Disk) (PreflightInput, error)
}

func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("diskretirement").
		For(&cephv1alpha1.DiskRetirement{}).
		Complete(r)
}

func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ret cephv1alpha1.DiskRetirement
	if err := r.Client.Get(ctx, req.NamespacedName, &ret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ret.DeletionTimestamp.IsZero() && !ret.Status.Phase.Finished() && !controllerutil.ContainsFinalizer(&ret, cephv1alpha1.RetirementFinalizer) {
		base := client.MergeFrom(ret.DeepCopy())
		controllerutil.AddFinalizer(&ret, cephv1alpha1.RetirementFinalizer)
		if err := r.Client.Patch(ctx, &ret, base); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	facts, err := r.gather(ctx, &ret)
	if err != nil {
		return ctrl.Result{}, err
	}
	next := Next(facts)
	if err := r.writeStatus(ctx, &ret, next.Status); err != nil {
		return ctrl.Result{}, err
	}
	if facts.Answer != nil && next.Status.CephJob != facts.Status.CephJob {
		// Its answer is in the status now: the Job and its pod can go.
		if err := r.deleteCephJob(ctx, facts.Status.CephJob, ret.UID); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.act(ctx, &ret, facts, next); err != nil {
		if next.Action == ActCephJob && refusedForGood(err) {
			return r.jobRefused(ctx, &ret, facts, next, err)
		}
		return ctrl.Result{}, fmt.Errorf("%s for DiskRetirement %s: %w", next.Action, ret.Name, err)
	}
	if retirementWaitsOnNothingOutside(next) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: min(retirementPoll, r.timing().Poll)}, nil
}

// refusedForGood: the API server refused a create for what it is (invalid,
// forbidden by admission or policy), not for the moment: retrying the same
// create would be refused again, for ever.
func refusedForGood(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err)
}

// jobRefused reads a Ceph Job the API server refused as a Job that failed
// at once: the step that asked decides again with that answer (a refusal
// before anything was touched, an abort after), instead of asking for ever.
func (r *Reconciler) jobRefused(ctx context.Context, ret *cephv1alpha1.DiskRetirement, facts Facts, asked Step, err error) (ctrl.Result, error) {
	facts.Status = asked.Status
	facts.Answer = &cephjob.Answer{Done: true, Message: fmt.Sprintf("Kubernetes refused Ceph Job %s: %v", asked.Status.CephJob, err)}
	facts.Verb, facts.Ceph, facts.CephJobMissing = asked.Request.Verb, nil, false
	next := Next(facts)
	if next.Action == ActCephJob {
		// The step asks again (an abort's "in"): wait before it does.
		next.Action, next.Status.CephJob = ActNone, ""
	}
	if err := r.writeStatus(ctx, ret, next.Status); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.act(ctx, ret, facts, next); err != nil {
		return ctrl.Result{}, fmt.Errorf("%s for DiskRetirement %s: %w", next.Action, ret.Name, err)
	}
	return ctrl.Result{RequeueAfter: r.timing().Poll}, nil
}

// timing is r.Timing, DefaultTiming for what it leaves zero.
func (r *Reconciler) timing() Timing {
	t, d := r.Timing, DefaultTiming
	for _, f := range []struct{ v, def *time.Duration }{{&t.Poll, &d.Poll}, {&t.Stall, &d.Stall}, {&t.Sweep, &d.Sweep}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// retirementWaitsOnNothingOutside: a terminal phase with nothing left to
// give back, or a suspended one, which waits for its own spec (the watch
// brings that) and computes its checks afresh when confirmed; polling it
// would compute the union every few seconds for a preview nobody may
// still be looking at.
func retirementWaitsOnNothingOutside(s Step) bool {
	if s.Status.Phase == cephv1alpha1.RetirementSuspended {
		return s.Action == ActNone
	}
	return s.Status.Phase.Finished() && !s.Status.OSDStopped && (s.Action == ActNone || s.Action == ActRelease)
}

// gather reads every fact Next decides on.
func (r *Reconciler) gather(ctx context.Context, ret *cephv1alpha1.DiskRetirement) (Facts, error) {
	f := Facts{
		Name: ret.Name, UID: ret.UID, DiskName: ret.Spec.Disk, ReplacementName: ret.Spec.Replacement,
		Status: ret.Status, Deleting: !ret.DeletionTimestamp.IsZero(), Suspend: ret.Spec.Suspend, Acknowledge: ret.Spec.Acknowledge,
		Now: r.Clock.Now(), Timing: r.timing(),
	}
	if err := r.gatherAnswer(ctx, &f); err != nil {
		return f, err
	}
	disk, err := r.disk(ctx, ret.Spec.Disk)
	if err != nil {
		return f, err
	}
	f.Disk = disk
	if disk == nil {
		// Its Disk is gone (the device left its node for good): a
		// retirement that touched the OSD still ends what it began.
		if f.Status.OSDID != nil {
			f.Deployment, f.DeploymentUnreadable, err = r.osdDeployment(ctx, *f.Status.OSDID)
		}
		return f, err
	}
	cluster, err := r.Cluster.Read(ctx)
	if err != nil {
		return f, err
	}
	f.Listed, f.Upgrade = cluster.Listed(disk), cluster.UpgradeUnderWay()
	var all cephv1alpha1.DiskRetirementList
	// Read from the API server, not the cache: the retirement ahead wrote
	// its phase before it touched anything, and a cache that has not seen
	// that write would let two run at once.
	if err := r.Live.List(ctx, &all); err != nil {
		return f, fmt.Errorf("list DiskRetirements: %w", err)
	}
	f.Queue = QueueOf(ret, all.Items)
	osds, unreadable, err := r.osds(ctx)
	if err != nil {
		return f, err
	}
	nodePaths, err := r.nodePaths(ctx, disk.Status.NodeName)
	if err != nil {
		return f, err
	}
	f.Lookup = FindOSD(disk, osds, nodePaths, unreadable)
	if f.Status.DeviceLabel != "" {
		f.Lookup = FindOSDByLabel(disk, osds, f.Status.DeviceLabel)
	}
	if err := r.gatherReplacement(ctx, &f, cluster, osds, nodePaths, unreadable); err != nil {
		return f, err
	}
	id := f.Status.OSDID
	if id == nil && f.Lookup.OSD != nil {
		id = &f.Lookup.OSD.ID
	}
	if id != nil {
		if f.Deployment, f.DeploymentUnreadable, err = r.osdDeployment(ctx, *id); err != nil {
			return f, err
		}
	}
	if f.Status.Phase == cephv1alpha1.RetirementWiping && f.Status.Node != "" {
		if f.PrepareRunning, err = r.prepareRunning(ctx, f.Status.Node); err != nil {
			return f, err
		}
	}
	if untouchedPhase(f.Status.Phase) && f.Lookup.OSD != nil {
		if f.Preflight, err = preflight(ctx, cluster, disk, f.joining()); err != nil {
			return f, err
		}
	}
	return f, nil
}

// joining is a replacement that is not an OSD yet, which the consumers'
// checks count as one (a suspended retirement's preview).
func (f Facts) joining() *cephv1alpha1.Disk {
	if f.ReplacementJoined {
		return nil // already in the union
	}
	return f.Replacement
}

// gatherAnswer reads the Ceph Job the status names: missing, running, or
// done with its answer (a probe's parsed).
func (r *Reconciler) gatherAnswer(ctx context.Context, f *Facts) error {
	if f.Status.CephJob == "" {
		return nil
	}
	answer, verb, err := r.readCephJob(ctx, f.Status.CephJob, f.UID)
	switch {
	case err != nil:
		return err
	case answer == nil:
		f.CephJobMissing = true
		return nil
	case !answer.Done:
		return nil
	}
	f.Answer, f.Verb = answer, verb
	if f.Verb == cephjob.VerbProbe && answer.Succeeded {
		facts, err := cephjob.ParseFacts(answer.Message)
		if err != nil {
			f.Answer.Succeeded, f.Answer.Message = false, err.Error()
			return nil
		}
		f.Ceph = &facts
	}
	return nil
}

// readCephJob reads owner's Ceph Job of the cluster namespace and its
// pods: its answer (nil when there is no such Job) and its verb, the one
// its name says (a foreign Job's labels are not read).
func (r *Reconciler) readCephJob(ctx context.Context, name string, owner types.UID) (*cephjob.Answer, cephjob.Verb, error) {
	job, answer, err := cephjob.Get(ctx, r.Live, r.ClusterNamespace, name, owner)
	if job == nil || err != nil {
		return nil, "", err
	}
	verb, _, _ := cephjob.ParseName(name)
	return &answer, verb, nil
}

// deleteCephJob deletes owner's Ceph Job whose answer was read, with its
// pod; never a Job that is not owner's.
func (r *Reconciler) deleteCephJob(ctx context.Context, name string, owner types.UID) error {
	return cephjob.Delete(ctx, r.Client, r.Live, r.ClusterNamespace, name, owner)
}

func (r *Reconciler) disk(ctx context.Context, name string) (*cephv1alpha1.Disk, error) {
	if name == "" {
		return nil, nil
	}
	var d cephv1alpha1.Disk
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &d)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Disk %s: %w", name, err)
	}
	return &d, nil
}

// osds reads Rook's OSD Deployments: the parsed ones, and the names of
// those that cannot be read.
func (r *Reconciler) osds(ctx context.Context) ([]rook.OSD, []string, error) {
	var list appsv1.DeploymentList
	if err := r.Live.List(ctx, &list, client.InNamespace(r.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp}); err != nil {
		return nil, nil, fmt.Errorf("list Rook's OSD Deployments: %w", err)
	}
	var osds []rook.OSD
	var unreadable []string
	for i := range list.Items {
		osd, err := rook.ParseOSDDeployment(&list.Items[i])
		if err != nil {
			unreadable = append(unreadable, list.Items[i].Name)
			continue
		}
		osds = append(osds, osd)
	}
	return osds, unreadable, nil
}

// osdDeployment reads Rook's Deployment of OSD id by name: nil when it is
// gone, and why when it exists but cannot be read.
func (r *Reconciler) osdDeployment(ctx context.Context, id int32) (*rook.OSD, string, error) {
	var d appsv1.Deployment
	err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.ClusterNamespace, Name: rook.OSDDeploymentName(id)}, &d)
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read Deployment %s: %w", rook.OSDDeploymentName(id), err)
	}
	osd, err := rook.ParseOSDDeployment(&d)
	if err != nil {
		return nil, err.Error(), nil
	}
	if osd.ID != id {
		return nil, fmt.Sprintf("deployment %s is labelled osd.%d", d.Name, osd.ID), nil
	}
	// status.replicas leaves out pods that are terminating: an OSD whose
	// pod still shuts down is still running.
	var pods corev1.PodList
	if err := r.Live.List(ctx, &pods, client.InNamespace(r.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp, rook.OSDIDLabel: strconv.Itoa(int(id))}); err != nil {
		return nil, "", fmt.Errorf("list osd.%d's pods: %w", id, err)
	}
	osd.Running = max(osd.Running, int32(len(pods.Items)))
	return &osd, "", nil
}

// prepareRunning names a Rook OSD prepare pod on node that has not ended,
// "" when there is none.
func (r *Reconciler) prepareRunning(ctx context.Context, node string) (string, error) {
	var pods corev1.PodList
	if err := r.Live.List(ctx, &pods, client.InNamespace(r.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDPrepareApp}); err != nil {
		return "", fmt.Errorf("list Rook's OSD prepare pods: %w", err)
	}
	for _, p := range pods.Items {
		onNode := p.Spec.NodeName == node || p.Spec.NodeSelector[corev1.LabelHostname] == node
		if onNode && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return p.Name, nil
		}
	}
	return "", nil
}

// nodePaths are the kernel and stable paths of every Disk on node.
func (r *Reconciler) nodePaths(ctx context.Context, node string) (map[string]bool, error) {
	var disks cephv1alpha1.DiskList
	if err := r.Client.List(ctx, &disks, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list Disks: %w", err)
	}
	paths := map[string]bool{}
	for i := range disks.Items {
		s := disks.Items[i].Status
		if s.NodeName != node {
			continue
		}
		for _, p := range []string{s.Path, s.StablePath} {
			if p != "" {
				paths[p] = true
			}
		}
	}
	return paths, nil
}

func (r *Reconciler) gatherReplacement(ctx context.Context, f *Facts, cluster ClusterState, osds []rook.OSD, nodePaths map[string]bool, unreadable []string) error {
	if f.ReplacementName == "" {
		return nil
	}
	repl, err := r.disk(ctx, f.ReplacementName)
	if err != nil || repl == nil {
		return err
	}
	f.Replacement = repl
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: f.Disk.Status.ClaimedBy}, &pool); err != nil {
		return client.IgnoreNotFound(err)
	}
	f.ReplacementInPool = slices.Contains(pool.Spec.Disks, repl.Name)
	if cluster.Listed(repl) {
		paths := nodePaths
		if repl.Status.NodeName != f.Disk.Status.NodeName {
			if paths, err = r.nodePaths(ctx, repl.Status.NodeName); err != nil {
				return err
			}
		}
		f.ReplacementOSD = FindOSD(repl, osds, paths, unreadable).OSD
		f.ReplacementJoined = f.ReplacementOSD != nil
	}
	return nil
}

// preflight runs the consumers' checks for taking disk out of the
// cluster, joining counted in.
func preflight(ctx context.Context, cluster ClusterState, disk, joining *cephv1alpha1.Disk) ([]cephv1alpha1.PreflightCheck, error) {
	in, err := cluster.PreflightInput(ctx, disk, joining)
	if err != nil {
		return nil, err
	}
	return Preflight(in), nil
}

// writeStatus writes the step's status when it differs from the stored one.
func (r *Reconciler) writeStatus(ctx context.Context, ret *cephv1alpha1.DiskRetirement, status cephv1alpha1.DiskRetirementStatus) error {
	status.ObservedGeneration = ret.Generation
	status.Message = message.Bound(status.Message)
	if equality.Semantic.DeepEqual(ret.Status, status) {
		return nil
	}
	before := ret.Status.Phase
	if err := r.Client.Status().Patch(ctx, ret, patch.Status(status)); err != nil {
		return fmt.Errorf("write DiskRetirement %s status: %w", ret.Name, err)
	}
	if status.Phase != before {
		eventType := corev1.EventTypeNormal
		if status.Phase == cephv1alpha1.RetirementRefused || status.Phase == cephv1alpha1.RetirementFailed {
			eventType = corev1.EventTypeWarning
		}
		// The phase is the Event's reason: each phase is announced once,
		// as it is entered.
		r.Recorder.Eventf(ret, nil, eventType, string(status.Phase), "Retire", "%s", status.Message)
	}
	return nil
}

// act takes the step's action.
func (r *Reconciler) act(ctx context.Context, ret *cephv1alpha1.DiskRetirement, f Facts, s Step) error {
	switch s.Action {
	case ActAddReplacement:
		return r.addReplacement(ctx, s.Status.Pool, ret.Spec.Replacement)
	case ActScaleDown:
		return r.scaleOSD(ctx, *s.Status.OSDID, 0)
	case ActScaleUp:
		return r.scaleOSD(ctx, *s.Status.OSDID, 1)
	case ActCephJob:
		return r.createCephJob(ctx, ret, s.Request, f.Deployment)
	case ActDeleteDeployment:
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: r.ClusterNamespace, Name: f.Deployment.Deployment}}
		return client.IgnoreNotFound(r.Client.Delete(ctx, d))
	case ActMarkRetired:
		mark := "no-osd"
		if s.Status.OSDID != nil {
			mark = fmt.Sprintf("osd.%d", *s.Status.OSDID)
		}
		disk := f.Disk // read for this reconcile: ours to change
		if disk == nil {
			return nil // gone: nothing left to mark, its device left the list with it
		}
		base := client.MergeFrom(disk.DeepCopy())
		if disk.Annotations == nil {
			disk.Annotations = map[string]string{}
		}
		disk.Annotations[cephv1alpha1.RetiredAnnotation] = mark
		return r.Client.Patch(ctx, disk, base)
	case ActRelease:
		if s.Status.OSDID != nil && (s.Status.Phase == cephv1alpha1.RetirementFailed || s.Status.Phase == cephv1alpha1.RetirementCancelled) {
			// Given back: the OSD is no longer this retirement's.
			for _, annotation := range []string{cephv1alpha1.RetirementAnnotation, cephv1alpha1.RetirementPurgeAnnotation} {
				if err := r.annotateOSD(ctx, *s.Status.OSDID, annotation, ""); err != nil {
					return err
				}
			}
		}
		base := client.MergeFrom(ret.DeepCopy())
		if controllerutil.RemoveFinalizer(ret, cephv1alpha1.RetirementFinalizer) {
			return client.IgnoreNotFound(r.Client.Patch(ctx, ret, base))
		}
	}
	return nil
}

// addReplacement appends the replacement to the pool's spec.disks, with an
// optimistic lock so an edit made meanwhile is not overwritten.
func (r *Reconciler) addReplacement(ctx context.Context, poolName, replacement string) error {
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: poolName}, &pool); err != nil {
		return err
	}
	if slices.Contains(pool.Spec.Disks, replacement) {
		return nil
	}
	base := client.MergeFromWithOptions(pool.DeepCopy(), client.MergeFromWithOptimisticLock{})
	pool.Spec.Disks = append(pool.Spec.Disks, replacement)
	return r.Client.Patch(ctx, &pool, base)
}

// scaleOSD stops (replicas 0) or starts (1) an OSD's Deployment. A stopped
// one carries Rook's do-not-reconcile label meanwhile: Rook's OSD update
// re-applies every OSD Deployment with one replica on each CephCluster
// reconcile, except those labelled so (pkg/operator/ceph/cluster/osd
// update.go, controller.GetDaemonsToSkipReconcile).
func (r *Reconciler) scaleOSD(ctx context.Context, id int32, replicas int32) error {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = r.ClusterNamespace, rook.OSDDeploymentName(id)
	var label any // nil: the label goes
	if replicas == 0 {
		label = retiringLabelValue
	}
	body := patch.Merge(map[string]any{
		"metadata": map[string]any{"labels": map[string]any{cephv1.SkipReconcileLabelKey: label}},
		"spec":     map[string]any{"replicas": replicas},
	})
	return client.IgnoreNotFound(r.Client.Patch(ctx, d, body))
}

// createCephJob creates a Ceph Job for ret with the Rook operator's image,
// or for a node verb (which reads and wipes BlueStore labels) the image of
// the OSD's own Deployment when there is one: the tools of the Ceph that
// wrote the label, whatever the operator's image carries (Rook v1.18.11's
// is Ceph 19.2.3, older than a cluster moved on to Ceph 20).
func (r *Reconciler) createCephJob(ctx context.Context, ret *cephv1alpha1.DiskRetirement, req cephjob.Request, osd *rook.OSD) error {
	image, err := r.rookImage(ctx)
	if err != nil {
		return err
	}
	if cephjob.NodeVerb(req.Verb) && osd != nil && osd.Image != "" {
		image = osd.Image
	}
	switch req.Verb {
	case cephjob.VerbOut:
		// Before the OSD is out: whatever becomes of this retirement, the
		// sweep can find what it changed.
		if err := r.annotateOSD(ctx, req.OSDID, cephv1alpha1.RetirementAnnotation, string(ret.UID)); err != nil {
			return err
		}
	case cephjob.VerbPurge:
		// Before the purge: the sweep never starts an OSD that may be gone.
		if err := r.annotateOSD(ctx, req.OSDID, cephv1alpha1.RetirementPurgeAnnotation, string(ret.UID)); err != nil {
			return err
		}
	}
	job := cephjob.Render(r.ClusterNamespace, retirementOwner(ret), req, image)
	return client.IgnoreAlreadyExists(r.Client.Create(ctx, job))
}

// rookImage is the running Rook operator's image.
func (r *Reconciler) rookImage(ctx context.Context) (string, error) {
	return cephjob.OperatorImage(ctx, r.Live, r.OperatorNamespace)
}

// annotateOSD puts annotation (uid) on an OSD's Deployment, or takes it
// off ("").
func (r *Reconciler) annotateOSD(ctx context.Context, id int32, annotation, uid string) error {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = r.ClusterNamespace, rook.OSDDeploymentName(id)
	var value any // nil: the annotation goes
	if uid != "" {
		value = uid
	}
	body := patch.Merge(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annotation: value}}})
	return client.IgnoreNotFound(r.Client.Patch(ctx, d, body))
}
