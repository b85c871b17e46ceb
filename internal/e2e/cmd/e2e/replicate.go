package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/e2e/payload"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// consumerKinds are the kinds of the e2e's consumers, each named e2e.
var consumerKinds = []string{"BlockStorage", "FileStorage", "ObjectStorage"}

// blockPool is the BlockStorage's Ceph pool, where the payload goes through
// rados.
const blockPool = "ceph-e2e"

// expectedReplication is what the plugin's replication rules give every
// consumer without an explicit count when nodes contribute disks
// (replication.go, ComputeReplication): min(3, nodes) copies, on separate
// hosts from two nodes on.
func expectedReplication(nodes int) (int, string) {
	if nodes >= 2 {
		return min(3, nodes), rook.FailureDomainHost
	}
	return 1, rook.FailureDomainOSD
}

// join writes the payload, then adds the other nodes' disks to the
// DiskPool one node at a time: after each, every consumer's pools follow
// the replication rules in Ceph (size, CRUSH rule, acting sets on distinct
// hosts) and the payload reads back intact. With every node in, Ceph must
// reach HEALTH_OK.
func (r *run) join() error {
	if len(r.nodes) < 2 {
		r.step("one node: nothing joins")
		return nil
	}
	if err := r.writePayload(); err != nil {
		return err
	}
	// Rook prepares OSDs only on nodes whose every taint its OSD placement
	// tolerates, PreferNoSchedule included (k8sutil.NodeIsTolerable): the
	// joining nodes lose the cluster phase's taint first.
	if err := r.untaintJoiners(); err != nil {
		return err
	}
	for k := 2; k <= len(r.nodes); k++ {
		if err := r.contribute(r.nodes[:k], "NodesJoined", r.nodes[k-1]+" joined"); err != nil {
			return err
		}
	}
	if err := r.cephBudgetMatches(); err != nil {
		return err
	}
	return r.waitHealthOK(10 * time.Minute)
}

// leave takes the last node's disks out of the DiskPool, an operator's
// choice: replication follows the rules back down (NodesLeft) and Ceph's
// pools match, while the node's OSDs keep running (Rook removes none).
func (r *run) leave() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: none leaves")
		return nil
	}
	if err := r.contribute(r.nodes[:len(r.nodes)-1], "NodesLeft", r.nodes[len(r.nodes)-1]+" left"); err != nil {
		return err
	}
	return r.waitHealthOK(10 * time.Minute)
}

// contribute makes the DiskPool hold exactly the disks of nodes and
// follows what that does to every consumer, from the plugin's status to
// Ceph's acting sets, timing Ceph's part; change says what happened, for
// the payload's check.
func (r *run) contribute(nodes []string, reason, change string) error {
	before, err := r.readPlacement(r.ctx)
	if err != nil {
		return err
	}
	var disks []string
	for _, n := range nodes {
		disks = append(disks, r.disks[n]...)
	}
	pool := object("DiskPool", "e2e", nil)
	patch := client.RawPatch(types.MergePatchType, mustJSON(map[string]any{"spec": map[string]any{"disks": disks}}))
	start := time.Now()
	if err := r.c.Patch(r.ctx, pool, patch); err != nil {
		return err
	}
	size, domain := expectedReplication(len(nodes))
	r.step("DiskPool e2e holds the disks of %v: every consumer should keep %d copies on %s (%s)", nodes, size, domain, reason)
	// OSDs only ever join here: a node that leaves the pool keeps its OSDs.
	if err := r.waitOSDsUp(max(len(disks), len(before.up))); err != nil {
		return err
	}
	if err := r.consumersReplicate(size, domain, reason); err != nil {
		return err
	}
	var resized time.Duration
	var after *placement
	err = r.until(20*time.Minute, func(ctx context.Context) error {
		p, err := r.readPlacement(ctx)
		if err != nil {
			return err
		}
		for _, name := range p.consumerPools() {
			if pool := p.pools[name]; pool.size != size || pool.domain != domain {
				return fmt.Errorf("Ceph pool %s: size %d on %s, want %d on %s", name, pool.size, pool.domain, size, domain)
			}
		}
		if resized == 0 {
			resized = time.Since(start)
		}
		if err := p.allClean(); err != nil {
			return err
		}
		after = p
		return p.spread(size, domain)
	})
	if err != nil {
		return err
	}
	r.step("Ceph: every pool of %v at size %d on %s %s after the edit; every PG of them active+clean after %s; %d of %d PGs changed their acting set",
		after.consumerPools(), size, domain, resized.Round(time.Second), time.Since(start).Round(time.Second), after.moved(before), len(after.pgs))
	r.step("Ceph: every PG of the consumers' pools acts on %d OSDs on %s", size, map[bool]string{true: "as many distinct hosts", false: "any hosts"}[domain == rook.FailureDomainHost])
	return r.verifyPayload("after " + change)
}

