package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// retirementFinalizer holds a DiskRetirement's deletion until what it
// stopped is given back, or its Job has finished.
const retirementFinalizer = "ceph.fundament.io/retirement"

// retirementPoll is how often an unfinished retirement looks again: what it
// waits on (an OSD pod stopping, Rook's Job, Rook making a replacement an
// OSD) lives in namespaces and kinds the plugin's cache does not hold, and
// retirements are few.
const retirementPoll = 5 * time.Second

// rookOperatorDeployment runs the operator; the removal Job uses its image.
const rookOperatorDeployment = "rook-ceph-operator"

// DiskRetirementReconciler carries out DiskRetirements: it gathers the
// facts (retirementFacts), lets NextRetirementStep decide, writes the
// status the step names and then takes its one action.
type DiskRetirementReconciler struct {
	Client client.Client
	// Live reads what the cache does not hold (Rook's OSD Deployments and
	// Jobs), straight from the API server.
	Live     client.Reader
	View     *ClusterView
	Config   Config
	Recorder events.EventRecorder
}

func (r *DiskRetirementReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("diskretirement").
		For(&cephv1alpha1.DiskRetirement{}).
		Complete(r)
}

func (r *DiskRetirementReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ret cephv1alpha1.DiskRetirement
	if err := r.Client.Get(ctx, req.NamespacedName, &ret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ret.DeletionTimestamp.IsZero() && !retirementFinished(ret.Status.Phase) && !controllerutil.ContainsFinalizer(&ret, retirementFinalizer) {
		patch := client.MergeFrom(ret.DeepCopy())
		controllerutil.AddFinalizer(&ret, retirementFinalizer)
		if err := r.Client.Patch(ctx, &ret, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	facts, err := r.gather(ctx, &ret)
	if err != nil {
		return ctrl.Result{}, err
	}
	next := NextRetirementStep(facts)
	if err := r.writeStatus(ctx, &ret, next.Status); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.act(ctx, &ret, facts, next); err != nil {
		return ctrl.Result{}, fmt.Errorf("%s for DiskRetirement %s: %w", next.Action, ret.Name, err)
	}
	if retirementWaitsOnNothingOutside(next) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: retirementPoll}, nil
}

// retirementWaitsOnNothingOutside: a terminal phase with nothing left to
// give back, or a suspended one, which waits for its own spec (the watch
// brings that) and computes its checks afresh when confirmed; polling it
// would compute the union every few seconds for a preview nobody may
// still be looking at.
func retirementWaitsOnNothingOutside(s RetirementStep) bool {
	if s.Status.Phase == cephv1alpha1.RetirementSuspended {
		return s.Action == ActNone
	}
	return retirementFinished(s.Status.Phase) && !s.Status.OSDStopped && (s.Action == ActNone || s.Action == ActRelease)
}

// gather reads every fact NextRetirementStep decides on.
func (r *DiskRetirementReconciler) gather(ctx context.Context, ret *cephv1alpha1.DiskRetirement) (RetirementFacts, error) {
	f := RetirementFacts{
		Name: ret.Name, DiskName: ret.Spec.Disk, ReplacementName: ret.Spec.Replacement,
		Status: ret.Status, Deleting: !ret.DeletionTimestamp.IsZero(), Suspend: ret.Spec.Suspend,
	}
	disk, err := r.disk(ctx, ret.Spec.Disk)
	if err != nil {
		return f, err
	}
	f.Disk = disk
	if disk == nil {
		return f, nil
	}
	cluster, err := r.View.ReadCephCluster(ctx)
	if err != nil {
		return f, err
	}
	f.Listed = cluster.devices[DeviceIDOf(disk)]
	if f.OtherRetirement, err = r.otherRetirement(ctx, ret); err != nil {
		return f, err
	}
	osds, unreadable, err := r.osds(ctx)
	if err != nil {
		return f, err
	}
	nodePaths, err := r.nodePaths(ctx, disk.Status.NodeName)
	if err != nil {
		return f, err
	}
	f.Lookup = FindOSD(disk, osds, nodePaths, unreadable)
	if err := r.gatherReplacement(ctx, &f, cluster, osds, nodePaths, unreadable); err != nil {
		return f, err
	}
	id := f.Status.OSDID
	if id == nil && f.Lookup.OSD != nil {
		id = &f.Lookup.OSD.ID
	}
	if id != nil {
		f.Deployment = osdByID(osds, *id)
		var job batchv1.Job
		err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.Config.ClusterNamespace, Name: RemovalJobName(*id)}, &job)
		switch {
		case err == nil:
			f.Job = removalJobState(&job)
		case !apierrors.IsNotFound(err):
			return f, fmt.Errorf("read Job %s: %w", RemovalJobName(*id), err)
		}
		if f.Job.Succeeded && f.Deployment != nil {
			// The Deployments were read before the Job, and Rook deletes
			// the OSD's Deployment before its Job completes: a Job seen
			// done is judged against the Deployment as it is after it, or
			// a removal that just finished would read as one Rook skipped.
			if f.Deployment, err = r.osdNow(ctx, f.Deployment.Deployment); err != nil {
				return f, err
			}
		}
	}
	if untouchedPhase(f.Status.Phase) && f.Lookup.OSD != nil {
		joining := f.Replacement
		if f.ReplacementJoined {
			joining = nil // already in the union and in Ceph's capacity
		}
		if f.Preflight, err = r.preflight(ctx, disk, joining, cluster); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (r *DiskRetirementReconciler) disk(ctx context.Context, name string) (*cephv1alpha1.Disk, error) {
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

// otherRetirement is an older unfinished retirement of the same disk:
// the first asked keeps it.
func (r *DiskRetirementReconciler) otherRetirement(ctx context.Context, ret *cephv1alpha1.DiskRetirement) (string, error) {
	var all cephv1alpha1.DiskRetirementList
	if err := r.Client.List(ctx, &all); err != nil {
		return "", fmt.Errorf("list DiskRetirements: %w", err)
	}
	for i := range all.Items {
		o := &all.Items[i]
		if o.Name == ret.Name || o.Spec.Disk != ret.Spec.Disk || retirementFinished(o.Status.Phase) {
			continue
		}
		if olderFirst(o, ret) < 0 {
			return o.Name, nil
		}
	}
	return "", nil
}

// osds reads Rook's OSD Deployments: the parsed ones, and the names of
// those that cannot be read.
func (r *DiskRetirementReconciler) osds(ctx context.Context) ([]OSD, []string, error) {
	var list appsv1.DeploymentList
	if err := r.Live.List(ctx, &list, client.InNamespace(r.Config.ClusterNamespace), client.MatchingLabels{"app": rookOSDAppLabel}); err != nil {
		return nil, nil, fmt.Errorf("list Rook's OSD Deployments: %w", err)
	}
	var osds []OSD
	var unreadable []string
	for i := range list.Items {
		osd, err := ParseOSDDeployment(&list.Items[i])
		if err != nil {
			unreadable = append(unreadable, list.Items[i].Name)
			continue
		}
		osds = append(osds, osd)
	}
	return osds, unreadable, nil
}

// osdNow reads one OSD Deployment again; nil when it is gone.
func (r *DiskRetirementReconciler) osdNow(ctx context.Context, name string) (*OSD, error) {
	var d appsv1.Deployment
	err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.Config.ClusterNamespace, Name: name}, &d)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Deployment %s: %w", name, err)
	}
	osd, err := ParseOSDDeployment(&d)
	if err != nil {
		return nil, err
	}
	return &osd, nil
}

