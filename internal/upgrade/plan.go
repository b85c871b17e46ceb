package upgrade

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// Targets are what the plugin brings (Rook's chart, Ceph's image), the
// API server's Kubernetes version a Rook step is checked against, and
// where the operator and the plugin's CephCluster run.
type Targets struct {
	Chart, CephImage                                 string
	Kubernetes                                       string
	OperatorNamespace, ClusterNamespace, ClusterName string
}

// InstalledRookChart is the Rook chart version that made the operator
// Deployment ("v1.18.0"), "" when the Deployment carries no label of
// Rook's chart: not made by the chart, and not the plugin's to upgrade.
func InstalledRookChart(operator *appsv1.Deployment) string {
	version, ok := strings.CutPrefix(operator.Labels[rook.HelmChartLabel], rook.ChartName+"-")
	if !ok {
		return ""
	}
	return version
}

// FactsFrom reads an upgrade's facts from the CephCluster, the
// Deployments Rook made for it and the disk retirements. Ceph's health and
// checks are the ones Rook copies into the CephCluster's status each
// minute; PG states are not among them, so Ceph's own PG health checks
// (PG_DEGRADED, PG_AVAILABILITY, ...) stand for them.
func FactsFrom(cluster *cephv1.CephCluster, daemons []appsv1.Deployment, retirements []cephv1alpha1.DiskRetirement) Facts {
	f := Facts{
		ClusterImage:         cluster.Spec.CephVersion.Image,
		DoNotReconcile:       cluster.Labels[cephv1.SkipReconcileLabelKey] != "",
		SkipUpgradeChecks:    cluster.Spec.SkipUpgradeChecks,
		ContinueIfNotHealthy: cluster.Spec.ContinueUpgradeAfterChecksEvenIfNotHealthy,
		AllowUnsupported:     cluster.Spec.CephVersion.AllowUnsupported,
	}
	if v := cluster.Status.CephVersion; v != nil {
		f.DetectedImage = v.Image
	}
	if s := cluster.Status.CephStatus; s != nil {
		f.Ceph.Health.Status = s.Health
		f.StatusChecked, _ = time.Parse(time.RFC3339, s.LastChecked) // zero when unset or unreadable
		if len(s.Details) > 0 {
			f.Ceph.Health.Checks = map[string]string{}
			for name, check := range s.Details {
				f.Ceph.Health.Checks[name] = check.Message
			}
		}
		if s.Versions != nil {
			f.RunningCeph = slices.Sorted(maps.Keys(s.Versions.Overall))
		}
	}
	rookVersions, cephVersions := map[string]bool{}, map[string]bool{}
	for i := range daemons {
		d := &daemons[i]
		if v := d.Labels[rook.VersionLabel]; v != "" {
			rookVersions[v] = true
		}
		if v := d.Labels[rook.CephVersionLabel]; v != "" {
			cephVersions[v] = true
		}
		replicas := desiredReplicas(d)
		isOSD := d.Labels["app"] == rook.OSDApp
		switch {
		case isOSD && (replicas == 0 || d.Labels[cephv1.SkipReconcileLabelKey] != ""):
			f.HeldOSDs = append(f.HeldOSDs, d.Name)
		case replicas > 0 && !rolledOut(d):
			f.Unavailable = append(f.Unavailable, d.Name)
		}
	}
	f.RookVersions, f.CephVersions = slices.Sorted(maps.Keys(rookVersions)), slices.Sorted(maps.Keys(cephVersions))
	slices.Sort(f.HeldOSDs)
	slices.Sort(f.Unavailable)
	for _, r := range retirements {
		if !r.Status.Phase.Finished() {
			f.Retirements = append(f.Retirements, r.Name)
		}
	}
	slices.Sort(f.Retirements)
	return f
}

// Plan is the upgrade step a start of the plugin takes, if any,
// with its preflight.
type Plan struct {
	Step     Step // "": nothing to upgrade
	From, To string
	Checks   []cephv1alpha1.PreflightCheck
	// ClusterImage is the image the CephCluster has, "" when there is none.
	ClusterImage string
	// Chart is the Rook chart the plugin brings.
	Chart string
	// PGsRead: the Health check judged PG states read from Ceph just
	// before (a Ceph Job's answer), or there is no Ceph yet. A step starts
	// only on them: Ceph raises no health check for remapped or
	// backfilling PGs.
	PGsRead bool
}

// Allowed says whether the step may start.
func (p Plan) Allowed() bool { return p.Passed() && p.PGsRead }

// Passed says whether a step is due and every check passed, PG states
// aside: the moment to ask Ceph for them.
func (p Plan) Passed() bool {
	return p.Step != "" && cephv1alpha1.PreflightChecks(p.Checks).Passed()
}

// Status is what the plugin reports about the plan before the upgrade
// reconciler's first look: a refusal or a wait, each saying why; nothing
// when there is no step or it was taken.
func (p Plan) Status() pluginruntime.PluginStatus {
	if p.Step == "" {
		return pluginruntime.PluginStatus{}
	}
	return DecideState(p, Progress{}, Progress{}, p.Chart, p.ClusterImage, nil).PluginStatus()
}

