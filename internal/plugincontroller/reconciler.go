package plugincontroller

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// Defaults of the Reconciler's intervals.
const (
	DefaultPollInterval     = 30 * time.Second
	DefaultUninstallTimeout = 30 * time.Second

	// statusTimeout bounds one GetStatus, so a hung plugin holds a
	// reconcile worker for no longer than this.
	statusTimeout = 10 * time.Second

	// maxEventNoteBytes is the API server's limit of an event's note.
	maxEventNoteBytes = 1024
)

// Reconciler turns PluginInstallations into running plugins.
type Reconciler struct {
	Client client.Client
	// APIReader reads around the cache (see CacheOptions).
	APIReader   client.Reader
	Definitions DefinitionSource
	Plugins     PluginClient
	Cluster     ClusterIdentity
	// Tokens signs what the controller sends to plugins' metadata APIs,
	// and its public key is rendered into every plugin's Deployment
	// (LoadTokenSigner). Required: the API of a plugin deployed without
	// it would answer anyone who can reach the pod.
	Tokens *TokenSigner
	// Recorder, if set, receives an event when an uninstall request fails:
	// the installation that could carry it is about to disappear.
	Recorder events.EventRecorder
	// PollInterval is how often a plugin's status is asked for.
	PollInterval time.Duration
	// UninstallTimeout bounds the RequestUninstall call on deletion.
	UninstallTimeout time.Duration
}

// CacheOptions limit the manager's cache to the objects this controller
// labels, so it does not hold every Deployment and Service of the cluster.
func CacheOptions() cache.Options {
	ours := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue})}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Namespace{}:          ours,
		&corev1.ServiceAccount{}:     ours,
		&corev1.Service{}:            ours,
		&appsv1.Deployment{}:         ours,
		&rbacv1.RoleBinding{}:        ours,
		&rbacv1.ClusterRole{}:        ours,
		&rbacv1.ClusterRoleBinding{}: ours,
	}}
}

// SetupWithManager registers the controller. An installation is reconciled
// when its spec changes or its deletion begins, when anything it owns
// changes (drift), and every PollInterval to follow the plugin's phase.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Tokens == nil {
		return errors.New("the Reconciler needs Tokens to guard and call plugins' metadata APIs")
	}
	if r.PollInterval <= 0 {
		r.PollInterval = DefaultPollInterval
	}
	if r.UninstallTimeout <= 0 {
		r.UninstallTimeout = DefaultUninstallTimeout
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("plugininstallation").
		// Not on status updates: the controller writes status itself.
		For(&pluginsv1.PluginInstallation{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, deletionStarted{}))).
		Owns(&corev1.Namespace{}).
		Owns(&corev1.ServiceAccount{}).
		Owns(&rbacv1.RoleBinding{}).
		Owns(&rbacv1.ClusterRole{}).
		Owns(&rbacv1.ClusterRoleBinding{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		// GetStatus may take a while against a hung plugin; one such
		// plugin must not delay every other installation.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

// deletionStarted passes the update that sets deletionTimestamp.
type deletionStarted struct{ predicate.Funcs }

func (deletionStarted) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
}

// Reconcile resolves the definition, applies the objects, asks the plugin
// how it is and records the answer.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	inst := &pluginsv1.PluginInstallation{}
	if err := r.Client.Get(ctx, req.NamespacedName, inst); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if inst.DeletionTimestamp != nil {
		return r.finalize(ctx, inst)
	}
	if err := r.addFinalizer(ctx, inst); err != nil {
		return reconcile.Result{}, err
	}

	obs := Observation{Generation: inst.Generation}
	def, problem, err := r.resolveDefinition(ctx, inst)
	if problem == nil {
		obs.Namespace, problem, err = r.applyObjects(ctx, inst, def)
	}
	if problem == nil {
		problem = r.pollPlugin(ctx, inst, obs.Namespace, &obs)
	}
	obs.Problem = problem
	if err := r.writeStatus(ctx, inst, obs); err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case problem != nil && problem.Permanent && !problem.Refetch:
		// Retrying cannot help; an edit of the installation (or removal
		// of what is in the way) triggers the next reconcile.
		return reconcile.Result{}, reconcile.TerminalError(errors.New(problem.Message))
	case err != nil:
		return reconcile.Result{}, err
	default:
		return reconcile.Result{RequeueAfter: r.PollInterval}, nil
	}
}