func osdByID(osds []OSD, id int32) *OSD {
	for i := range osds {
		if osds[i].ID == id {
			return &osds[i]
		}
	}
	return nil
}

// nodePaths are the kernel and stable paths of every Disk on node.
func (r *DiskRetirementReconciler) nodePaths(ctx context.Context, node string) (map[string]bool, error) {
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

func (r *DiskRetirementReconciler) gatherReplacement(ctx context.Context, f *RetirementFacts, cluster cephCluster, osds []OSD, nodePaths map[string]bool, unreadable []string) error {
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
	if cluster.devices[DeviceIDOf(repl)] {
		paths := nodePaths
		if repl.Status.NodeName != f.Disk.Status.NodeName {
			if paths, err = r.nodePaths(ctx, repl.Status.NodeName); err != nil {
				return err
			}
		}
		f.ReplacementJoined = FindOSD(repl, osds, paths, unreadable).OSD != nil
	}
	return nil
}

// preflight gathers the checks' input: the shared OSD set without the
// disk (with joining, a replacement that is not an OSD yet, counted as
// one), every consumer's replication now, and what Ceph reports.
func (r *DiskRetirementReconciler) preflight(ctx context.Context, disk, joining *cephv1alpha1.Disk, cluster cephCluster) ([]cephv1alpha1.PreflightCheck, error) {
	union, err := r.View.ComputeUnion(ctx, cluster.devices)
	if err != nil {
		return nil, err
	}
	in := PreflightInput{}
	gone := DeviceIDOf(disk)
	hosts := map[string]bool{}
	for _, d := range union.Disks {
		if id := DeviceIDOf(d); id != gone {
			hosts[id.Node] = true
			in.OSDsAfter++
		}
	}
	if joining != nil {
		hosts[joining.Status.NodeName] = true
		in.OSDsAfter++
		if joining.Status.Size != nil {
			in.JoiningBytes = joining.Status.Size.Value()
		}
	}
	in.HostsAfter = len(hosts)
	for _, kind := range consumerKinds {
		consumers, err := kind.List(ctx, r.Client)
		if err != nil {
			return nil, err
		}
		for _, c := range consumers {
			if !c.GetDeletionTimestamp().IsZero() {
				continue
			}
			rep, err := ComputeReplication(c.RequestedReplicas(), union.Nodes)
			if err != nil {
				continue // no disks at all: the consumer holds no data
			}
			in.Consumers = append(in.Consumers, ConsumerNeed{Consumer: kind.Kind() + " " + c.GetName(), Size: rep.Size, Domain: rep.FailureDomain})
		}
	}
	in.Health, _, _ = unstructured.NestedString(cluster.raw.Object, "status", "ceph", "health")
	in.UsedBytes, _, _ = unstructured.NestedInt64(cluster.raw.Object, "status", "ceph", "capacity", "bytesUsed")
	in.TotalBytes, _, _ = unstructured.NestedInt64(cluster.raw.Object, "status", "ceph", "capacity", "bytesTotal")
	if disk.Status.Size != nil {
		in.DiskBytes = disk.Status.Size.Value()
	}
	return Preflight(in), nil
}

// writeStatus writes the step's status when it differs from the stored one.
func (r *DiskRetirementReconciler) writeStatus(ctx context.Context, ret *cephv1alpha1.DiskRetirement, status cephv1alpha1.DiskRetirementStatus) error {
	status.ObservedGeneration = ret.Generation
	status.Message = BoundMessage(status.Message)
	if equality.Semantic.DeepEqual(ret.Status, status) {
		return nil
	}
	before := ret.Status.Phase
	if err := r.Client.Status().Patch(ctx, ret, statusPatch(status)); err != nil {
		return fmt.Errorf("write DiskRetirement %s status: %w", ret.Name, err)
	}
	if status.Phase != before && r.Recorder != nil {
		eventType := corev1.EventTypeNormal
		if status.Phase == cephv1alpha1.RetirementRefused || status.Phase == cephv1alpha1.RetirementFailed {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(ret, nil, eventType, string(status.Phase), "Retire", "%s", status.Message)
	}
	return nil
}

// act takes the step's action.
func (r *DiskRetirementReconciler) act(ctx context.Context, ret *cephv1alpha1.DiskRetirement, f RetirementFacts, s RetirementStep) error {
	switch s.Action {
	case ActAddReplacement:
		return r.addReplacement(ctx, s.Status.Pool, ret.Spec.Replacement)
	case ActScaleDown:
		return r.scaleOSD(ctx, *s.Status.OSDID, 0)
	case ActScaleUp:
		return r.scaleOSD(ctx, *s.Status.OSDID, 1)
	case ActCreateJob:
		return r.createJob(ctx, ret.Name, *s.Status.OSDID)
	case ActMarkRetired:
		mark := "no-osd"
		if s.Status.OSDID != nil {
			mark = fmt.Sprintf("osd.%d", *s.Status.OSDID)
		}
		disk := f.Disk // read for this reconcile: ours to change
		patch := client.MergeFrom(disk.DeepCopy())
		if disk.Annotations == nil {
			disk.Annotations = map[string]string{}
		}
		disk.Annotations[cephv1alpha1.RetiredAnnotation] = mark
		return r.Client.Patch(ctx, disk, patch)
	case ActRelease:
		patch := client.MergeFrom(ret.DeepCopy())
		if controllerutil.RemoveFinalizer(ret, retirementFinalizer) {
			return client.IgnoreNotFound(r.Client.Patch(ctx, ret, patch))
		}
	}
	return nil
}

// addReplacement appends the replacement to the pool's spec.disks, with an
// optimistic lock so an edit made meanwhile is not overwritten.
func (r *DiskRetirementReconciler) addReplacement(ctx context.Context, poolName, replacement string) error {
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: poolName}, &pool); err != nil {
		return err
	}
	if slices.Contains(pool.Spec.Disks, replacement) {
		return nil
	}
	patch := client.MergeFromWithOptions(pool.DeepCopy(), client.MergeFromWithOptimisticLock{})
	pool.Spec.Disks = append(pool.Spec.Disks, replacement)
	return r.Client.Patch(ctx, &pool, patch)
}

