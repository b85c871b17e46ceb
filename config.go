package main

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

// RookChartVersion is the Rook operator chart the plugin installs. It is a
// build constant, not configuration: the renderers and the Go types are
// written and tested against this version's CRDs. It is a variable only so
// that the end-to-end test can link the plugin of the release before
// (-X main.RookChartVersion=v1.18.0) and upgrade from it; nothing assigns
// it at run time.
var RookChartVersion = "v1.18.11"

// Environment keys read by LoadConfig. Every key carries the FUNP_ prefix
// the plugin runtime reserves for plugin configuration.
const (
	EnvOperatorNamespace    = "FUNP_OPERATOR_NAMESPACE"
	EnvClusterNamespace     = "FUNP_CLUSTER_NAMESPACE"
	EnvCephImage            = "FUNP_CEPH_IMAGE"
	EnvMonCount             = "FUNP_MON_COUNT"
	EnvMgrCount             = "FUNP_MGR_COUNT"
	EnvAllowMultiplePerNode = "FUNP_ALLOW_MULTIPLE_PER_NODE"
	EnvDevLoopDevices       = "FUNP_DEV_LOOP_DEVICES"
	EnvMetrics              = "FUNP_METRICS"
	EnvCephFSMounter        = "FUNP_CEPHFS_MOUNTER"
	EnvS3Region             = "FUNP_S3_REGION"
	EnvChartRepository      = "FUNP_CHART_REPOSITORY"
	EnvDevInsecureCharts    = "FUNP_DEV_INSECURE_CHART_REPOSITORY"
	EnvChartDigest          = "FUNP_CHART_DIGEST"
	EnvCephMaxPGPerOSD      = "FUNP_CEPH_MAX_PG_PER_OSD"
	EnvCephClusterMaxBytes  = "FUNP_CEPHCLUSTER_MAX_BYTES"
	EnvKubeAPIQPS           = "FUNP_KUBE_API_QPS"
	EnvKubeAPIBurst         = "FUNP_KUBE_API_BURST"
	EnvLeaderElection       = "FUNP_LEADER_ELECTION"
	EnvRetirementStall      = "FUNP_RETIREMENT_STALL"
)

// ConfigKeys are every key LoadConfig reads; definition.yaml's configSchema
// must offer each one (definition_test.go).
var ConfigKeys = []string{
	EnvOperatorNamespace, EnvClusterNamespace, EnvCephImage, EnvMonCount, EnvMgrCount,
	EnvAllowMultiplePerNode, EnvDevLoopDevices, EnvMetrics, EnvCephFSMounter, EnvS3Region, EnvChartRepository,
	EnvDevInsecureCharts, EnvChartDigest, EnvCephMaxPGPerOSD, EnvCephClusterMaxBytes, EnvKubeAPIQPS, EnvKubeAPIBurst, EnvLeaderElection,
	EnvRetirementStall,
}

// Defaults for keys that are unset or empty, and the bounds Rook's
// CephCluster CRD puts on the daemon counts.
const (
	defaultNamespace       = "rook-ceph"
	defaultCephImage       = "quay.io/ceph/ceph:v19.2.3" // Rook v1.18's example image
	defaultChartRepository = "https://charts.rook.io/release"
	// publishedChartDigest would pin the archive of RookChartVersion that
	// defaultChartRepository publishes (its index.yaml's digest). It is
	// empty because that index could not be read where this was written
	// (no network; docs/security.md, "The supply chain"): until it is
	// filled in, an install from the default repository is verified only
	// when FUNP_CHART_DIGEST is set, and the install log says so.
	publishedChartDigest = ""
	defaultS3Region      = "nl-1"
	defaultMonCount      = 3
	defaultMgrCount      = 2
	maxMonCount          = 9
	maxMgrCount          = 5
	// The API client's rate limit. client-go's 5 QPS (controller-runtime's
	// 20) would take a quarter of an hour to publish a 10,000-disk
	// inventory at two writes a disk. What bounds the load on the API
	// server is the concurrency (8 inventory workers, each waiting for its
	// answer); the rate limit is the safety net above it, set where it does
	// not slow that pace down (docs/performance.md).
	// The retirement stall limit's bounds: below 5 minutes a drain that
	// merely waits for its next backfill slot would be aborted; above a day
	// a stuck one holds every other retirement and upgrade too long.
	minRetirementStall  = 5 * time.Minute
	maxRetirementStall  = 24 * time.Hour
	defaultKubeAPIQPS   = 1000
	defaultKubeAPIBurst = 2000
	maxKubeAPIQPS       = 10000
	// maxCephPGPerOSD bounds the setting far above any sane cluster's
	// (Ceph warns well below it); it only keeps typos out.
	maxCephPGPerOSD = 100000
	// maxCephClusterBytes keeps typos out of FUNP_CEPHCLUSTER_MAX_BYTES:
	// a CephCluster that large makes every watcher of it, Rook's operator
	// first, decode that much on each change.
	maxCephClusterBytes = 10 << 20
	// minCephClusterBytes keeps room for the CephCluster without devices.
	minCephClusterBytes = 64 << 10
)