// resolveDefinition fetches and checks the pinned definition. A fetch
// failure is also returned as an error, to be retried with backoff.
func (r *Reconciler) resolveDefinition(ctx context.Context, inst *pluginsv1.PluginInstallation) (*definition.PluginDefinition, *Problem, error) {
	ref := inst.Spec.DefinitionRef
	raw, err := r.Definitions.Fetch(ctx, ref)
	if err != nil {
		err = fmt.Errorf("fetch definition %s/%s %s: %w", ref.OrganizationName, ref.PluginName, ref.PluginVersion, err)
		return nil, &Problem{Reason: ReasonDefinitionUnavailable, Message: err.Error()}, err
	}
	verdict := CheckDefinition(ref, raw)
	if verdict.Definition == nil {
		// Bytes that match the hash never change, so a refusal of them is
		// final; other bytes may yet be corrected by the registry
		// (CachedSource keeps only matching bytes for that reason).
		refetch := verdict.Reason == ReasonDefinitionHashMismatch
		return nil, &Problem{Reason: verdict.Reason, Message: verdict.Message, Permanent: true, Refetch: refetch}, nil
	}
	return verdict.Definition, nil, nil
}

// applyObjects makes the installation's objects match their rendering and
// returns the plugin's namespace.
func (r *Reconciler) applyObjects(ctx context.Context, inst *pluginsv1.PluginInstallation, def *definition.PluginDefinition) (string, *Problem, error) {
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: r.Cluster, Tokens: r.Tokens.Trust()})
	a := applier{client: r.Client, reader: r.APIReader, owner: inst}

	ns, err := apply(ctx, a, objs.Namespace, syncNamespace)
	if err == nil && ns.DeletionTimestamp != nil {
		// Left over from an earlier installation of the same name; nothing
		// can be created in it until it is gone.
		msg := fmt.Sprintf("namespace %s is still being deleted; waiting to recreate it", ns.Name)
		return "", &Problem{Reason: ReasonApplyFailed, Message: msg}, nil
	}
	steps := []func() error{
		func() error { _, err := apply(ctx, a, objs.ServiceAccount, syncServiceAccount); return err },
		func() error { _, err := apply(ctx, a, objs.RoleBinding, syncRoleBinding); return err },
		func() error { _, err := apply(ctx, a, objs.ClusterRole, syncClusterRole); return err },
		func() error { _, err := apply(ctx, a, objs.ClusterRoleBinding, syncClusterRoleBinding); return err },
		func() error { _, err := apply(ctx, a, objs.Deployment, syncDeployment); return err },
		func() error { _, err := apply(ctx, a, objs.Service, syncService); return err },
	}
	for _, step := range steps {
		if err != nil {
			break
		}
		err = step()
	}
	if conflict := (*ConflictError)(nil); errors.As(err, &conflict) {
		return "", &Problem{Reason: ReasonObjectConflict, Message: conflict.Error(), Permanent: true}, nil
	}
	if err != nil {
		return "", &Problem{Reason: ReasonApplyFailed, Message: err.Error()}, err
	}
	return objs.Namespace.Name, nil, nil
}

// pollPlugin asks the plugin for its phase. An unreachable plugin is not an
// error to back off from: its pod may simply not be up yet, and the next
// poll asks again.
func (r *Reconciler) pollPlugin(ctx context.Context, inst *pluginsv1.PluginInstallation, namespace string, obs *Observation) *Problem {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	call, err := r.pluginCall(inst, namespace)
	if err != nil {
		return &Problem{Reason: ReasonPluginUnreachable, Message: err.Error()}
	}
	report, err := r.Plugins.GetStatus(ctx, call)
	if err != nil {
		log.FromContext(ctx).V(1).Info("plugin not reachable", "error", err.Error())
		return &Problem{Reason: ReasonPluginUnreachable, Message: "the plugin does not answer: " + err.Error()}
	}
	obs.Plugin = &report
	return nil
}

// pluginCall addresses the installation's plugin in namespace, with a
// token minted for this call alone.
func (r *Reconciler) pluginCall(inst *pluginsv1.PluginInstallation, namespace string) (PluginCall, error) {
	token, err := r.Tokens.Mint(inst.Name)
	return PluginCall{Namespace: namespace, Token: token}, err
}

// writeStatus patches the status when it changed, and only then.
func (r *Reconciler) writeStatus(ctx context.Context, inst *pluginsv1.PluginInstallation, obs Observation) error {
	next := ComputeStatus(inst.Status, obs, metav1.Now())
	if equality.Semantic.DeepEqual(inst.Status, next) {
		return nil
	}
	before := inst.DeepCopy()
	inst.Status = next
	if err := r.Client.Status().Patch(ctx, inst, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("write status of PluginInstallation %s: %w", inst.Name, err)
	}
	return nil
}

