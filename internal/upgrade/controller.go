package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/internal/rook"
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

	// pgJob is the Ceph Job asking for the PG states, "" when none runs.
	// One reconcile runs at a time, so it needs no lock.
	pgJob string
}

func (r *Reconciler) cluster() types.NamespacedName {
	return types.NamespacedName{Namespace: r.Targets.ClusterNamespace, Name: r.Targets.ClusterName}
}

func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephCluster"))
	key := r.cluster()
	return builder.ControllerManagedBy(mgr).
		Named("upgrade").
		For(cluster, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == key.Namespace && o.GetName() == key.Name
		}))).
		Complete(r)
}

func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	plan, err := PlanUpgrade(ctx, r.Live, r.Targets, nil)
	if err != nil {
		return reconcile.Result{}, err
	}
	if plan.Passed() && !plan.PGsRead {
		// Every check passed: ask Ceph for its PG states, and judge again
		// on them once it answers.
		pgs, err := r.askPGStates(ctx)
		if err != nil {
			return reconcile.Result{}, err
		}
		if pgs != nil {
			if plan, err = PlanUpgrade(ctx, r.Live, r.Targets, pgs); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	if plan.Allowed() {
		if err := r.takeStep(ctx, plan); err != nil {
			return reconcile.Result{}, err
		}
		// Judge again from what the step changed.
		if plan, err = PlanUpgrade(ctx, r.Live, r.Targets, nil); err != nil {
			return reconcile.Result{}, err
		}
	}
	var cluster cephv1.CephCluster
	if err := r.Live.Get(ctx, r.cluster(), &cluster); err != nil {
		// No CephCluster: nothing to roll (clusterHealthReconciler says why).
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	rookRoll, cephRoll, err := r.progress(ctx, &cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	recorded := recordedUpgrade(&cluster)
	state := DecideState(plan, rookRoll, cephRoll, r.Targets.Chart, cluster.Spec.CephVersion.Image, recorded)
	r.Host.ReportStatus(state.PluginStatus())
	if err := r.record(ctx, &cluster, recorded, state); err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case r.pgJob != "":
		return reconcile.Result{RequeueAfter: pgJobPoll}, nil
	case state.Stage == StageRolling || state.Stage == StageWaiting:
		return reconcile.Result{RequeueAfter: upgradeRollInterval}, nil
	case state.Stage == StageRefused:
		return reconcile.Result{RequeueAfter: upgradeRefusedInterval}, nil
	}
	return reconcile.Result{}, nil
}

// askPGStates asks Ceph, by a Ceph Job owned by the CephCluster, how many
// PGs are in each state: nil while the Job runs (a new one is started when
// none is), the states once it answered within maxPGAnswerAge. A failed
// or stale answer is dropped and asked again; the Job is deleted once
// read. A plugin that restarts meanwhile asks anew (its Job expires by
// cephJobTTL).
func (r *Reconciler) askPGStates(ctx context.Context) (map[string]int, error) {
	if r.pgJob == "" {
		return nil, r.startPGJob(ctx)
	}
	job, answer, err := cephjob.Get(ctx, r.Live, r.Targets.ClusterNamespace, r.pgJob)
	if err != nil {
		return nil, err
	}
	if job == nil {
		r.pgJob = ""
		return nil, nil
	}
	if !answer.Done {
		return nil, nil
	}
	name := r.pgJob
	r.pgJob = ""
	if err := cephjob.Delete(ctx, r.Client, r.Targets.ClusterNamespace, name); err != nil {
		return nil, fmt.Errorf("delete Ceph Job %s: %w", name, err)
	}
	fresh := job.Status.CompletionTime != nil && time.Since(job.Status.CompletionTime.Time) < maxPGAnswerAge
	if !answer.Succeeded || !fresh {
		log.FromContext(ctx).Info("asking Ceph for its PG states again", "job", name, "succeeded", answer.Succeeded, "answer", answer.Message)
		return nil, nil
	}
	return cephjob.ParsePGStates(answer.Message)
}

// startPGJob starts the Ceph Job that reads the PG states, with the Rook
// operator's image, owned by the CephCluster (which Kubernetes's garbage
// collector then deletes it with).
func (r *Reconciler) startPGJob(ctx context.Context) error {
	var cluster cephv1.CephCluster
	if err := r.Live.Get(ctx, r.cluster(), &cluster); err != nil {
		return fmt.Errorf("read CephCluster %s: %w", r.cluster(), err)
	}
	image, err := cephjob.OperatorImage(ctx, r.Live, r.Targets.OperatorNamespace)
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephCluster", Name: cluster.Name, UID: cluster.UID}
	req := cephjob.Request{Verb: cephjob.VerbPGStates, Seq: int32(time.Now().Unix() % 1_000_000_000)}
	job := cephjob.Render(r.Targets.ClusterNamespace, owner, req, image)
	if err := client.IgnoreAlreadyExists(r.Client.Create(ctx, job)); err != nil {
		return fmt.Errorf("start Ceph Job %s: %w", job.Name, err)
	}
	r.pgJob = job.Name
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

// progress reads how far the daemons are on the Rook the operator runs and
// the image the CephCluster names.
func (r *Reconciler) progress(ctx context.Context, cluster *cephv1.CephCluster) (rookRoll, cephRoll Progress, err error) {
	var operator appsv1.Deployment
	rookImage := ""
	err = r.Live.Get(ctx, client.ObjectKey{Namespace: r.Targets.OperatorNamespace, Name: rook.OperatorDeployment}, &operator)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return rookRoll, cephRoll, fmt.Errorf("read the Rook operator's Deployment: %w", err)
	case len(operator.Spec.Template.Spec.Containers) > 0:
		rookImage = operator.Spec.Template.Spec.Containers[0].Image
	}
	var daemons appsv1.DeploymentList
	if err := r.Live.List(ctx, &daemons, client.InNamespace(r.Targets.ClusterNamespace),
		client.MatchingLabels{rook.ClusterLabel: r.Targets.ClusterNamespace}); err != nil {
		return rookRoll, cephRoll, fmt.Errorf("list the Ceph daemons' Deployments: %w", err)
	}
	rolls := make([]DaemonRoll, 0, len(daemons.Items))
	for i := range daemons.Items {
		rolls = append(rolls, DaemonRollOf(&daemons.Items[i]))
	}
	if InstalledRookChart(&operator) == r.Targets.Chart {
		rookRoll = RookRoll(r.Targets.Chart, rolls)
	}
	return rookRoll, CephRoll(cluster.Spec.CephVersion.Image, rookImage, rolls), nil
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
	body := patch.Merge(map[string]any{"metadata": map[string]any{"annotations": map[string]any{cephv1alpha1.UpgradeAnnotation: value}}})
	if err := r.Client.Patch(ctx, cluster, body); err != nil {
		return fmt.Errorf("record the upgrade on CephCluster %s: %w", r.cluster(), err)
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
