package upgrade

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// In-place upgrades: the pure decisions. Which step comes next, and whether
// it may start. docs/upgrades.md derives every rule from Rook's source and
// upgrade guides; section 5 is the table these functions implement.

// Step is one step of an in-place upgrade. Rook comes first and
// Ceph after, never both at once (Rook's upgrade guide: the operator chart
// is upgraded before the cluster's image, so the new operator is the one
// that rolls the daemons).
type Step string

const (
	// StepRook is a helm upgrade of the operator chart, same values,
	// same Ceph image.
	StepRook Step = "Rook"
	// StepCeph is a new spec.cephVersion.image on the CephCluster.
	StepCeph Step = "Ceph"
)

// Names of the upgrade preflight's checks (PreflightCheck.Name). Health is
// shared with the retirement's.
const (
	CheckVersions      = "Versions"
	CheckSettled       = "Settled"
	CheckRetirements   = "Retirements"
	CheckRookOverrides = "RookOverrides"
	CheckNodes         = "Nodes"
)

// NextStep is the step that brings the installed cluster closer to
// the plugin's: Rook when the installed chart is not the plugin's, else
// Ceph when the CephCluster's image is not, else none (false). Rook comes
// first (its upgrade guide), except when the target Rook would not run the
// cluster's Ceph and the installed Rook runs the target image: then only
// the Ceph step first leads anywhere (Rook v1.19 needs Ceph 19.2; a
// cluster on Ceph 18 under v1.18 steps to 19 first).
func NextStep(installedChart, targetChart, clusterImage, targetImage string) (Step, bool) {
	switch {
	case installedChart != targetChart && clusterImage != targetImage && cephFirst(installedChart, targetChart, clusterImage, targetImage):
		return StepCeph, true
	case installedChart != targetChart:
		return StepRook, true
	case clusterImage != targetImage:
		return StepCeph, true
	}
	return "", false
}

// cephFirst: the target Rook does not support the cluster's Ceph, and the
// installed Rook supports the target image's. Anything that does not
// parse is no reason to change the order (the preflight says what is
// wrong).
func cephFirst(installedChart, targetChart, clusterImage, targetImage string) bool {
	installed, errI := ParseRookVersion(installedChart)
	target, errT := ParseRookVersion(targetChart)
	running, errR := CephImageVersion(clusterImage)
	next, errN := CephImageVersion(targetImage)
	if errors.Join(errI, errT, errR, errN) != nil {
		return false
	}
	return cephSupportError(target, running) != "" && cephSupportError(installed, next) == "" && next.Compare(running) > 0
}

// Version is a release's major.minor.patch: Rook's v1.18.11, Ceph's 18.2.7.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare orders versions: negative when v is older than o.
func (v Version) Compare(o Version) int {
	return cmp.Or(cmp.Compare(v.Major, o.Major), cmp.Compare(v.Minor, o.Minor), cmp.Compare(v.Patch, o.Patch))
}

var (
	// rookTag is an official Rook release: the only versions Rook's guides
	// support upgrading between.
	rookTag = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)
	// cephRelease finds a Ceph version in the forms Rook and Ceph write it:
	// "18.2.7-0" (status.version.version), "ceph version 18.2.7 (hash)
	// reef (stable)" (status.ceph.versions), "v18.2.7" and
	// "v18.2.7-20250101" (image tags).
	cephRelease = regexp.MustCompile(`^(?:ceph version )?v?(\d+)\.(\d+)\.(\d+)(?:[-+ (].*)?$`)
)

// ParseRookVersion reads an official Rook tag, "v1.18.11".
func ParseRookVersion(s string) (Version, error) {
	return parseVersion(rookTag, s, "an official Rook release (vMAJOR.MINOR.PATCH)")
}

// ParseCephVersion reads a Ceph version in any form Rook or Ceph reports it.
func ParseCephVersion(s string) (Version, error) {
	return parseVersion(cephRelease, s, "a Ceph version (MAJOR.MINOR.PATCH)")
}

func parseVersion(re *regexp.Regexp, s, want string) (Version, error) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not %s", s, want)
	}
	var parts [3]int
	for i := range parts {
		n, err := strconv.Atoi(m[i+1])
		if err != nil {
			return Version{}, fmt.Errorf("%q is not %s: %w", s, want, err)
		}
		parts[i] = n
	}
	return Version{parts[0], parts[1], parts[2]}, nil
}