// consumersReplicate waits for every consumer's status to say size copies
// on domain, with a ReplicationChanged condition of reason that names them.
func (r *run) consumersReplicate(size int, domain, reason string) error {
	var said any
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		for _, kind := range consumerKinds {
			c := object(kind, "e2e", nil)
			if err := r.c.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				return err
			}
			replicas, _, _ := unstructured.NestedInt64(c.Object, "status", "replicas")
			got, _, _ := unstructured.NestedString(c.Object, "status", "failureDomain")
			if int(replicas) != size || got != domain {
				return fmt.Errorf("%s e2e: status %d copies on %s, want %d on %s", kind, replicas, got, size, domain)
			}
			cond := condition(c, "ReplicationChanged")
			want := fmt.Sprintf("to %d (%s)", size, domain)
			if cond == nil || cond["reason"] != reason || !strings.Contains(fmt.Sprint(cond["message"]), want) {
				return fmt.Errorf("%s e2e: ReplicationChanged %v, want reason %s saying %q", kind, cond, reason, want)
			}
			said = cond["message"]
		}
		return nil
	})
	if err == nil {
		r.step("every consumer: status %d copies on %s; ReplicationChanged %s: %s", size, domain, reason, said)
	}
	return err
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

func condition(obj *unstructured.Unstructured, kind string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == kind {
			return m
		}
	}
	return nil
}

// writePayload writes the payload through rados into the block pool and
// through S3, by a workload pod, into the claimed bucket.
func (r *run) writePayload() error {
	for i := range payload.Objects {
		if _, err := r.radosIO(bytes.NewReader(payload.Object(i)), "put", payload.Name(i), "-"); err != nil {
			return err
		}
	}
	r.step("rados: wrote %d objects of %d KiB into pool %s", payload.Objects, payload.Size>>10, blockPool)
	logs, err := r.runS3Workload("s3-payload-write", "-payload", "write")
	if err != nil {
		return err
	}
	r.step("s3: %s", strings.ReplaceAll(strings.TrimSpace(logs), "\n", "; "))
	return nil
}

// verifyPayload reads every payload object back from both and checks it.
func (r *run) verifyPayload(when string) error {
	for i := range payload.Objects {
		got, err := r.radosIO(nil, "get", payload.Name(i), "-")
		if err != nil {
			return err
		}
		if err := payload.Check(i, got); err != nil {
			return fmt.Errorf("rados pool %s %s: %w", blockPool, when, err)
		}
	}
	r.step("rados: %d objects of pool %s read back intact %s", payload.Objects, blockPool, when)
	name := dnsLabel("s3-payload-verify-" + when)
	logs, err := r.runS3Workload(name, "-payload", "verify")
	if err != nil {
		return fmt.Errorf("s3 %s: %w", when, err)
	}
	r.step("s3: %s", strings.TrimSpace(logs))
	return nil
}