// PlanUpgrade finds the next upgrade step and judges it. A Rook step is
// taken when the operator Deployment was made by another version of Rook's
// chart; a Ceph step when the plugin's CephCluster runs another image than
// the configured one. On a fresh install there is none. pgStates are the
// PG states Ceph gave just before, nil when not asked.
func PlanUpgrade(ctx context.Context, c client.Reader, t Targets, pgStates map[string]int) (Plan, error) {
	installed := ""
	var operator appsv1.Deployment
	err := c.Get(ctx, client.ObjectKey{Namespace: t.OperatorNamespace, Name: rook.OperatorDeployment}, &operator)
	switch {
	case err == nil:
		installed = InstalledRookChart(&operator)
	case !apierrors.IsNotFound(err):
		return Plan{}, fmt.Errorf("read the Rook operator's Deployment: %w", err)
	}
	var cluster cephv1.CephCluster
	err = c.Get(ctx, client.ObjectKey{Namespace: t.ClusterNamespace, Name: t.ClusterName}, &cluster)
	switch {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err): // none, or Rook's CRDs not yet installed
		cluster = cephv1.CephCluster{}
	case err != nil:
		return Plan{}, fmt.Errorf("read CephCluster %s/%s: %w", t.ClusterNamespace, t.ClusterName, err)
	}
	managed := cluster.Labels[cephv1alpha1.ManagedByLabel] == cephv1alpha1.ManagedByValue
	plan := Plan{ClusterImage: cluster.Spec.CephVersion.Image, Chart: t.Chart}
	// An operator not made by Rook's chart, and a CephCluster not made by
	// the plugin, are not the plugin's to upgrade: they count as current.
	chart, image := cmp.Or(installed, t.Chart), t.CephImage
	if managed {
		image = cluster.Spec.CephVersion.Image
	}
	step, ok := NextStep(chart, t.Chart, image, t.CephImage)
	switch {
	case !ok:
		return plan, nil
	case step == StepRook:
		plan.Step, plan.From, plan.To = StepRook, installed, t.Chart
	default:
		plan.Step, plan.From, plan.To = StepCeph, image, t.CephImage
	}
	if cluster.Name == "" { // a Rook step with no Ceph on it yet
		plan.Checks = []cephv1alpha1.PreflightCheck{upgradeVersionsCheck(Facts{
			Step: plan.Step, InstalledRook: installed, TargetRook: t.Chart, Kubernetes: t.Kubernetes})}
		plan.PGsRead = true
		return plan, nil
	}
	facts, err := gatherUpgradeFacts(ctx, c, t, &cluster)
	if err != nil {
		return Plan{}, err
	}
	facts.Step, facts.InstalledRook, facts.TargetRook = plan.Step, installed, t.Chart
	facts.TargetImage, facts.Kubernetes = t.CephImage, t.Kubernetes
	facts.Ceph.PGStates, plan.PGsRead = pgStates, pgStates != nil
	plan.Checks = Preflight(facts)
	return plan, nil
}

// CephImageToApply is the image the CephCluster gets at this start: the
// configured one when it is new or its Ceph step passed its preflight, and
// the one it runs otherwise. The image only changes as a checked step of
// its own, never beside a Rook step.
func (p Plan) CephImageToApply(configured string) string {
	if p.ClusterImage == "" || (p.Step == StepCeph && p.Allowed()) {
		return configured
	}
	return p.ClusterImage
}

// gatherUpgradeFacts lists what FactsFrom reads beside the
// CephCluster, and the nodes the mons and OSDs run on.
func gatherUpgradeFacts(ctx context.Context, c client.Reader, t Targets, cluster *cephv1.CephCluster) (Facts, error) {
	var daemons appsv1.DeploymentList
	if err := c.List(ctx, &daemons, client.InNamespace(t.ClusterNamespace), client.MatchingLabels{rook.ClusterLabel: t.ClusterNamespace}); err != nil {
		return Facts{}, fmt.Errorf("list the Ceph daemons' Deployments: %w", err)
	}
	var retirements cephv1alpha1.DiskRetirementList
	if err := c.List(ctx, &retirements); err != nil && !apimeta.IsNoMatchError(err) {
		return Facts{}, fmt.Errorf("list DiskRetirements: %w", err)
	}
	facts := FactsFrom(cluster, daemons.Items, retirements.Items)
	facts.Now = time.Now()
	unfit, err := unfitDaemonNodes(ctx, c, t)
	if err != nil {
		return Facts{}, err
	}
	facts.UnfitNodes = unfit
	return facts, nil
}

// unfitDaemonNodes reads the nodes the mons' and OSDs' pods run on.
func unfitDaemonNodes(ctx context.Context, c client.Reader, t Targets) ([]string, error) {
	var pods []corev1.Pod
	for _, app := range []string{rook.MonApp, rook.OSDApp} {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(t.ClusterNamespace), client.MatchingLabels{"app": app}); err != nil {
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

// UnfitNodes says which of the nodes that host daemons (nil: the node is
// gone) would not take a daemon back: gone, not Ready, or cordoned.
func UnfitNodes(hosts map[string]*corev1.Node) []string {
	var unfit []string
	for name, node := range hosts {
		switch {
		case node == nil:
			unfit = append(unfit, name+" is gone")
		case node.Spec.Unschedulable:
			unfit = append(unfit, name+" is cordoned")
		case !nodeReady(node):
			unfit = append(unfit, name+" is NotReady")
		}
	}
	slices.Sort(unfit)
	return unfit
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