// CephImageVersion is the Ceph version an image's tag names. The plugin
// judges a Ceph step before Rook's detect-version Job has run the image, so
// a tag without a version ("latest", a digest alone) is refused rather than
// guessed.
func CephImageVersion(image string) (Version, error) {
	ref, _, _ := strings.Cut(image, "@")
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon <= slash {
		return Version{}, fmt.Errorf("image %q has no tag: tag it with the Ceph version it carries (v18.2.7)", image)
	}
	v, err := ParseCephVersion(ref[colon+1:])
	if err != nil {
		return Version{}, fmt.Errorf("image %q: its tag names no Ceph version (v18.2.7): %w", image, err)
	}
	return v, nil
}

// rookLine is what one Rook minor line accepts, as data: the Ceph it
// runs (pkg/operator/ceph/version/version.go: Minimum, supportedVersions;
// validateCephVersion refuses the rest), the Kubernetes it needs and the
// oldest release an upgrade to it may start from (each line's
// Documentation/Upgrade/rook-upgrade.md).
type rookLine struct {
	minCeph Version
	// cephMajors maps each supported Ceph major to the first release of
	// the line that supports it (Tentacle came in v1.18.8).
	cephMajors    map[int]Version
	minKubernetes Version
	upgradeFrom   Version
	// pluginLacks is what the plugin does not yet do that a Rook step to
	// the line needs; "" when nothing.
	pluginLacks string
}

// rookLines are the Rook lines the plugin knows, by major.minor.
var rookLines = map[[2]int]rookLine{
	{1, 18}: {
		minCeph:       Version{18, 2, 0},
		cephMajors:    map[int]Version{18: {1, 18, 0}, 19: {1, 18, 0}, 20: {1, 18, 8}},
		minKubernetes: Version{1, 29, 0},
		upgradeFrom:   Version{1, 17, 0},
	},
	{1, 19}: {
		minCeph:       Version{19, 2, 0},
		cephMajors:    map[int]Version{19: {1, 19, 0}, 20: {1, 19, 0}},
		minKubernetes: Version{1, 30, 0},
		upgradeFrom:   Version{1, 18, 0},
	},
	{1, 20}: {
		minCeph:       Version{19, 2, 0},
		cephMajors:    map[int]Version{19: {1, 20, 0}, 20: {1, 20, 0}},
		minKubernetes: Version{1, 31, 0},
		upgradeFrom:   Version{1, 19, 5},
		// docs/upgrades.md 3.2: the v1.20 chart drops the CSI drivers.
		pluginLacks: "Rook v1.20 moves the CSI drivers into the ceph-csi-drivers chart (drivers <operator namespace>.rbd.csi.ceph.com and .cephfs.csi.ceph.com), " +
			"which this plugin does not install: every volume's CSI driver would fail; wait for a plugin that installs it",
	},
}

func lineOf(rook Version) (rookLine, error) {
	line, ok := rookLines[[2]int{rook.Major, rook.Minor}]
	if !ok {
		return rookLine{}, fmt.Errorf("the plugin knows nothing of Rook v%d.%d", rook.Major, rook.Minor)
	}
	return line, nil
}

// cephSupportError says why Rook release rook would not run ceph, "" when
// it would.
func cephSupportError(rook Version, ceph Version) string {
	line, err := lineOf(rook)
	if err != nil {
		return err.Error()
	}
	if ceph.Compare(line.minCeph) < 0 {
		return fmt.Sprintf("Rook v%s needs Ceph %s or newer", rook, line.minCeph)
	}
	since, ok := line.cephMajors[ceph.Major]
	if !ok {
		return fmt.Sprintf("Rook v%s does not support Ceph %d", rook, ceph.Major)
	}
	if rook.Compare(since) < 0 {
		return fmt.Sprintf("Ceph %d needs Rook v%s or newer", ceph.Major, since)
	}
	return ""
}