// CephFS mounters the CephFS CSI driver accepts.
const (
	MounterKernel = "kernel"
	MounterFuse   = "fuse"
)

// Config is the plugin's install-time configuration.
type Config struct {
	// OperatorNamespace runs the Rook operator and the discovery daemon; the
	// CSI driver names (<ns>.rbd.csi.ceph.com) follow it.
	OperatorNamespace string
	// ClusterNamespace holds the CephCluster; StorageClass clusterID, the
	// CSI secrets and the bucket provisioner (<ns>.ceph.rook.io/bucket)
	// follow it. It is always OperatorNamespace (clusterNamespace says why);
	// the code keeps the two apart so that each value is named for its use.
	ClusterNamespace string
	// CephImage is the Ceph container image the CephCluster runs.
	CephImage string
	// MonCount is the number of Ceph monitors: odd, so they keep a quorum.
	MonCount int
	// MgrCount is the number of Ceph managers.
	MgrCount int
	// AllowMultiplePerNode lets several mons and mgrs share a node
	// (single-node dev clusters).
	AllowMultiplePerNode bool
	// DevLoopDevices is the dev loop-device mode: Rook lists loop devices
	// and the plugin publishes them as Disks. Never on real clusters, where a
	// loop device is somebody's image file.
	DevLoopDevices bool
	// Metrics runs Ceph's metrics: the mgr's Prometheus module and a
	// ceph-exporter on every node. Off, Rook disables the module and
	// removes the exporters (CephCluster spec.monitoring.metricsDisabled).
	Metrics bool
	// CephFSMounter is the CephFS StorageClass mounter: kernel or fuse.
	CephFSMounter string
	// S3Region is the region the bucket StorageClasses carry as a
	// parameter, for clients to read. Neither Rook's bucket provisioner nor
	// RGW reads it: a claim's BUCKET_REGION stays empty, and S3 clients may
	// sign with any region.
	S3Region string
	// ChartRepository is the Helm repository the Rook chart is installed from.
	ChartRepository string
	// ChartDigest pins the chart archive ("sha256:<hex>"): the install
	// refuses any other archive. Empty: not verified.
	ChartDigest string
	// CephMaxPGPerOSD is the cluster's mon_max_pg_per_osd (Ceph's default,
	// 250, unless an operator raised it): a consumer whose pools would pass
	// it is made with Ceph's warning, one that would pass it times
	// osd_max_pg_per_osd_hard_ratio (3) is refused before any Rook object
	// is made (budget.go).
	CephMaxPGPerOSD int
	// CephClusterMaxBytes is the largest CephCluster, as JSON, the plugin
	// writes: a device list that would pass it is not written
	// (cephcluster_size.go).
	CephClusterMaxBytes int
	// KubeAPIQPS and KubeAPIBurst rate-limit the plugin's API client.
	KubeAPIQPS, KubeAPIBurst int
	// LeaderElection makes one of several plugin instances (a rolling
	// update) the only writer, through a Lease in the operator namespace.
	LeaderElection bool
	// RetirementTiming is how a DiskRetirement waits on Ceph (zero:
	// retirement.DefaultTiming). Its stall limit is FUNP_RETIREMENT_STALL:
	// how long a drain, a stop or a replacement may go without progress
	// before the retirement gives the OSD back (big HDD clusters under
	// load drain slowly); the poll and sweep are not configurable, and
	// tests shorten them.
	RetirementTiming retirement.Timing
}

// LoadConfig reads the FUNP_ environment through getenv (os.Getenv in
// production, a map lookup in tests), fills defaults for empty keys and
// validates the result. The error lists every invalid key, each named.
func LoadConfig(getenv func(string) string) (Config, error) {
	r := envReader{getenv: getenv}
	operatorNamespace := r.namespace(EnvOperatorNamespace, defaultNamespace)
	cfg := Config{
		OperatorNamespace:    operatorNamespace,
		ClusterNamespace:     r.clusterNamespace(operatorNamespace),
		CephImage:            r.str(EnvCephImage, defaultCephImage),
		MonCount:             r.count(EnvMonCount, defaultMonCount, 1, maxMonCount),
		MgrCount:             r.count(EnvMgrCount, defaultMgrCount, 1, maxMgrCount),
		AllowMultiplePerNode: r.boolean(EnvAllowMultiplePerNode),
		DevLoopDevices:       r.boolean(EnvDevLoopDevices),
		Metrics:              r.booleanDefault(EnvMetrics, true),
		CephFSMounter:        r.oneOf(EnvCephFSMounter, MounterKernel, MounterKernel, MounterFuse),
		S3Region:             r.str(EnvS3Region, defaultS3Region),
		ChartRepository:      r.chartRepository(),
		ChartDigest:          r.chartDigest(),
		CephMaxPGPerOSD:      r.count(EnvCephMaxPGPerOSD, CephDefaultMaxPGPerOSD, 1, maxCephPGPerOSD),
		CephClusterMaxBytes:  r.count(EnvCephClusterMaxBytes, defaultCephClusterMaxBytes, minCephClusterBytes, maxCephClusterBytes),
		KubeAPIQPS:           r.count(EnvKubeAPIQPS, defaultKubeAPIQPS, 1, maxKubeAPIQPS),
		KubeAPIBurst:         r.count(EnvKubeAPIBurst, defaultKubeAPIBurst, 1, maxKubeAPIQPS),
		LeaderElection:       r.booleanDefault(EnvLeaderElection, true),
		RetirementTiming:     retirement.Timing{Stall: r.duration(EnvRetirementStall, retirement.DefaultTiming.Stall, minRetirementStall, maxRetirementStall)},
	}
	if cfg.MonCount%2 == 0 {
		r.fail(EnvMonCount, strconv.Itoa(cfg.MonCount), "must be odd so the monitors keep a quorum")
	}
	if err := errors.Join(r.errs...); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// envReader collects every invalid key instead of stopping at the first,
// so one start-up reports all of them.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (r *envReader) fail(key, value, why string) {
	r.errs = append(r.errs, fmt.Errorf("%s=%q: %s", key, value, why))
}

