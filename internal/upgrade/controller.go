package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// How often the upgrade is looked at again while something moves (a roll,
// a wait for the cluster to settle) and while a refusal stands. Rook
// copies Ceph's health into the CephCluster each minute, which wakes the
// reconciler too; daemon Deployments are read live, not watched.
const (
	upgradeRollInterval    = 15 * time.Second
	upgradeRefusedInterval = time.Minute
	// pgJobPoll is how often a Ceph Job's answer is looked for; an answer
	// older than maxPGAnswerAge is not one to start a step on.
	pgJobPoll      = 2 * time.Second
	maxPGAnswerAge = time.Minute
)

// Reconciler carries an upgrade through while the plugin runs:
// the step Start could not take (refused then, or the Ceph step that waits
// for Rook's roll) is taken as soon as its preflight passes, with no
// restart; the roll's progress is reported in the plugin's status,
// recorded on the CephCluster for the console, and announced in Events.
// Every decision is read from the cluster, so a crash at any point decides
// the same again and no step is taken twice.
type Reconciler struct {
	// Client writes the CephCluster; Live reads what the plan is made of.
	Client client.Client
	Live   client.Reader
	// Targets are what the plugin brings and where it runs.
	Targets  Targets
	Recorder events.EventRecorder
	Host     pluginruntime.Host
	// TakeRookStep helm-upgrades the Rook release (under the install lock).
	TakeRookStep func(context.Context) error
	// Clock is the time the upgrade is judged at; SetupWithManager sets
	// the real one when none is given.
	Clock clock.PassiveClock
}

func (r *Reconciler) cluster() types.NamespacedName {
	return types.NamespacedName{Namespace: r.Targets.ClusterNamespace, Name: r.Targets.ClusterName}
}

func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephCluster"))
	key := r.cluster()
	return builder.ControllerManagedBy(mgr).
		Named("upgrade").
		For(cluster, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == key.Namespace && o.GetName() == key.Name
		}), predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return !onlyUpgradeRecordChanged(e.ObjectOld, e.ObjectNew)
		}})).
		Complete(r)
}

func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	o, err := Gather(ctx, r.Live, r.Targets)
	if err != nil {
		return reconcile.Result{}, err
	}
	plan := PlanFrom(o, r.Targets, r.Clock.Now(), nil)
	if !plan.Passed() {
		// A PG-states ask the plan no longer warrants is forgotten: its
		// annotation holds every retirement back (UnderWay).
		if err := r.forgetPGJob(ctx, o.Cluster); err != nil {
			return reconcile.Result{}, err
		}
	}
	asking := false
	if plan.Passed() && !plan.PGsRead {
		// Every check passed: ask Ceph for its PG states, and judge again
		// on them once it answers.
		var pgs map[string]int
		if pgs, asking, err = r.askPGStates(ctx, o.Cluster); err != nil {
			return reconcile.Result{}, err
		}
		if pgs != nil {
			plan = PlanFrom(o, r.Targets, r.Clock.Now(), pgs)
		}
	}
	if plan.Allowed() {
		if err := r.takeStep(ctx, plan); err != nil {
			return reconcile.Result{}, err
		}
		// Judge again from what the step changed.
		if o, err = Gather(ctx, r.Live, r.Targets); err != nil {
			return reconcile.Result{}, err
		}
		plan = PlanFrom(o, r.Targets, r.Clock.Now(), nil)
	}
	if o.Cluster == nil {
		// No CephCluster: nothing to roll (clusterHealthReconciler says why).
		return reconcile.Result{}, nil
	}
	rookRoll, cephRoll := ProgressOf(o, r.Targets)
	recorded := recordedUpgrade(o.Cluster)
	state := DecideState(plan, rookRoll, cephRoll, r.Targets.Chart, o.Cluster.Spec.CephVersion.Image, recorded)
	state = WithStall(state, recorded, r.Clock.Now(), StallLimit)
	r.Host.ReportStatus(state.PluginStatus())
	if err := r.record(ctx, o.Cluster, recorded, state); err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case asking:
		return reconcile.Result{RequeueAfter: pgJobPoll}, nil
	case state.Stage == StageRolling || state.Stage == StageWaiting:
		return reconcile.Result{RequeueAfter: upgradeRollInterval}, nil
	case state.Stage == StageRefused:
		return reconcile.Result{RequeueAfter: upgradeRefusedInterval}, nil
	}
	return reconcile.Result{}, nil
}

