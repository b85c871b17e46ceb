package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/browser"
)

// outage stops a node that holds OSDs (cluster.sh stop-node: kubelet,
// kube-proxy, every container and the runtime, as a machine that lost
// power) and checks what everyone says: Ceph reports the OSDs down and the
// PGs degraded while the payload still reads back (two copies of three
// remain); Rook's CephCluster, the plugin's status and the console's
// overview say what Ceph says; nothing leaves the CephCluster. The node
// comes back, Ceph returns to HEALTH_OK, and the payload reads back again.
func (r *run) outage() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: no outage to survive")
		return nil
	}
	node, err := r.outageNode()
	if err != nil {
		return err
	}
	before, err := r.readPlacement(r.ctx)
	if err != nil {
		return err
	}
	osds := before.osdsOn(node)
	if err := r.waitOSDsUp(len(before.up)); err != nil {
		return err
	}
	devices, err := r.clusterDevices()
	if err != nil {
		return err
	}
	start := time.Now()
	if _, err := r.sh("hack/e2e/cluster.sh", "stop-node", node); err != nil {
		return err
	}
	r.step("node %s stopped (kubelet, kube-proxy, containerd and every container); CRUSH places osd %v there", node, osds)
	if err := r.waitOSDsDown(osds); err != nil {
		return err
	}
	r.step("Ceph: osd %v down after %s", osds, time.Since(start).Round(time.Second))
	if err := r.waitHealthChecks(start, "OSD_DOWN", "PG_DEGRADED"); err != nil {
		return err
	}
	if err := r.waitNodeNotReady(node); err != nil {
		return err
	}
	if err := r.verifyPayload("with " + node + " down"); err != nil {
		return err
	}
	if err := r.reportsSayWhatCephSays(); err != nil {
		return err
	}
	if err := r.nothingRemoved(devices); err != nil {
		return err
	}
	back := time.Now()
	if _, err := r.sh("hack/e2e/cluster.sh", "start-node", node); err != nil {
		return err
	}
	r.step("node %s started again", node)
	if err := r.waitOSDsUp(len(before.up)); err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	r.step("back to HEALTH_OK %s after node %s came back (%s after it went down)", time.Since(back).Round(time.Second), node, time.Since(start).Round(time.Second))
	return r.verifyPayload("after " + node + " came back")
}

// waitOSDsDown waits until Ceph marks every one of osds down.
func (r *run) waitOSDsDown(osds []int) error {
	return r.until(5*time.Minute, func(ctx context.Context) error {
		p, err := r.readPlacement(ctx)
		if err != nil {
			return err
		}
		for _, osd := range osds {
			if p.up[osd] {
				return fmt.Errorf("osd.%d is still up", osd)
			}
		}
		return nil
	})
}

// waitHealthChecks waits until Ceph's health holds every one of want and
// prints its checks.
func (r *run) waitHealthChecks(start time.Time, want ...string) error {
	var checks map[string]string
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		status, current, err := r.cephHealth(ctx)
		if err != nil {
			return err
		}
		checks = current
		for _, w := range want {
			if _, ok := checks[w]; !ok {
				return fmt.Errorf("Ceph is %s with %v, waiting for %s", status, checks, w)
			}
		}
		return nil
	})
	if err == nil {
		for _, name := range slices.Sorted(maps.Keys(checks)) {
			r.step("Ceph health %s: %s", name, checks[name])
		}
		r.step("Ceph reported %v %s after the node stopped", want, time.Since(start).Round(time.Second))
	}
	return err
}

// cephHealth is Ceph's health now: its status and its checks by name with
// their summaries.
func (r *run) cephHealth(ctx context.Context) (string, map[string]string, error) {
	var health struct {
		Status string `json:"status"`
		Checks map[string]struct {
			Summary struct {
				Message string `json:"message"`
			} `json:"summary"`
		} `json:"checks"`
	}
	if err := r.cephJSON(ctx, &health, "health"); err != nil {
		return "", nil, err
	}
	checks := map[string]string{}
	for name, c := range health.Checks {
		checks[name] = c.Summary.Message
	}
	return health.Status, checks, nil
}

