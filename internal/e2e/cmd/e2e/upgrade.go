package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/e2e/images"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// retaggedCephImage is the Ceph image under a second tag: the same Ceph,
// so that the Ceph step rolls every daemon onto a new image on a machine
// that has one Ceph release (Debian's 18.2.7). It proves Rook's ordered,
// daemon-by-daemon restart under the plugin's checked step; it does not
// prove what a new Ceph release does to its daemons' data on disk (no
// on-disk format changes, no new feature flags).
const retaggedCephImage = images.CephImage + "-e2e2"

// upgrade deploys the current plugin over the cluster the previous one
// installed (platform: Rook cachedir.PreviousRookVersion), with the join
// phase's payload in it, as an operator upgrades: a new plugin release,
// then a new CEPH_IMAGE. The plugin takes the Rook step (helm upgrade) and,
// after the new operator has rewritten every daemon, the Ceph step (the
// image on the CephCluster), each after its preflight; Rook rolls the
// daemons; Ceph returns to HEALTH_OK and the payload reads back after each
// step; the plugin's record on the CephCluster (which the console shows)
// and its Events say Done.
//
// Each step is taken only when the cluster is not past it yet, so a run
// that stopped between the steps continues with the next (-from upgrade on
// a kept cluster).
func (r *run) upgrade() error {
	if !r.upgradeAsked {
		r.step("not asked for (-upgrade): the cluster runs Rook %s from the start", cachedir.RookVersion)
		return nil
	}
	installed, err := r.installedRookChart(r.ctx)
	if err != nil {
		return err
	}
	cluster, err := r.cephCluster(r.ctx)
	if err != nil {
		return err
	}
	image, _, _ := unstructured.NestedString(cluster.Object, "spec", "cephVersion", "image")
	steps := []struct {
		name string
		due  bool
		take func() error
	}{
		{"Rook", installed == "rook-ceph-"+cachedir.PreviousRookVersion, r.upgradeRook},
		{"Ceph", image == images.CephImage, r.upgradeCeph},
	}
	switch {
	case installed != "rook-ceph-"+cachedir.PreviousRookVersion && installed != "rook-ceph-"+cachedir.RookVersion:
		return fmt.Errorf("the operator Deployment is from chart %q, neither Rook %s's nor %s's", installed, cachedir.PreviousRookVersion, cachedir.RookVersion)
	case !steps[0].due && image == retaggedCephImage:
		r.step("the cluster runs Rook %s and %s already: nothing to upgrade", cachedir.RookVersion, retaggedCephImage)
		return nil
	}
	if err := r.verifyPayload("before the upgrade"); err != nil {
		return err
	}
	for _, step := range steps {
		if !step.due {
			r.step("the %s step is behind this cluster already", step.name)
			continue
		}
		if err := step.take(); err != nil {
			return err
		}
		if err := r.waitHealthOK(10 * time.Minute); err != nil {
			return err
		}
		if err := r.verifyPayload("after the " + step.name + " step"); err != nil {
			return err
		}
	}
	return r.upgradeEvents()
}

