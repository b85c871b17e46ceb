package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/upgrade"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

// RookReleaseName is the Helm release of the Rook operator chart.
const RookReleaseName = "rook-ceph"

// rookCRDs are the Rook CRDs the manager watches: the cache cannot sync
// until they are Established (pitfalls 12).
var rookCRDs = []string{
	"cephclusters.ceph.rook.io",
	"cephblockpools.ceph.rook.io",
	"cephfilesystems.ceph.rook.io",
	"cephobjectstores.ceph.rook.io",
}

// chartRelease is the Helm release the plugin wants.
type chartRelease struct {
	Name, Namespace string
	RepoURL, Chart  string
	Version         string
	// Digest pins the chart archive (Config.ChartDigest); empty: not checked.
	Digest string
	Values map[string]any
	// Exclusive: no other operation on the release runs meanwhile (see
	// Exclusive of pluginruntime/helpers/helm.Release).
	Exclusive bool
}

// chartInstaller installs a chart release with upgrade --install semantics.
// An installed release with the same chart version and values is left as it
// is, so a restart writes nothing.
type chartInstaller interface {
	EnsureRelease(ctx context.Context, release chartRelease) error
}

// helmBinary is the helper that runs Helm for the plugin, built from
// ./cmd/ceph-rook-helm and shipped beside the plugin's binary. Helm (with
// kubectl, kustomize and the OCI clients it pulls in) is over a quarter of the
// plugin's size, resident for the life of the process although it runs
// once per start; in a child process it is gone when the install is done.
const helmBinary = "ceph-rook-helm"

// execInstaller installs charts by running the helm helper binary.
type execInstaller struct {
	runner helmexec.Runner
	config *rest.Config
	log    *slog.Logger
}

// newExecInstaller finds the helper beside the plugin or on $PATH.
func newExecInstaller(config *rest.Config, log *slog.Logger) (chartInstaller, error) {
	bin, err := helmexec.Locate(helmBinary)
	if err != nil {
		return nil, fmt.Errorf("%w; build it beside the plugin with `go build ./cmd/%s`", err, helmBinary)
	}
	return &execInstaller{runner: helmexec.Runner{Binary: bin}, config: config, log: log}, nil
}

// EnsureRelease installs or upgrades the release; an identical release is
// left unchanged. The helper's log lines go to the plugin's stderr.
func (e *execInstaller) EnsureRelease(ctx context.Context, r chartRelease) error {
	res, err := e.runner.InstallOrUpgrade(ctx, e.config, helmexec.Request{
		Name:      r.Name,
		Namespace: r.Namespace,
		Chart:     helmexec.Chart{RepoURL: r.RepoURL, Name: r.Chart, Version: r.Version, Digest: r.Digest},
		Values:    r.Values,
		Exclusive: r.Exclusive,
	})
	if err != nil {
		return err
	}
	e.log.Info("Rook chart reconciled", "action", res.Action, "revision", res.Revision)
	return nil
}

// install is what Start does before the manager runs, each step idempotent:
// the upgrade plan (upgrade.Next: the next upgrade step, if any, and its
// preflight), the Rook operator chart (upgraded only when a Rook step
// passed its preflight), our CRDs (applied only when their manifests
// changed), the wait for every CRD the manager watches to be Established,
// and the singleton CephCluster (created when absent; on one the plugin
// created, the configured daemon counts are applied, and the configured
// image when its Ceph step passed). It returns the plan, whose refusal
// the plugin reports.
func install(ctx context.Context, c client.Client, charts chartInstaller, cfg Config, kubeVersion string, log *slog.Logger) (upgrade.Plan, error) {
	// Start takes a step only where there is no Ceph yet to ask about its
	// PGs; the upgrade controller asks Ceph and takes the others.
	plan, err := upgrade.Next(ctx, c, upgradeTargets(cfg, kubeVersion), time.Now())
	if err != nil {
		return upgrade.Plan{}, err
	}
	logUpgradePlan(plan, log)
	if plan.RookReleaseMayChange() {
		if err := ensureRookRelease(ctx, charts, cfg, log); err != nil {
			return plan, err
		}
	}
	ours, err := applyOwnCRDs(ctx, c)
	if err != nil {
		return plan, err
	}
	if err := waitEstablished(ctx, c, append(ours, rookCRDs...)); err != nil {
		return plan, err
	}
	if err := retirement.ApplyFinalizerGuard(ctx, c, fieldOwner); err != nil {
		return plan, err
	}
	clusterCfg := cfg
	clusterCfg.CephImage = plan.CephImageToApply(cfg.CephImage)
	created, err := ensureCephCluster(ctx, c, clusterCfg, log)
	if err != nil {
		return plan, err
	}
	if created {
		log.Info("created the CephCluster", "namespace", cfg.ClusterNamespace, "name", CephClusterName)
	}
	return plan, nil
}