// Facts is what the plugin reads before it starts an upgrade step.
type Facts struct {
	Step Step
	// InstalledRook is the installed release's chart version, TargetRook
	// the plugin's (RookChartVersion).
	InstalledRook, TargetRook string
	// ClusterImage is the CephCluster's spec.cephVersion.image,
	// DetectedImage its status.version.image (the image Rook's
	// detect-version Job last ran), TargetImage the plugin's CEPH_IMAGE.
	ClusterImage, DetectedImage, TargetImage string
	// RunningCeph are the versions the daemons run: the keys of the
	// CephCluster's status.ceph.versions.overall.
	RunningCeph []string
	// Kubernetes is the API server's version ("v1.34.2").
	Kubernetes string
	// Ceph is what Ceph says: health, checks and PG states.
	Ceph cephjob.Facts
	// OSDs counts the cluster's OSD Deployments.
	OSDs int
	// RookVersions and CephVersions are the distinct rook-version and
	// ceph-version labels of the cluster's Deployments (rook_cluster);
	// Unavailable names those not at their desired replicas, updated and
	// available.
	RookVersions, CephVersions, Unavailable []string
	// Retirements are the DiskRetirements in progress; HeldOSDs the OSD
	// Deployments scaled to zero or labelled do-not-reconcile.
	Retirements, HeldOSDs []string
	// UnfitNodes say which nodes that host a mon or an OSD are not Ready,
	// cordoned or gone ("node-b is NotReady"), sorted.
	UnfitNodes []string
	// StatusChecked is when Rook last copied Ceph's status into the
	// CephCluster (status.ceph.lastChecked; zero: unknown), Now when the
	// facts were read (zero: freshness is not judged).
	StatusChecked, Now time.Time
	// Rook's own switches on the CephCluster, which turn its checks off.
	DoNotReconcile, SkipUpgradeChecks, ContinueIfNotHealthy, AllowUnsupported bool
}

// Preflight judges whether f.Step may start. Every check is
// returned, passed or not; the step starts only when all pass. A refusal
// says what to fix, and changes nothing.
func Preflight(f Facts) []cephv1alpha1.PreflightCheck {
	return []cephv1alpha1.PreflightCheck{
		upgradeVersionsCheck(f),
		upgradeSettledCheck(f),
		upgradeHealthCheck(f),
		upgradeRetirementsCheck(f),
		upgradeOverridesCheck(f),
		upgradeNodesCheck(f),
	}
}

func check(name, msg string, passed bool) cephv1alpha1.PreflightCheck {
	return cephv1alpha1.PreflightCheck{Name: name, Passed: passed, Message: msg}
}

// upgradeVersionsCheck: the version step is one Rook's guides allow.
func upgradeVersionsCheck(f Facts) cephv1alpha1.PreflightCheck {
	var msg string
	var err error
	switch f.Step {
	case StepRook:
		msg, err = rookStep(f)
	case StepCeph:
		msg, err = cephStep(f)
	default:
		err = fmt.Errorf("unknown upgrade step %q", f.Step)
	}
	if err != nil {
		return check(CheckVersions, err.Error(), false)
	}
	return check(CheckVersions, msg, true)
}

// rookStep: an official release to a newer one, at most one minor further,
// from a release the target's guide starts from, onto a Kubernetes and a
// running Ceph the target supports.
func rookStep(f Facts) (string, error) {
	from, err := ParseRookVersion(f.InstalledRook)
	if err != nil {
		return "", fmt.Errorf("installed Rook: %w; Rook upgrades only between official releases", err)
	}
	to, err := ParseRookVersion(f.TargetRook)
	if err != nil {
		return "", fmt.Errorf("target Rook: %w", err)
	}
	line, err := lineOf(to)
	if err != nil {
		return "", err
	}
	switch {
	case to.Compare(from) < 0:
		return "", fmt.Errorf("Rook v%s is older than the installed v%s: Rook documents no downgrade; run a plugin with v%s or newer", to, from, from)
	case to.Major != from.Major || to.Minor > from.Minor+1:
		return "", fmt.Errorf("Rook v%s to v%s skips a minor release: Rook upgrades one minor at a time; install a plugin with Rook v%d.%d first", from, to, from.Major, from.Minor+1)
	case from.Compare(line.upgradeFrom) < 0:
		return "", fmt.Errorf("Rook v%d.%d upgrades from v%s or newer, not v%s: upgrade to v%s first", to.Major, to.Minor, line.upgradeFrom, from, line.upgradeFrom)
	case line.pluginLacks != "":
		return "", errors.New(line.pluginLacks)
	}
	if err := kubernetesSupports(f.Kubernetes, to, line); err != nil {
		return "", err
	}
	images := append(slices.Clone(f.RunningCeph), f.ClusterImage)
	for _, running := range images {
		if running == "" { // no CephCluster yet
			continue
		}
		v, err := runningCephVersion(running)
		if err != nil {
			return "", err
		}
		if why := cephSupportError(to, v); why != "" {
			return "", fmt.Errorf("the cluster runs Ceph %s and %s: upgrade Ceph first", v, why)
		}
	}
	return fmt.Sprintf("Rook v%s to v%s", from, to), nil
}