// upgradeRook deploys the plugin built for Rook cachedir.RookVersion and
// waits for its Rook step: the chart upgraded, the new operator running,
// and every daemon Deployment rewritten by it and rolled out.
func (r *run) upgradeRook() error {
	before, err := r.daemonPods(r.ctx)
	if err != nil {
		return err
	}
	if err := r.deployPlugin(cachedir.RookVersion, images.CephImage); err != nil {
		return err
	}
	start := time.Now()
	chart := "rook-ceph-" + cachedir.RookVersion
	err = r.until(15*time.Minute, func(ctx context.Context) error {
		var operator appsv1.Deployment
		if err := r.c.Get(ctx, operatorKey, &operator); err != nil {
			return err
		}
		if got := operator.Labels[rook.HelmChartLabel]; got != chart {
			return fmt.Errorf("the operator Deployment is from chart %s, want %s; the plugin says %s", got, chart, r.pluginMessage(ctx))
		}
		if !rolledOut(&operator) {
			return fmt.Errorf("the operator Deployment has not rolled out")
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.step("Rook step taken: the operator Deployment is %s's, rolled out, %s after the new plugin was deployed", chart, time.Since(start).Round(time.Second))
	_, restarted, kept, err := r.rollAfter(before, "Rook", cachedir.RookVersion, func(d *appsv1.Deployment) bool {
		return d.Labels[rook.VersionLabel] == cachedir.RookVersion
	})
	if err != nil {
		return err
	}
	r.step("Rook %s rewrote every daemon's Deployment: %d pods restarted on its specs (%s), %d kept (their pod spec unchanged)",
		cachedir.RookVersion, len(restarted), strings.Join(restarted, ", "), len(kept))
	return nil
}

// upgradeCeph tags the Ceph image anew on every node, sets it as the
// installation's CEPH_IMAGE (the plugin restarts with it and takes the Ceph
// step), and waits for Rook to roll every daemon onto it, each pod
// restarted.
func (r *run) upgradeCeph() error {
	for _, node := range r.nodes {
		if _, err := r.sh("ctr", "--address", containerdSocket(node), "-n", "k8s.io", "images", "tag", "--force", images.CephImage, retaggedCephImage); err != nil {
			return err
		}
	}
	r.step("Ceph image %s tagged %s on every node", images.CephImage, retaggedCephImage)
	before, err := r.daemonPods(r.ctx)
	if err != nil {
		return err
	}
	if err := r.deployPlugin(cachedir.RookVersion, retaggedCephImage); err != nil {
		return err
	}
	after, restarted, kept, err := r.rollAfter(before, "Ceph", retaggedCephImage, func(d *appsv1.Deployment) bool {
		return slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == retaggedCephImage }) &&
			!slices.ContainsFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == images.CephImage })
	})
	if err != nil {
		return err
	}
	if len(kept) > 0 {
		return fmt.Errorf("pods of %s kept running across the Ceph roll", strings.Join(kept, ", "))
	}
	for name, p := range after {
		if !slices.Contains(p.images, retaggedCephImage) {
			return fmt.Errorf("daemon %s's pod runs %v, not %s", name, p.images, retaggedCephImage)
		}
	}
	r.step("Ceph roll done: every daemon's pod (%d) restarted on %s", len(restarted), retaggedCephImage)
	return nil
}

// rollAfter waits for a step's roll (waitRoll) and compares the daemons'
// pods with those before it: the pods after, and the Deployments whose pod
// was replaced or kept.
func (r *run) rollAfter(before map[string]daemonPod, step, to string, onTarget func(*appsv1.Deployment) bool) (after map[string]daemonPod, restarted, kept []string, err error) {
	if err := r.waitRoll(step, to, onTarget); err != nil {
		return nil, nil, nil, err
	}
	if after, err = r.daemonPods(r.ctx); err != nil {
		return nil, nil, nil, err
	}
	restarted, kept = comparePods(before, after)
	return after, restarted, kept, nil
}