func (r *Reconciler) addFinalizer(ctx context.Context, inst *pluginsv1.PluginInstallation) error {
	before := inst.DeepCopy()
	if !controllerutil.AddFinalizer(inst, Finalizer) {
		return nil
	}
	if err := r.Client.Patch(ctx, inst, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("add finalizer to PluginInstallation %s: %w", inst.Name, err)
	}
	return nil
}

// finalize asks the plugin to uninstall, removes what deleting the
// namespace would not (the cluster-scoped RBAC) and the namespace, then
// lets the installation go.
//
// The uninstall request is bounded and its failure is not fatal: a plugin
// that crashed or never started must not make its installation
// undeletable. The plugin uninstalls in the background while its namespace
// terminates; its runtime delays its own exit until the uninstall returns
// (within the pod's grace period).
func (r *Reconciler) finalize(ctx context.Context, inst *pluginsv1.PluginInstallation) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(inst, Finalizer) {
		return reconcile.Result{}, nil
	}
	logger := log.FromContext(ctx)
	objs := RenderObjects(RenderInput{Installation: inst, Definition: &definition.PluginDefinition{}})

	ns, err := r.controlled(ctx, inst, objs.Namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	// Once asked (the phase says so), not again: a retried finalize must
	// not wait out the timeout a second time. A namespace already being
	// deleted (by a foreground deletion, say) may still run the plugin, so
	// it is asked all the same.
	if ns != nil && inst.Status.Phase != pluginsv1.PhaseUninstalling {
		message := "uninstall requested; removing the plugin"
		err := r.requestUninstall(ctx, inst, ns.GetName())
		if err != nil {
			logger.Error(err, "the plugin did not accept the uninstall request; removing it anyway")
			message = truncateMessage(fmt.Sprintf("the plugin did not accept the uninstall request (%v); removing it anyway", err), maxMessageBytes)
			if r.Recorder != nil {
				// The API server refuses a longer note, and the event
				// would be lost.
				note := truncateMessage(message, maxEventNoteBytes)
				r.Recorder.Eventf(inst, nil, corev1.EventTypeWarning, "UninstallRequestFailed", "Uninstall", "%s", note)
			}
		}
		if err := r.writeUninstalling(ctx, inst, message); err != nil {
			return reconcile.Result{}, err
		}
	}
	for _, obj := range []client.Object{objs.ClusterRoleBinding, objs.ClusterRole, objs.Namespace} {
		if err := r.deleteControlled(ctx, inst, obj); err != nil {
			return reconcile.Result{}, err
		}
	}

	before := inst.DeepCopy()
	controllerutil.RemoveFinalizer(inst, Finalizer)
	if err := r.Client.Patch(ctx, inst, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, fmt.Errorf("remove finalizer from PluginInstallation %s: %w", inst.Name, client.IgnoreNotFound(err))
	}
	logger.Info("plugin removed")
	return reconcile.Result{}, nil
}

// requestUninstall asks the plugin to uninstall, within UninstallTimeout.
func (r *Reconciler) requestUninstall(ctx context.Context, inst *pluginsv1.PluginInstallation, namespace string) error {
	call, err := r.pluginCall(inst, namespace)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.UninstallTimeout)
	defer cancel()
	return r.Plugins.RequestUninstall(ctx, call)
}

func (r *Reconciler) writeUninstalling(ctx context.Context, inst *pluginsv1.PluginInstallation, message string) error {
	before := inst.DeepCopy()
	inst.Status.Phase, inst.Status.Ready, inst.Status.Message = pluginsv1.PhaseUninstalling, false, message
	setReady(&inst.Status, inst.Generation, ReasonUninstalling, message, metav1.Now())
	if err := r.Client.Status().Patch(ctx, inst, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("write status of PluginInstallation %s: %w", inst.Name, err)
	}
	return nil
}

// controlled returns the live object named like obj if the installation
// controls it, and nil if it is absent or someone else's.
func (r *Reconciler) controlled(ctx context.Context, inst *pluginsv1.PluginInstallation, obj client.Object) (client.Object, error) {
	live := emptyLike(obj)
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %T %s: %w", obj, obj.GetName(), err)
	}
	if !metav1.IsControlledBy(live, inst) {
		return nil, nil
	}
	return live, nil
}

// deleteControlled deletes obj if the installation controls it; a
// same-named object of someone else's is left alone.
func (r *Reconciler) deleteControlled(ctx context.Context, inst *pluginsv1.PluginInstallation, obj client.Object) error {
	live, err := r.controlled(ctx, inst, obj)
	if err != nil || live == nil || live.GetDeletionTimestamp() != nil {
		return err
	}
	uid := live.GetUID()
	if err := r.Client.Delete(ctx, live, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
	}
	log.FromContext(ctx).Info("deleted", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
	return nil
}