func (r *envReader) str(key, def string) string {
	if v := r.getenv(key); v != "" {
		return v
	}
	return def
}

func (r *envReader) namespace(key, def string) string {
	v := r.str(key, def)
	if msgs := validation.IsDNS1123Label(v); len(msgs) > 0 {
		r.fail(key, v, "not a namespace name: "+msgs[0])
	}
	return v
}

// clusterNamespace is FUNP_CLUSTER_NAMESPACE, which defaults to the
// operator namespace and may not be anything else. Rook's operator chart
// creates the CephCluster's ServiceAccounts, Roles and RoleBindings
// (rook-ceph-osd, rook-ceph-mgr, rook-ceph-cmd-reporter, rook-ceph-purge-osd,
// rook-ceph-rgw, ...) only in its release namespace
// (templates/cluster-rbac.yaml, namespace: .Release.Namespace); in any
// other namespace nothing creates them and mons, mgrs and OSDs never start.
// Refusing it at start-up is better than a cluster that half works.
func (r *envReader) clusterNamespace(operator string) string {
	v := r.namespace(EnvClusterNamespace, operator)
	if v != operator {
		r.fail(EnvClusterNamespace, v, fmt.Sprintf(
			"the CephCluster must be in the operator namespace %q: Rook's operator chart creates the cluster's service accounts and RBAC "+
				"(rook-ceph-osd, rook-ceph-mgr, ...) only there, so in %q its mons, mgrs and OSDs could never start; leave it empty or set it to %q",
			operator, v, operator))
	}
	return v
}

func (r *envReader) count(key string, def, lo, hi int) int {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail(key, v, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
		return def
	}
	return n
}

// duration reads a Go duration ("45m", "2h") within lo..hi.
func (r *envReader) duration(key string, def, lo, hi time.Duration) time.Duration {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		r.fail(key, v, fmt.Sprintf("must be a duration from %s to %s, such as 2h", lo, hi))
		return def
	}
	return d
}

func (r *envReader) boolean(key string) bool { return r.booleanDefault(key, false) }

func (r *envReader) booleanDefault(key string, def bool) bool {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail(key, v, "must be true or false")
	}
	return b
}

func (r *envReader) oneOf(key, def string, allowed ...string) string {
	v := r.str(key, def)
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	r.fail(key, v, fmt.Sprintf("must be one of %v", allowed))
	return def
}

// chartRepository is FUNP_CHART_REPOSITORY, which must be https: the
// chart it serves is installed with cluster-admin rights, and plain http
// lets anyone on the path swap it. Development setups that serve the chart
// from a local http server say so with FUNP_DEV_INSECURE_CHART_REPOSITORY.
func (r *envReader) chartRepository() string {
	v := r.url(EnvChartRepository, defaultChartRepository)
	if u, err := url.Parse(v); err == nil && u.Scheme == "http" && !r.boolean(EnvDevInsecureCharts) {
		r.fail(EnvChartRepository, v, "must be https (set "+EnvDevInsecureCharts+"=true for a development repository served over http)")
	}
	return v
}

// chartDigest is FUNP_CHART_DIGEST, the sha256 of the chart archive the
// repository must serve. Unset, the published archive's digest is pinned
// for the default repository; any other repository has no default (its
// archive is its own).
func (r *envReader) chartDigest() string {
	def := ""
	if r.str(EnvChartRepository, defaultChartRepository) == defaultChartRepository {
		def = publishedChartDigest
	}
	v := r.str(EnvChartDigest, def)
	if v != "" && !helmexec.ValidDigest(v) {
		r.fail(EnvChartDigest, v, "must be sha256: and 64 lower-case hex digits, as in a chart repository's index.yaml")
	}
	return v
}

func (r *envReader) url(key, def string) string {
	v := r.str(key, def)
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		r.fail(key, v, "must be an http(s) URL")
	}
	return v
}