// ensureRookRelease installs the Rook operator chart, or upgrades the
// release to the plugin's chart with the same values.
func ensureRookRelease(ctx context.Context, charts chartInstaller, cfg Config, log *slog.Logger) error {
	release := chartRelease{
		Name:      RookReleaseName,
		Namespace: cfg.OperatorNamespace,
		RepoURL:   cfg.ChartRepository,
		Chart:     rook.ChartName,
		Version:   RookChartVersion,
		Digest:    cfg.ChartDigest,
		Values:    RookValues(cfg),
		// install runs under the install lock, or as the only instance.
		Exclusive: true,
	}
	if release.Digest == "" {
		log.Warn("the Rook chart archive is not verified: no digest is pinned for this repository; set "+EnvChartDigest,
			"repository", cfg.ChartRepository, "chart", rook.ChartName, "version", RookChartVersion)
	}
	if err := charts.EnsureRelease(ctx, release); err != nil {
		return fmt.Errorf("install the %s chart %s from %s: %w", rook.ChartName, RookChartVersion, cfg.ChartRepository, err)
	}
	return nil
}

// upgradeTargets are what this plugin brings to an upgrade, and where.
func upgradeTargets(cfg Config, kubeVersion string) upgrade.Targets {
	return upgrade.Targets{
		Chart: RookChartVersion, CephImage: cfg.CephImage, Kubernetes: kubeVersion,
		OperatorNamespace: cfg.OperatorNamespace, ClusterNamespace: cfg.ClusterNamespace, ClusterName: CephClusterName,
	}
}

// logUpgradePlan says which upgrade step this start takes, or why not.
func logUpgradePlan(plan upgrade.Plan, log *slog.Logger) {
	if plan.Step == "" {
		return
	}
	for _, c := range plan.Checks {
		log.Info("upgrade preflight", "step", plan.Step, "check", c.Name, "passed", c.Passed, "message", c.Message)
	}
	if plan.Allowed() {
		log.Info("upgrade step starts", "step", plan.Step, "from", plan.From, "to", plan.To)
		return
	}
	log.Error("upgrade step refused; nothing changed", "step", plan.Step, "from", plan.From, "to", plan.To, "status", plan.Status().Message)
}