// scaleOSD stops (replicas 0) or starts (1) an OSD's Deployment. A stopped
// one carries Rook's do-not-reconcile label meanwhile: Rook's OSD update
// re-applies every OSD Deployment with one replica on each CephCluster
// reconcile, except those labelled so (pkg/operator/ceph/cluster/osd
// update.go, controller.GetDaemonsToSkipReconcile).
func (r *DiskRetirementReconciler) scaleOSD(ctx context.Context, id int32, replicas int32) error {
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = r.Config.ClusterNamespace, fmt.Sprintf("%s%d", rookOSDDeployment, id)
	label := "null"
	if replicas == 0 {
		label = `"retiring"`
	}
	body := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}},"spec":{"replicas":%d}}`, cephv1.SkipReconcileLabelKey, label, replicas)
	return client.IgnoreNotFound(r.Client.Patch(ctx, d, client.RawPatch(client.Merge.Type(), body)))
}

func (r *DiskRetirementReconciler) createJob(ctx context.Context, retirement string, id int32) error {
	var operator appsv1.Deployment
	if err := r.Live.Get(ctx, client.ObjectKey{Namespace: r.Config.OperatorNamespace, Name: rookOperatorDeployment}, &operator); err != nil {
		return fmt.Errorf("read the Rook operator's image: %w", err)
	}
	if len(operator.Spec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("deployment %s has no containers", rookOperatorDeployment)
	}
	job := RenderRemovalJob(r.Config.ClusterNamespace, retirement, id, operator.Spec.Template.Spec.Containers[0].Image)
	if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
