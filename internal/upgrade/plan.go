package upgrade

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

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
		isOSD := d.Labels[rook.AppLabel] == rook.OSDApp
		if isOSD {
			f.OSDs++
		}
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
		if retirementHolds(r.Status) {
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
	// Chart is the Rook chart the plugin brings; RookBehind says the
	// installed one is another (a Rook step is still to come, maybe after
	// a Ceph step).
	Chart      string
	RookBehind bool
	// PGsRead: the Health check judged PG states read from Ceph just
	// before (a Ceph Job's answer), or there is no Ceph yet. A step starts
	// only on them: Ceph raises no health check for remapped or
	// backfilling PGs.
	PGsRead bool
}

// Allowed says whether the step may start.
func (p Plan) Allowed() bool { return p.Passed() && p.PGsRead }

// RookReleaseMayChange says whether a start may install or upgrade Rook's
// chart to the plugin's: when it is already the plugin's (or none is
// installed), or when the Rook step is due and allowed. A Ceph step that
// comes first leaves the installed chart alone.
func (p Plan) RookReleaseMayChange() bool {
	return !p.RookBehind || p.Step == StepRook && p.Allowed()
}

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

// dueStep is the next upgrade step, if any. A Rook step is due when the
// operator Deployment was made by another version of Rook's chart; a Ceph
// step when the plugin's CephCluster runs another image than the
// configured one. An operator not made by Rook's chart, and a CephCluster
// not made by the plugin, are not the plugin's to upgrade: they count as
// current. On a fresh install no step is due.
func dueStep(o Observed, t Targets) (step Step, from, to string, due bool) {
	image := t.CephImage
	if o.Cluster != nil && o.Cluster.Labels[cephv1alpha1.ManagedByLabel] == cephv1alpha1.ManagedByValue {
		image = o.Cluster.Spec.CephVersion.Image
	}
	step, due = NextStep(cmp.Or(o.InstalledChart, t.Chart), t.Chart, image, t.CephImage)
	switch {
	case !due:
		return "", "", "", false
	case step == StepRook:
		return StepRook, o.InstalledChart, t.Chart, true
	}
	return StepCeph, image, t.CephImage, true
}

// PlanFrom judges the next step on what was observed, at now. pgStates are
// the PG states Ceph gave just before, nil when not asked.
func PlanFrom(o Observed, t Targets, now time.Time, pgStates map[string]int) Plan {
	plan := Plan{Chart: t.Chart, RookBehind: o.InstalledChart != "" && o.InstalledChart != t.Chart}
	if o.Cluster != nil {
		plan.ClusterImage = o.Cluster.Spec.CephVersion.Image
	}
	step, from, to, due := dueStep(o, t)
	if !due {
		return plan
	}
	plan.Step, plan.From, plan.To = step, from, to
	if o.Cluster == nil { // a Rook step with no Ceph on it yet
		plan.Checks = []cephv1alpha1.PreflightCheck{upgradeVersionsCheck(Facts{
			Step: plan.Step, InstalledRook: o.InstalledChart, TargetRook: t.Chart, Kubernetes: t.Kubernetes})}
		plan.PGsRead = true
		return plan
	}
	facts := FactsFrom(o.Cluster, o.Daemons, o.Retirements)
	facts.Now, facts.UnfitNodes = now, o.UnfitNodes
	facts.Step, facts.InstalledRook, facts.TargetRook = plan.Step, o.InstalledChart, t.Chart
	facts.TargetImage, facts.Kubernetes = t.CephImage, t.Kubernetes
	facts.Ceph.PGStates, plan.PGsRead = pgStates, pgStates != nil
	plan.Checks = Preflight(facts)
	return plan
}

// ProgressOf says how far the daemons are on the Rook the operator runs and
// on the image the CephCluster names; o must hold a CephCluster.
func ProgressOf(o Observed, t Targets) (rookRoll, cephRoll Progress) {
	rolls := make([]DaemonRoll, 0, len(o.Daemons))
	for i := range o.Daemons {
		rolls = append(rolls, DaemonRollOf(&o.Daemons[i]))
	}
	if o.InstalledChart == t.Chart {
		rookRoll = RookRoll(t.Chart, rolls)
	}
	return rookRoll, CephRoll(o.Cluster.Spec.CephVersion.Image, o.OperatorImage, rolls)
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

// retirementHolds says a retirement holds an upgrade step back: it has
// begun to change the cluster (or its pool). One that touched nothing yet
// (Pending, Suspended) does not: it waits for the upgrade itself before it
// touches anything (UnderWay), and counting it would have each wait for
// the other.
func retirementHolds(s cephv1alpha1.DiskRetirementStatus) bool {
	switch s.Phase {
	case "", cephv1alpha1.RetirementPending, cephv1alpha1.RetirementSuspended:
		return s.MarkedOut || s.OSDStopped
	}
	return !s.Phase.Finished()
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