// ensureCephCluster creates the singleton CephCluster when there is none
// and there never was one (ClusterRecordName). On one the plugin created
// (its label says so) it applies the settings the configuration owns
// (ApplyClusterSettings) with a merge patch of those fields alone;
// spec.storage belongs to the device-list job and the rest to whoever set
// it. A CephCluster someone else made is not written: a difference from the
// configuration is logged, naming the fields.
//
// A CephCluster that was there and is gone is not created again: before it
// lets it go, Rook lifts the disaster-protection finalizer of its mon Secret
// (the cluster's fsid and keys) and mon-endpoints ConfigMap, which the
// CephCluster owns, so both are garbage-collected with it
// (pkg/operator/ceph/cluster/controller.go removeFinalizers). A new one
// would be a new Ceph cluster with a new fsid, whose mons do not start on
// the old ones' data in dataDirHostPath and whose OSD prepare skips the
// disks that hold the old cluster's OSDs. The plugin says so (degraded) and waits for
// the operator to restore it, or to start over deliberately.
func ensureCephCluster(ctx context.Context, c client.Client, cfg Config, log *slog.Logger) (bool, error) {
	want := BootstrapCephCluster(cfg)
	have := &cephv1.CephCluster{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case err == nil:
		if err := recordCephCluster(ctx, c, have); err != nil {
			return false, err
		}
		return false, applyClusterSettings(ctx, c, have, cfg, log)
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("read CephCluster %s/%s: %w", want.Namespace, want.Name, err)
	}
	record := &corev1.ConfigMap{}
	err = c.Get(ctx, client.ObjectKey{Namespace: want.Namespace, Name: ClusterRecordName}, record)
	switch {
	case err == nil:
		log.Error("the CephCluster was deleted; the plugin does not create it again (a new one would not own the OSDs on the disks): restore it, or delete the record to start over",
			"namespace", want.Namespace, "name", want.Name, "record", ClusterRecordName, "recordedUID", record.Data[clusterRecordUIDKey])
		return false, nil
	case !apierrors.IsNotFound(err):
		return false, fmt.Errorf("read ConfigMap %s/%s: %w", want.Namespace, ClusterRecordName, err)
	}
	if err := createNamespaceIfMissing(ctx, c, want.Namespace); err != nil {
		return false, err
	}
	if err := c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return false, fmt.Errorf("create CephCluster %s/%s: %w", want.Namespace, want.Name, err)
	}
	return true, recordCephCluster(ctx, c, want)
}

// ClusterRecordName is the ConfigMap beside the CephCluster that records
// that there was one. It is deliberately not owned by the CephCluster: it
// must outlive it. Deleting it (after cleaning the disks and
// dataDirHostPath) lets the plugin create a new CephCluster on its next
// start.
const ClusterRecordName = "ceph-rook-cephcluster-record"

const clusterRecordUIDKey = "uid"

// recordCephCluster writes the record of a CephCluster, once.
func recordCephCluster(ctx context.Context, c client.Client, cluster *cephv1.CephCluster) error {
	record := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterRecordName, Namespace: cluster.Namespace,
			Labels: map[string]string{cephv1alpha1.ManagedByLabel: cephv1alpha1.ManagedByValue}},
		Data: map[string]string{"cephCluster": cluster.Name, clusterRecordUIDKey: string(cluster.UID)},
	}
	err := c.Get(ctx, client.ObjectKeyFromObject(record), &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.Create(ctx, record); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("record the CephCluster in ConfigMap %s/%s: %w", record.Namespace, record.Name, err)
	}
	return nil
}

// applyClusterSettings brings an existing CephCluster's configured fields
// to the configuration (ensureCephCluster).
func applyClusterSettings(ctx context.Context, c client.Client, have *cephv1.CephCluster, cfg Config, log *slog.Logger) error {
	before := have.DeepCopy()
	if !ApplyClusterSettings(&have.Spec, cfg) {
		return nil
	}
	if have.Labels[cephv1alpha1.ManagedByLabel] != cephv1alpha1.ManagedByValue {
		log.Warn("the CephCluster was not created by the plugin and differs from its configuration; it is left as it is",
			"namespace", have.Namespace, "name", have.Name,
			"image", before.Spec.CephVersion.Image, "configuredImage", cfg.CephImage,
			"monCount", before.Spec.Mon.Count, "configuredMonCount", cfg.MonCount,
			"mgrCount", before.Spec.Mgr.Count, "configuredMgrCount", cfg.MgrCount)
		return nil
	}
	if err := c.Patch(ctx, have, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("apply the configuration to CephCluster %s/%s: %w", have.Namespace, have.Name, err)
	}
	log.Info("applied the configuration to the CephCluster", "namespace", have.Namespace, "name", have.Name,
		"image", cfg.CephImage, "monCount", cfg.MonCount, "mgrCount", cfg.MgrCount, "allowMultiplePerNode", cfg.AllowMultiplePerNode, "metrics", cfg.Metrics)
	return nil
}

// createNamespaceIfMissing creates a namespace that does not exist yet
// (Helm creates the operator namespace, which is also the cluster's, but a
// CephCluster may be made before the chart is installed: just run, tests).
func createNamespaceIfMissing(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}