// runningCephVersion reads a running version or the CephCluster's image.
func runningCephVersion(s string) (Version, error) {
	if v, err := ParseCephVersion(s); err == nil {
		return v, nil
	}
	return CephImageVersion(s)
}

// PluginMinKubernetes is the oldest Kubernetes the plugin runs on, whatever
// Rook accepts (Rook v1.18 runs on 1.29): the guard of the DiskRetirement
// finalizer is a ValidatingAdmissionPolicy of admissionregistration.k8s.io/v1,
// served by default since Kubernetes 1.30 (internal/retirement/finalizerguard.go).
var PluginMinKubernetes = Version{1, 30, 0}

// KubernetesFloor refuses a Kubernetes older than PluginMinKubernetes: the
// plugin's start checks it before it applies anything.
func KubernetesFloor(server string) error {
	kube, err := parseKubernetes(server)
	if err != nil {
		return err
	}
	if kube.Compare(PluginMinKubernetes) < 0 {
		return fmt.Errorf("the plugin needs Kubernetes %d.%d or newer (the DiskRetirement finalizer guard is a ValidatingAdmissionPolicy of admissionregistration.k8s.io/v1); this cluster runs %s",
			PluginMinKubernetes.Major, PluginMinKubernetes.Minor, server)
	}
	return nil
}

// parseKubernetes reads the API server's version: "v1.34.2-gke.100" is
// its release part.
func parseKubernetes(server string) (Version, error) {
	kube, err := ParseRookVersion(strings.SplitN(server, "-", 2)[0])
	if err != nil {
		return Version{}, fmt.Errorf("Kubernetes version: %w", err)
	}
	return kube, nil
}

func kubernetesSupports(server string, rook Version, line rookLine) error {
	if err := KubernetesFloor(server); err != nil {
		return err
	}
	kube, err := parseKubernetes(server)
	if err != nil {
		return err
	}
	if kube.Compare(line.minKubernetes) < 0 {
		return fmt.Errorf("Rook v%s needs Kubernetes %d.%d or newer; this cluster runs %s", rook, line.minKubernetes.Major, line.minKubernetes.Minor, server)
	}
	return nil
}

// cephStep: an image whose tag names a Ceph the running Rook supports, no
// older than any daemon runs, at most one major further. The same version
// under a new tag is a step too: Rook rolls every daemon onto the image.
func cephStep(f Facts) (string, error) {
	rook, err := ParseRookVersion(f.InstalledRook)
	if err != nil {
		return "", fmt.Errorf("installed Rook: %w", err)
	}
	to, err := CephImageVersion(f.TargetImage)
	if err != nil {
		return "", err
	}
	if why := cephSupportError(rook, to); why != "" {
		return "", fmt.Errorf("%s: %s", f.TargetImage, why)
	}
	if len(f.RunningCeph) == 0 {
		return "", fmt.Errorf("the CephCluster reports no running Ceph versions (status.ceph.versions): wait until Rook has read them")
	}
	for _, running := range f.RunningCeph {
		from, err := ParseCephVersion(running)
		if err != nil {
			return "", fmt.Errorf("running Ceph: %w", err)
		}
		switch {
		case to.Compare(from) < 0:
			return "", fmt.Errorf("Ceph %s is older than the running %s: Ceph is never downgraded (Rook would only warn); set CEPH_IMAGE back to %s or newer", to, from, from)
		case to.Major > from.Major+1:
			return "", fmt.Errorf("Ceph %d to %d skips a major release: upgrade to Ceph %d first", from.Major, to.Major, from.Major+1)
		}
	}
	return fmt.Sprintf("Ceph %s to %s (%s)", strings.Join(f.RunningCeph, ", "), to, f.TargetImage), nil
}