// waitNodeNotReady waits for Kubernetes to see the node gone (no kubelet
// heartbeat for the node monitor's grace period), so that no new pod lands
// there.
func (r *run) waitNodeNotReady(node string) error {
	return r.until(3*time.Minute, func(ctx context.Context) error {
		var n corev1.Node
		if err := r.c.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				r.step("Kubernetes: node %s Ready=%s (%s)", node, c.Status, c.Reason)
				return nil
			}
		}
		return fmt.Errorf("node %s is still Ready", node)
	})
}

// reportsSayWhatCephSays waits for Rook's CephCluster status (Rook reads
// Ceph's health every minute), then the plugin's status (the platform's
// PluginInstallation) and the console's overview to carry Ceph's
// HEALTH_WARN and the checks it names. Each poll compares with what Ceph
// says at that moment, not with an earlier reading: right after a node
// stops, Ceph's own count still moves (a CI run read "4 osds down" from
// Ceph, then "2 osds down" from Ceph and Rook alike for five minutes).
func (r *run) reportsSayWhatCephSays() error {
	var names []string
	var osdDown string
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		cluster, err := r.cephCluster(ctx)
		if err != nil {
			return err
		}
		_, checks, err := r.cephHealth(ctx)
		if err != nil {
			return err
		}
		health, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "health")
		details, _, _ := unstructured.NestedMap(cluster.Object, "status", "ceph", "details")
		names = slices.Sorted(maps.Keys(details))
		osdDown, _, _ = unstructured.NestedString(details, "OSD_DOWN", "message")
		if health != "HEALTH_WARN" || osdDown == "" || osdDown != checks["OSD_DOWN"] {
			return fmt.Errorf("CephCluster status: %s %v, OSD_DOWN %q (Ceph now: %q)", health, names, osdDown, checks["OSD_DOWN"])
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.step("CephCluster rook-ceph/rook-ceph status: HEALTH_WARN, %v, OSD_DOWN %q as Ceph says", names, osdDown)
	err = r.until(3*time.Minute, func(ctx context.Context) error {
		status, err := r.installationStatus(ctx)
		if err != nil {
			return err
		}
		message := fmt.Sprint(status["message"])
		if !strings.Contains(message, "HEALTH_WARN") || !strings.Contains(message, "OSD_DOWN") {
			return fmt.Errorf("PluginInstallation status %v", status)
		}
		r.step("plugin status: phase %v, %q", status["phase"], message)
		return nil
	})
	if err != nil {
		return err
	}
	return r.inConsole(func(b *browser.Browser) {
		b.Open("/view/cephclusters.ceph.rook.io")
		b.WaitText(browser.PageFrame, `[data-attention]`, "Ceph reports HEALTH_WARN")
		b.WaitText(browser.PageFrame, `[data-attention]`, "OSD_DOWN: "+osdDown)
		r.step("console overview: %q", strings.Join(strings.Fields(b.Text(browser.PageFrame, `[data-attention]`)), " "))
	})
}

// cephCluster reads the plugin's CephCluster, rook-ceph/rook-ceph.
func (r *run) cephCluster(ctx context.Context) (*unstructured.Unstructured, error) {
	cluster := &unstructured.Unstructured{}
	cluster.SetAPIVersion("ceph.rook.io/v1")
	cluster.SetKind("CephCluster")
	return cluster, r.c.Get(ctx, client.ObjectKey{Namespace: "rook-ceph", Name: "rook-ceph"}, cluster)
}

// clusterDevices are the CephCluster's devices by node.
func (r *run) clusterDevices() (map[string][]string, error) {
	cluster, err := r.cephCluster(r.ctx)
	if err != nil {
		return nil, err
	}
	nodes, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "storage", "nodes")
	out := map[string][]string{}
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		devices, _, _ := unstructured.NestedSlice(node, "devices")
		for _, d := range devices {
			dev, _ := d.(map[string]any)
			out[fmt.Sprint(node["name"])] = append(out[fmt.Sprint(node["name"])], fmt.Sprint(dev["name"]))
		}
	}
	return out, nil
}

// nothingRemoved checks that the outage took nothing out of the
// CephCluster: a node that is down is not a node that left.
func (r *run) nothingRemoved(before map[string][]string) error {
	after, err := r.clusterDevices()
	if err != nil {
		return err
	}
	if !maps.EqualFunc(before, after, slices.Equal) {
		return fmt.Errorf("the CephCluster's devices changed during the outage: %v, were %v", after, before)
	}
	r.step("the CephCluster still lists every device: %v", after)
	return nil
}
