package upgrade

import (
	"context"
	"fmt"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// Observed is everything an upgrade is judged on, read in one pass
// (Gather); the decisions (PlanFrom, ProgressOf) read nothing else, and a
// reconcile gathers again only after it took a step.
type Observed struct {
	// InstalledChart is the Rook chart release that made the operator
	// Deployment ("v1.18.0"), "" when there is none or it was not made by
	// Rook's chart; OperatorImage is the image it runs.
	InstalledChart, OperatorImage string
	// Cluster is the plugin's CephCluster: nil when there is none, or
	// Rook's CRDs are not installed yet.
	Cluster *cephv1.CephCluster
	// Daemons are the Deployments Rook made for the cluster.
	Daemons []appsv1.Deployment
	// Retirements and UnfitNodes (the nodes the mons and OSDs run on that
	// would not take a daemon back) are read only when a step is due on a
	// cluster: its preflight is all that needs them.
	Retirements []cephv1alpha1.DiskRetirement
	UnfitNodes  []string
}

// Gather reads what an upgrade is judged on.
func Gather(ctx context.Context, c client.Reader, t Targets) (Observed, error) {
	var o Observed
	var operator appsv1.Deployment
	switch err := c.Get(ctx, client.ObjectKey{Namespace: t.OperatorNamespace, Name: rook.OperatorDeployment}, &operator); {
	case err == nil:
		o.InstalledChart = InstalledRookChart(&operator)
		if containers := operator.Spec.Template.Spec.Containers; len(containers) > 0 {
			o.OperatorImage = containers[0].Image
		}
	case !apierrors.IsNotFound(err):
		return Observed{}, fmt.Errorf("read the Rook operator's Deployment: %w", err)
	}
	var cluster cephv1.CephCluster
	switch err := c.Get(ctx, client.ObjectKey{Namespace: t.ClusterNamespace, Name: t.ClusterName}, &cluster); {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err): // none, or Rook's CRDs not yet installed
		return o, nil
	case err != nil:
		return Observed{}, fmt.Errorf("read CephCluster %s/%s: %w", t.ClusterNamespace, t.ClusterName, err)
	}
	o.Cluster = &cluster
	var daemons appsv1.DeploymentList
	if err := c.List(ctx, &daemons, client.InNamespace(t.ClusterNamespace), client.MatchingLabels{rook.ClusterLabel: t.ClusterNamespace}); err != nil {
		return Observed{}, fmt.Errorf("list the Ceph daemons' Deployments: %w", err)
	}
	o.Daemons = daemons.Items
	if _, _, _, due := dueStep(o, t); !due {
		return o, nil
	}
	var retirements cephv1alpha1.DiskRetirementList
	if err := c.List(ctx, &retirements); err != nil && !apimeta.IsNoMatchError(err) {
		return Observed{}, fmt.Errorf("list DiskRetirements: %w", err)
	}
	o.Retirements = retirements.Items
	unfit, err := unfitDaemonNodes(ctx, c, t)
	if err != nil {
		return Observed{}, err
	}
	o.UnfitNodes = unfit
	return o, nil
}

// Next gathers and plans in one call, with no PG states asked: what a
// start of the plugin judges before it installs.
func Next(ctx context.Context, c client.Reader, t Targets, now time.Time) (Plan, error) {
	o, err := Gather(ctx, c, t)
	if err != nil {
		return Plan{}, err
	}
	return PlanFrom(o, t, now, nil), nil
}

// unfitDaemonNodes reads the nodes the mons' and OSDs' pods run on.
func unfitDaemonNodes(ctx context.Context, c client.Reader, t Targets) ([]string, error) {
	var pods []corev1.Pod
	for _, app := range []string{rook.MonApp, rook.OSDApp} {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(t.ClusterNamespace), client.MatchingLabels{rook.AppLabel: app}); err != nil {
			return nil, fmt.Errorf("list the %s pods: %w", app, err)
		}
		pods = append(pods, list.Items...)
	}
	nodes := map[string]*corev1.Node{}
	for _, p := range pods {
		name := p.Spec.NodeName
		if _, seen := nodes[name]; name == "" || seen {
			continue
		}
		var node corev1.Node
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, &node); {
		case apierrors.IsNotFound(err):
			nodes[name] = nil
		case err != nil:
			return nil, fmt.Errorf("read node %s: %w", name, err)
		default:
			nodes[name] = &node
		}
	}
	return UnfitNodes(nodes), nil
}