// askPGStates asks Ceph, by a Ceph Job owned by the CephCluster, how many
// PGs are in each state: the states once the Job answered within
// maxPGAnswerAge, nil while it runs (asking) or when its answer failed or
// was stale (then the next reconcile asks anew). The Job's name is kept on
// the CephCluster (UpgradePGJobAnnotation), written before the Job is
// created and taken off after it was read and deleted, as the retirement
// keeps its Job in its status: a plugin that restarts reads the answer of
// the Job it started, and a crash between any two steps leaves a name whose
// Job is created again.
func (r *Reconciler) askPGStates(ctx context.Context, cluster *cephv1.CephCluster) (pgs map[string]int, asking bool, err error) {
	req, recorded := recordedPGRequest(cluster)
	if recorded == "" || req == nil {
		if recorded != "" {
			// Not a name this cluster's asks make (a restored or copied
			// annotation, another verb's Job): never read or delete that Job.
			log.FromContext(ctx).Info("the CephCluster names a Job that is not its PG-states Job; asking anew", "job", recorded)
		}
		req = new(r.pgRequest())
		if err := r.annotateCluster(ctx, cluster, cephv1alpha1.UpgradePGJobAnnotation, cephjob.Name(cluster.UID, *req)); err != nil {
			return nil, false, err
		}
	}
	name := cephjob.Name(cluster.UID, *req)
	job, answer, err := cephjob.Get(ctx, r.Live, r.Targets.ClusterNamespace, name, cluster.UID)
	switch {
	case err != nil:
		return nil, false, err
	case job == nil:
		return nil, true, r.startPGJob(ctx, cluster, *req)
	case !answer.Done:
		return nil, true, nil
	}
	if err := cephjob.Delete(ctx, r.Client, r.Live, r.Targets.ClusterNamespace, name, cluster.UID); err != nil {
		return nil, false, fmt.Errorf("delete Ceph Job %s: %w", name, err)
	}
	if err := r.annotateCluster(ctx, cluster, cephv1alpha1.UpgradePGJobAnnotation, nil); err != nil {
		return nil, false, err
	}
	fresh := job.Status.CompletionTime != nil && r.Clock.Since(job.Status.CompletionTime.Time) < maxPGAnswerAge
	if !answer.Succeeded || !fresh {
		log.FromContext(ctx).Info("asking Ceph for its PG states again", "job", name, "succeeded", answer.Succeeded, "answer", answer.Message)
		return nil, false, nil
	}
	pgs, err = cephjob.ParsePGStates(answer.Message)
	return pgs, false, err
}

// forgetPGJob deletes the PG-states Job the CephCluster names, if it is
// this cluster's own, and takes the name off.
func (r *Reconciler) forgetPGJob(ctx context.Context, cluster *cephv1.CephCluster) error {
	if cluster == nil {
		return nil
	}
	req, recorded := recordedPGRequest(cluster)
	if recorded == "" {
		return nil
	}
	if req != nil {
		name := cephjob.Name(cluster.UID, *req)
		if err := cephjob.Delete(ctx, r.Client, r.Live, r.Targets.ClusterNamespace, name, cluster.UID); err != nil {
			return fmt.Errorf("delete Ceph Job %s: %w", name, err)
		}
	}
	return r.annotateCluster(ctx, cluster, cephv1alpha1.UpgradePGJobAnnotation, nil)
}

// recordedPGRequest reads the PG-states Job the CephCluster names: the
// name as recorded ("" when none), and its request when it is a name this
// cluster's asks make (the pgs verb and the cluster's own UID), else nil.
func recordedPGRequest(cluster *cephv1.CephCluster) (*cephjob.Request, string) {
	name := cluster.Annotations[cephv1alpha1.UpgradePGJobAnnotation]
	verb, seq, ok := cephjob.ParseName(name)
	req := cephjob.Request{Verb: verb, Seq: seq}
	if !ok || verb != cephjob.VerbPGStates || cephjob.Name(cluster.UID, req) != name {
		return nil, name
	}
	return &req, name
}

// pgRequest is the request of a new PG-states Job: its sequence is the
// clock's, so that each ask has a Job of its own.
func (r *Reconciler) pgRequest() cephjob.Request {
	return cephjob.Request{Verb: cephjob.VerbPGStates, Seq: int32(r.Clock.Now().Unix() % 1_000_000_000)}
}

// annotateCluster sets one annotation of the CephCluster to value (a
// string), or takes it off (nil). The patch goes through the object's
// metadata alone, so that cluster stays the snapshot the step is judged
// on; Rook does not reconcile a CephCluster on an annotation's change (see
// UpgradeAnnotation).
func (r *Reconciler) annotateCluster(ctx context.Context, cluster *cephv1.CephCluster, key string, value any) error {
	body := patch.Merge(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: cluster.Name}}
	meta.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephCluster"))
	if err := r.Client.Patch(ctx, meta, body); err != nil {
		return fmt.Errorf("set annotation %s of CephCluster %s: %w", key, r.cluster(), err)
	}
	return nil
}