// upgradeSettledCheck: no step is still under way. Mixed versions mean Rook
// is still rolling daemons (its guide's test for a finished upgrade is one
// rook-version and one ceph-version, every Deployment available); so does
// one rook-version that is not the running operator's.
func upgradeSettledCheck(f Facts) cephv1alpha1.PreflightCheck {
	var busy []string
	if len(f.RunningCeph) > 1 {
		busy = append(busy, "daemons run "+strings.Join(f.RunningCeph, " and "))
	}
	switch {
	case len(f.RookVersions) > 1:
		busy = append(busy, "Deployments carry rook-version "+strings.Join(f.RookVersions, " and "))
	case len(f.RookVersions) == 1 && f.InstalledRook != "" && f.RookVersions[0] != f.InstalledRook:
		// Just after a Rook step, before the new operator's first pass:
		// one version everywhere, and not the operator's.
		busy = append(busy, fmt.Sprintf("Deployments carry rook-version %s, not yet the running operator's %s", f.RookVersions[0], f.InstalledRook))
	}
	if len(f.CephVersions) > 1 {
		busy = append(busy, "Deployments carry ceph-version "+strings.Join(f.CephVersions, " and "))
	}
	if len(f.Unavailable) > 0 {
		busy = append(busy, strings.Join(f.Unavailable, ", ")+" not available")
	}
	if f.DetectedImage != f.ClusterImage {
		busy = append(busy, fmt.Sprintf("Rook has not yet detected the version of %s (status.version.image is %q)", f.ClusterImage, f.DetectedImage))
	}
	if len(busy) > 0 {
		return check(CheckSettled, message.Clauses(busy)+": wait until the last change has rolled out", false)
	}
	return check(CheckSettled, "one version everywhere, every daemon available", true)
}

// maxCephStatusAge is how old Rook's copy of Ceph's status may be: three
// of its 60 s intervals (cephstatus.go defaultStatusCheckInterval, Rook
// v1.18), so that one slow round is no refusal.
const maxCephStatusAge = 3 * time.Minute

// toleratedHealthChecks are the HEALTH_WARN checks an upgrade starts under
// (docs/upgrades.md, "Which HEALTH_WARN codes block"): none means a daemon
// is missing or data is at risk from a rolling restart. Any other check
// blocks: Rook tolerates every warning, and with fewer than three mons or
// OSDs it asks Ceph nothing before restarting a daemon, so the plugin is
// stricter, and a check nobody has reviewed is not waved through.
var toleratedHealthChecks = map[string]bool{
	"RECENT_CRASH": true, "RECENT_MGR_MODULE_CRASH": true,
	"AUTH_INSECURE_GLOBAL_ID_RECLAIM": true, "AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED": true,
	"PG_NOT_SCRUBBED": true, "PG_NOT_DEEP_SCRUBBED": true,
	"MDS_INSUFFICIENT_STANDBY": true, "TOO_FEW_OSDS": true, "TOO_FEW_PGS": true,
	"POOL_TOO_FEW_PGS": true, "MON_DISK_LOW": true,
}