// radosIO runs rados on the block pool in Rook's operator pod with stdin,
// returning its stdout unaltered (binary).
func (r *run) radosIO(stdin *bytes.Reader, args ...string) ([]byte, error) {
	base := r.kubectlArgs("-n", "rook-ceph", "exec", "-i", "deploy/rook-ceph-operator", "--", "rados",
		"--conf=/var/lib/rook/rook-ceph/rook-ceph.config", "--keyring=/var/lib/rook/rook-ceph/client.admin.keyring", "--name=client.admin",
		"--pool="+blockPool)
	cmd := exec.CommandContext(r.ctx, r.kubectl, append(base, args...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("rados %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.Bytes(), nil
}

// waitHealthOK waits for Ceph's HEALTH_OK and prints `ceph -s`; on timeout
// it fails with `ceph health detail`. A daemon's crash is reported as a
// finding and archived on the way (reportCrashes).
func (r *run) waitHealthOK(timeout time.Duration) error {
	start := time.Now()
	err := r.until(timeout, func(ctx context.Context) error {
		status, checks, err := r.cephHealth(ctx)
		if err != nil {
			return err
		}
		if _, crashed := checks["RECENT_CRASH"]; crashed {
			if _, err := r.reportCrashes(ctx); err != nil {
				return err
			}
			return fmt.Errorf("Ceph is %s with %v: crashes reported and archived, reading its health again", status, checks)
		}
		if status != "HEALTH_OK" {
			detail, _ := r.cephCLI(ctx, "health", "detail")
			return fmt.Errorf("Ceph is %s: %s", status, strings.ReplaceAll(strings.TrimSpace(detail), "\n", "; "))
		}
		return nil
	})
	if err != nil {
		return err
	}
	status, err := r.cephCLI(r.ctx, "-s")
	r.step("Ceph HEALTH_OK after %s; ceph -s:\n%s", time.Since(start).Round(time.Second), indent(status))
	return err
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "e2e:       " + l
	}
	return strings.Join(lines, "\n")
}

// outageNode is the node the outage stops: one that joined (so it holds
// OSDs) and runs none of the pods that watch the outage (watched). When
// every joined node runs one (pods the upgrade phase rescheduled land on
// any node), the last node's are moved off it first.
func (r *run) outageNode() (string, error) {
	busy, err := r.watchedPods(r.ctx)
	if err != nil {
		return "", err
	}
	for _, node := range slices.Backward(r.nodes[1:]) {
		if len(busy[node]) == 0 {
			return node, nil
		}
	}
	node := r.nodes[len(r.nodes)-1]
	return node, r.moveWatchersOff(node, busy[node])
}

// watchedPods are the watched pods by node.
func (r *run) watchedPods(ctx context.Context) (map[string][]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods); err != nil {
		return nil, err
	}
	busy := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if watched(&p) && p.DeletionTimestamp == nil {
			busy[p.Spec.NodeName] = append(busy[p.Spec.NodeName], p)
		}
	}
	return busy, nil
}

// moveWatchersOff moves the watched pods off node as a drain would: the
// node cordoned, its pods deleted (their Deployments start them on other
// nodes), every watched pod ready elsewhere and the plugin running, the
// node uncordoned.
func (r *run) moveWatchersOff(node string, pods []corev1.Pod) error {
	if _, err := r.kubectlOut("cordon", node); err != nil {
		return err
	}
	for i := range pods {
		if err := client.IgnoreNotFound(r.c.Delete(r.ctx, &pods[i])); err != nil {
			return err
		}
	}
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		busy, err := r.watchedPods(ctx)
		if err != nil {
			return err
		}
		for n, on := range busy {
			for i := range on {
				if n == node || !podReady(&on[i]) {
					return fmt.Errorf("%s/%s on %s not ready elsewhere yet", on[i].Namespace, on[i].Name, n)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := r.kubectlOut("uncordon", node); err != nil {
		return err
	}
	if _, err := r.waitInstallation("running", 5*time.Minute); err != nil {
		return err
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	r.step("moved %s off %s (cordoned, deleted, ready on other nodes, uncordoned)", strings.Join(names, ", "), node)
	return nil
}

// watched are the pods the outage's checks go through: Rook's operator
// (the e2e's Ceph CLI, and what writes Ceph's health into the
// CephCluster), the plugin and the plugin controller (what report it), and
// the object store's gateway (the S3 reads).
func watched(p *corev1.Pod) bool {
	if strings.HasPrefix(p.Name, "rook-ceph-operator-") || p.Labels["app"] == "rook-ceph-rgw" {
		return true
	}
	for _, c := range p.Spec.Containers {
		if strings.HasPrefix(c.Image, strings.Split(pluginImage, ":")[0]) || strings.HasPrefix(c.Image, strings.Split(controllerImage, ":")[0]) {
			return true
		}
	}
	return false
}

// dnsLabel makes a pod name of s: lower case, every run of other characters
// than letters and digits one hyphen ("after Rook's step" would otherwise
// name no pod), at most 63 characters.
func dnsLabel(s string) string {
	var b strings.Builder
	hyphen := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			hyphen = false
		} else if !hyphen && b.Len() > 0 {
			b.WriteByte('-')
			hyphen = true
		}
	}
	return strings.Trim(b.String()[:min(b.Len(), 63)], "-")
}