// startPGJob starts the Ceph Job of req that reads the PG states, with the
// Rook operator's image, owned by the CephCluster (which Kubernetes's
// garbage collector then deletes it with).
func (r *Reconciler) startPGJob(ctx context.Context, cluster *cephv1.CephCluster, req cephjob.Request) error {
	image, err := cephjob.OperatorImage(ctx, r.Live, r.Targets.OperatorNamespace)
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephCluster", Name: cluster.Name, UID: cluster.UID}
	job := cephjob.Render(r.Targets.ClusterNamespace, owner, req, image)
	if err := client.IgnoreAlreadyExists(r.Client.Create(ctx, job)); err != nil {
		return fmt.Errorf("start Ceph Job %s: %w", job.Name, err)
	}
	return nil
}

// takeStep takes the step the preflight allowed.
func (r *Reconciler) takeStep(ctx context.Context, plan Plan) error {
	log.FromContext(ctx).Info("upgrade step allowed, taking it", "step", plan.Step, "from", plan.From, "to", plan.To)
	switch plan.Step {
	case StepRook:
		return r.TakeRookStep(ctx)
	case StepCeph:
		return r.ApplyCephImage(ctx, plan)
	}
	return nil
}

// ApplyCephImage sets the CephCluster's image, with the resourceVersion it
// was judged on: a CephCluster changed since is judged again.
func (r *Reconciler) ApplyCephImage(ctx context.Context, plan Plan) error {
	var cluster cephv1.CephCluster
	if err := r.Live.Get(ctx, r.cluster(), &cluster); err != nil {
		return fmt.Errorf("read CephCluster %s: %w", r.cluster(), err)
	}
	if cluster.Spec.CephVersion.Image != plan.From {
		return fmt.Errorf("CephCluster %s changed its image to %s since the preflight; judging again", r.cluster(), cluster.Spec.CephVersion.Image)
	}
	body := patch.Merge(map[string]any{
		"metadata": map[string]any{"resourceVersion": cluster.ResourceVersion},
		"spec":     map[string]any{"cephVersion": map[string]any{"image": plan.To}},
	})
	if err := r.Client.Patch(ctx, &cluster, body); err != nil {
		return fmt.Errorf("set CephCluster %s's image to %s: %w", r.cluster(), plan.To, err)
	}
	return nil
}

// record writes the state on the CephCluster when it changed, and
// announces a new stage in an Event on it.
func (r *Reconciler) record(ctx context.Context, cluster *cephv1.CephCluster, recorded *State, state State) error {
	next, changed := NextRecord(recorded, state)
	if !changed {
		return nil
	}
	value := any(nil) // null removes the annotation in a merge patch
	if next != nil {
		raw, err := json.Marshal(next)
		if err != nil {
			return err
		}
		value = string(raw)
	}
	if err := r.annotateCluster(ctx, cluster, cephv1alpha1.UpgradeAnnotation, value); err != nil {
		return fmt.Errorf("record the upgrade: %w", err)
	}
	if eventType, reason, message, ok := Event(recorded, next); ok {
		r.Recorder.Eventf(cluster, nil, eventType, string(reason), "Upgrade", "%s", message)
	}
	return nil
}

// recordedUpgrade is the state the CephCluster records, nil when none or
// unreadable (then it is written anew).
func recordedUpgrade(cluster *cephv1.CephCluster) *State {
	raw, ok := cluster.Annotations[cephv1alpha1.UpgradeAnnotation]
	if !ok {
		return nil
	}
	var s State
	if json.Unmarshal([]byte(raw), &s) != nil {
		return nil
	}
	return &s
}

// onlyUpgradeRecordChanged says whether an update of the CephCluster
// changed nothing but the upgrade's own annotations (its record, its
// PG-states Job): the reconciler's own writes, which must not wake it (a
// failed PG answer would be asked again at once, Job after Job, instead of
// at the next poll). Rook's status refreshes, spec and label changes still
// do.
func onlyUpgradeRecordChanged(old, updated client.Object) bool {
	o, ok1 := old.(*unstructured.Unstructured)
	n, ok2 := updated.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return false
	}
	withoutRecord := func(u *unstructured.Unstructured) map[string]string {
		a := maps.Clone(u.GetAnnotations())
		delete(a, cephv1alpha1.UpgradeAnnotation)
		delete(a, cephv1alpha1.UpgradePGJobAnnotation)
		return a
	}
	return o.GetGeneration() == n.GetGeneration() &&
		maps.Equal(o.GetLabels(), n.GetLabels()) &&
		maps.Equal(withoutRecord(o), withoutRecord(n)) &&
		equality.Semantic.DeepEqual(o.Object["status"], n.Object["status"])
}