// upgradeHealthCheck: no HEALTH_ERR, no check outside the tolerated ones
// (POOL_NO_REDUNDANCY only below three OSDs, where Ceph is never asked
// whether an OSD may stop), and every PG active and clean.
func upgradeHealthCheck(uf Facts) cephv1alpha1.PreflightCheck {
	fail := func(format string, args ...any) cephv1alpha1.PreflightCheck {
		return check(cephv1alpha1.CheckHealth, fmt.Sprintf(format, args...), false)
	}
	if age := uf.Now.Sub(uf.StatusChecked); !uf.Now.IsZero() && !uf.StatusChecked.IsZero() && age > maxCephStatusAge {
		return fail("Rook last copied Ceph's status into the CephCluster %s ago (it does each minute): the operator is down or cannot reach Ceph, and a step is judged on fresh facts only",
			age.Round(time.Second))
	}
	f := uf.Ceph
	switch f.Health.Status {
	case "":
		return fail("Ceph's health is unknown: the plugin could not read ceph status")
	case "HEALTH_ERR":
		return fail("Ceph reports HEALTH_ERR (%s): repair the cluster before upgrading it", message.Keys(f.Health.Checks))
	}
	var blocking []string
	for name, msg := range f.Health.Checks {
		if !toleratedHealthChecks[name] && (name != "POOL_NO_REDUNDANCY" || uf.OSDs >= 3) {
			blocking = append(blocking, name+": "+msg)
		}
	}
	if len(blocking) > 0 {
		slices.Sort(blocking)
		why := fmt.Sprintf("Ceph reports %s: resolve it before upgrading", strings.Join(blocking, "; "))
		if _, ok := f.Health.Checks["POOL_NO_REDUNDANCY"]; ok {
			why += " (a pool of one copy: with three or more OSDs Rook stops an OSD only when Ceph says it is ok to stop, which no OSD that holds a single copy is, and the roll would stall; give the consumer that asks replicas: 1 two copies or more first)"
		}
		return fail("%s", why)
	}
	if !f.AllPGsActiveClean() {
		return fail("not every PG is active+clean (%s): wait until Ceph has recovered", f.PGsNotActiveClean())
	}
	msg := "Ceph reports " + f.Health.Status + ", every PG active+clean"
	if len(f.Health.Checks) > 0 {
		msg += " (tolerated: " + message.Keys(f.Health.Checks) + ")"
	}
	return check(cephv1alpha1.CheckHealth, msg, true)
}

// upgradeRetirementsCheck: no disk retirement under way and no OSD held
// down. Rook skips a held OSD's update, its OSD pass then stalls, and the
// versions never converge; a retirement moves data the roll would disturb.
func upgradeRetirementsCheck(f Facts) cephv1alpha1.PreflightCheck {
	var busy []string
	if len(f.Retirements) > 0 {
		busy = append(busy, "retirement "+strings.Join(f.Retirements, ", ")+" is in progress")
	}
	if len(f.HeldOSDs) > 0 {
		busy = append(busy, strings.Join(f.HeldOSDs, ", ")+" held (scaled to zero or do-not-reconcile)")
	}
	if len(busy) > 0 {
		return check(CheckRetirements, message.Clauses(busy)+": let it finish or abort it first", false)
	}
	return check(CheckRetirements, "no retirement in progress, no OSD held", true)
}

// upgradeOverridesCheck: none of Rook's own switches that turn its upgrade
// checks off, or its reconcile, is set on the CephCluster. The plugin never
// sets them; someone did by hand, and an upgrade on top is not safe.
func upgradeOverridesCheck(f Facts) cephv1alpha1.PreflightCheck {
	set := []struct {
		on   bool
		what string
	}{
		{f.DoNotReconcile, "the ceph.rook.io/do-not-reconcile label (Rook would roll nothing)"},
		{f.SkipUpgradeChecks, "spec.skipUpgradeChecks"},
		{f.ContinueIfNotHealthy, "spec.continueUpgradeAfterChecksEvenIfNotHealthy"},
		{f.AllowUnsupported, "spec.cephVersion.allowUnsupported"},
	}
	var on []string
	for _, s := range set {
		if s.on {
			on = append(on, s.what)
		}
	}
	if len(on) > 0 {
		return check(CheckRookOverrides, "the CephCluster has "+message.Clauses(on)+" set: remove it before upgrading", false)
	}
	return check(CheckRookOverrides, "none of Rook's check overrides is set", true)
}

// upgradeNodesCheck: every node that hosts a mon or an OSD is Ready and
// schedulable. Rook restarts each daemon of a step and gives it 5 minutes
// to come back (k8sutil.WaitForDeploymentToStart), and waits for the mons'
// quorum after each mon: a daemon pinned to a node that is NotReady,
// cordoned or gone does not come back, and the roll stalls with it down.
func upgradeNodesCheck(f Facts) cephv1alpha1.PreflightCheck {
	if len(f.UnfitNodes) > 0 {
		return check(CheckNodes, message.Clauses(f.UnfitNodes)+": a daemon there would not come back from its restart; bring the node back or uncordon it first", false)
	}
	return check(CheckNodes, "every node with a mon or an OSD is Ready and schedulable", true)
}