// upgradeRecord is the plugin's record on the CephCluster (UpgradeState).
type upgradeRecord struct {
	Stage   string   `json:"stage"`
	Step    string   `json:"step"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Done    int      `json:"done"`
	Total   int      `json:"total"`
	Pending []string `json:"pending"`
}

// waitRoll waits until every daemon Deployment is on the step's target
// (onTarget) and rolled out, and the plugin's record says the step is Done,
// printing the record each time it changes: the roll, daemon by daemon, as
// the console shows it.
func (r *run) waitRoll(step, to string, onTarget func(*appsv1.Deployment) bool) error {
	start := time.Now()
	var shown upgradeRecord
	err := r.until(30*time.Minute, func(ctx context.Context) error {
		record, err := r.upgradeRecord(ctx)
		if err != nil {
			return err
		}
		if record.Stage != shown.Stage || record.Step != shown.Step || record.Done != shown.Done {
			shown = record
			r.step("the plugin's record: %s %s %s → %s, %d of %d daemons, waiting for %v", record.Stage, record.Step, record.From, record.To, record.Done, record.Total, record.Pending)
		}
		var daemons appsv1.DeploymentList
		if err := r.c.List(ctx, &daemons, client.InNamespace("rook-ceph"), client.MatchingLabels{rook.ClusterLabel: "rook-ceph"}); err != nil {
			return err
		}
		for i := range daemons.Items {
			if d := &daemons.Items[i]; !onTarget(d) || !rolledOut(d) {
				return fmt.Errorf("%s not yet on %s and rolled out; the plugin says %s", d.Name, to, r.pluginMessage(ctx))
			}
		}
		if record.Stage != "Done" || record.Step != step || record.To != to || record.Done != len(daemons.Items) {
			return fmt.Errorf("the plugin's record is %+v, want %s Done to %s with %d daemons", record, step, to, len(daemons.Items))
		}
		return nil
	})
	if err == nil {
		r.step("%s step to %s Done after %s: the plugin's record says every daemon (%d) runs it", step, to, time.Since(start).Round(time.Second), shown.Total)
	}
	return err
}

// operatorKey is Rook's operator Deployment; rook.HelmChartLabel on it
// names the chart release that made it ("rook-ceph-v1.18.11").
var operatorKey = client.ObjectKey{Namespace: "rook-ceph", Name: rook.OperatorDeployment}

// installedRookChart is the chart release that made the operator
// Deployment.
func (r *run) installedRookChart(ctx context.Context) (string, error) {
	var operator appsv1.Deployment
	if err := r.c.Get(ctx, operatorKey, &operator); err != nil {
		return "", err
	}
	return operator.Labels[rook.HelmChartLabel], nil
}

// upgradeRecord reads the plugin's record on the CephCluster.
func (r *run) upgradeRecord(ctx context.Context) (upgradeRecord, error) {
	var record upgradeRecord
	cluster, err := r.cephCluster(ctx)
	if err != nil {
		return record, err
	}
	raw := cluster.GetAnnotations()[cephv1alpha1.UpgradeAnnotation]
	if raw == "" {
		return record, nil
	}
	return record, json.Unmarshal([]byte(raw), &record)
}

// pluginMessage is the installation's status message: what the plugin
// reports (a refused step says why).
func (r *run) pluginMessage(ctx context.Context) string {
	status, err := r.installationStatus(ctx)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%v: %q", status["phase"], status["message"])
}

// upgradeEvents checks the Events the plugin recorded about the
// CephCluster: a roll started and finished for each step.
func (r *run) upgradeEvents() error {
	var list eventsv1.EventList
	if err := r.c.List(r.ctx, &list, client.InNamespace("rook-ceph")); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, e := range list.Items {
		if e.Regarding.Kind == "CephCluster" && (e.Reason == "Upgrading" || e.Reason == "Upgraded" || e.Reason == "UpgradeRefused" || e.Reason == "UpgradeWaiting") {
			for _, step := range []string{"Rook", "Ceph"} {
				if strings.Contains(e.Note, step) {
					seen[e.Reason+" "+step] = e.Note
				}
			}
		}
	}
	for _, want := range []string{"Upgrading Rook", "Upgraded Rook", "Upgrading Ceph", "Upgraded Ceph"} {
		if _, ok := seen[want]; !ok {
			return fmt.Errorf("no %s Event about the CephCluster; seen %v", want, seen)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(seen)) {
		r.step("Event %s: %s", key, seen[key])
	}
	return nil
}

// daemonPod is a running daemon pod: its UID and its containers' images.
type daemonPod struct {
	uid    string
	images []string
}

// daemonPods are the pods of the cluster's daemon Deployments, by
// Deployment.
func (r *run) daemonPods(ctx context.Context) (map[string]daemonPod, error) {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace("rook-ceph"), client.MatchingLabels{rook.ClusterLabel: "rook-ceph"}); err != nil {
		return nil, err
	}
	out := map[string]daemonPod{}
	for _, p := range pods.Items {
		owner := ""
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "ReplicaSet" {
				owner = strings.TrimSuffix(ref.Name, "-"+p.Labels["pod-template-hash"])
			}
		}
		if owner == "" || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue // a Job's pod, or one on its way out
		}
		var imgs []string
		for _, c := range p.Spec.Containers {
			imgs = append(imgs, c.Image)
		}
		out[owner] = daemonPod{uid: string(p.UID), images: imgs}
	}
	return out, nil
}

// comparePods names the Deployments whose pod was replaced between two
// looks, and those whose pod is the same.
func comparePods(before, after map[string]daemonPod) (restarted, kept []string) {
	for name, p := range after {
		if b, ok := before[name]; ok && b.uid == p.uid {
			kept = append(kept, name)
		} else {
			restarted = append(restarted, name)
		}
	}
	slices.Sort(restarted)
	slices.Sort(kept)
	return restarted, kept
}

// rolledOut says whether the Deployment controller saw d's last spec and
// every desired replica is updated and available.
func rolledOut(d *appsv1.Deployment) bool {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas >= replicas && d.Status.AvailableReplicas >= replicas
}
