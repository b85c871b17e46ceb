package main

import (
	"context"
	"encoding/json"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ceph makes real OSDs from a DiskPool of the first node's loop Disks (the
// other nodes join later) and a real pool from a BlockStorage, and reads
// the pool's size and CRUSH failure domain from Ceph itself to compare them
// with the consumer's status.
func (r *run) ceph() error {
	first := r.disks[r.nodes[0]]
	if _, err := r.createReady("DiskPool", map[string]any{"disks": first}, 2*time.Minute); err != nil {
		return err
	}
	r.step("DiskPool e2e Ready with node %s's %v", r.nodes[0], first)
	if err := r.waitOSDsUp(len(first)); err != nil {
		return err
	}
	if err := r.tuneCeph(); err != nil {
		return err
	}

	block, err := r.createReady("BlockStorage", map[string]any{}, 10*time.Minute)
	if err != nil {
		return err
	}
	if err := r.checkPools(block, "ceph-e2e"); err != nil {
		return err
	}
	if err := r.checkStorageClass(block, "rook-ceph.rbd.csi.ceph.com"); err != nil {
		return err
	}
	health, err := r.cephCLI(r.ctx, "health", "detail")
	r.step("Ceph health: %s", strings.ReplaceAll(strings.TrimSpace(health), "\n", "; "))
	return err
}

// waitOSDsUp waits until Ceph counts want OSDs up and in.
func (r *run) waitOSDsUp(want int) error {
	err := r.until(15*time.Minute, func(ctx context.Context) error {
		var stat struct {
			Up int `json:"num_up_osds"`
			In int `json:"num_in_osds"`
		}
		if err := r.cephJSON(ctx, &stat, "osd", "stat"); err != nil {
			return err
		}
		if stat.Up != want || stat.In != want {
			return fmt.Errorf("%d OSDs up and %d in, want %d", stat.Up, stat.In, want)
		}
		return nil
	})
	if err == nil {
		r.step("Ceph: %d OSDs up and in", want)
	}
	return err
}

// cephSettings are the e2e's own overrides for a small machine, set in
// Ceph's configuration database (what `ceph config set` writes, and Rook's
// cephConfig would): OSDs aim at 1 GiB of memory each instead of 4 (six
// OSDs share 24 GiB with everything else; 896 MiB is Ceph's floor), and the
// mons warn about their disk below 5 % free instead of 30 % (the machine's
// one disk holds the mons' stores and everything else), and a heartbeat
// between OSDs counts as slow from 10 s instead of 1 s (5 % of the 20 s
// osd_heartbeat_grace). The OSDs' "network" is a bridge inside one 2-core
// machine that runs three nodes at a load near 18 while Ceph moves PGs: a
// ping answered after 5 s there is a starved process, not a network fault,
// and it raised OSD_SLOW_PING_TIME_BACK/FRONT (seen at 5 s, failing a
// HEALTH_OK wait). The OSDs compare their pings with it and the manager's
// health check reads it too, hence global. 10 s stays under the grace, so
// an OSD Ceph is about to mark down still warns first.
var cephSettings = [][3]string{
	{"osd", "osd_memory_target", "1073741824"},
	{"mon", "mon_data_avail_warn", "5"},
	{"global", "mon_warn_on_slow_ping_time", "10000"},
}

// probedDaemons are the daemons whose kubelet probes the e2e turns off in
// the CephCluster (spec.healthCheck, an administrator's edit the plugin
// leaves alone: it writes only the fields its configuration owns). Rook
// probes each of them every 10 s with `ceph --admin-daemon`, a Python
// process of about a CPU-second here: eleven daemons kept most of a core
// busy, and at the load that made the probes time out (5 s) the kubelet
// killed mon-a, mgr-a and both running OSDs in the middle of the join
// phase, which made it slower still. A daemon that crashes is restarted
// all the same: its container exits.
var probedDaemons = []string{"mon", "mgr", "osd"}

// disableDaemonProbes turns off the liveness and startup probes of
// probedDaemons, before Rook creates the daemons.
func (r *run) disableDaemonProbes() error {
	off := map[string]any{}
	for _, d := range probedDaemons {
		off[d] = map[string]any{"disabled": true}
	}
	cluster, err := r.cephCluster(r.ctx)
	if err != nil {
		return err
	}
	patch := map[string]any{"spec": map[string]any{"healthCheck": map[string]any{"livenessProbe": off, "startupProbe": off}}}
	if err := r.c.Patch(r.ctx, cluster, client.RawPatch(types.MergePatchType, mustJSON(patch))); err != nil {
		return err
	}
	r.step("CephCluster: liveness and startup probes of %v off (spec.healthCheck)", probedDaemons)
	return nil
}

func (r *run) tuneCeph() error {
	for _, s := range cephSettings {
		if _, err := r.cephCLI(r.ctx, "config", "set", s[0], s[1], s[2]); err != nil {
			return err
		}
		r.step("ceph config set %s %s %s", s[0], s[1], s[2])
	}
	return nil
}

// checkPools compares each Ceph pool's size and CRUSH failure domain, read
// from Ceph, with the consumer's status.
func (r *run) checkPools(consumer *unstructured.Unstructured, pools ...string) error {
	replicas, _, _ := unstructured.NestedInt64(consumer.Object, "status", "replicas")
	domain, _, _ := unstructured.NestedString(consumer.Object, "status", "failureDomain")
	for _, pool := range pools {
		size, rule, placedOn, err := r.poolPlacement(pool)
		if err != nil {
			return err
		}
		r.step("%s %s: status replicas %d on %s; Ceph pool %s size %d, CRUSH rule %s places on %s",
			consumer.GetKind(), consumer.GetName(), replicas, domain, pool, size, rule, placedOn)
		if size != replicas || placedOn != domain {
			return fmt.Errorf("Ceph's pool %s (size %d, domain %s) differs from the status (%d, %s)", pool, size, placedOn, replicas, domain)
		}
	}
	return nil
}

// poolPlacement is a pool's size, CRUSH rule and the bucket type the rule
// places copies on, as Ceph says.
func (r *run) poolPlacement(pool string) (size int64, rule, domain string, err error) {
	var got struct {
		Size int64 `json:"size"`
	}
	if err := r.cephJSON(r.ctx, &got, "osd", "pool", "get", pool, "size"); err != nil {
		return 0, "", "", err
	}
	var crush struct {
		Rule string `json:"crush_rule"`
	}
	if err := r.cephJSON(r.ctx, &crush, "osd", "pool", "get", pool, "crush_rule"); err != nil {
		return 0, "", "", err
	}
	var dumped crushRule
	if err := r.cephJSON(r.ctx, &dumped, "osd", "crush", "rule", "dump", crush.Rule); err != nil {
		return 0, "", "", err
	}
	return got.Size, crush.Rule, dumped.domain(), nil
}

// checkStorageClass proves what can be proved of a CSI StorageClass without
// mounting (the kernel has no rbd module, the CSI images cannot be pulled):
// the consumer's class names the provisioner Rook registered as a
// CSIDriver, and every Secret its parameters name exists.
func (r *run) checkStorageClass(consumer *unstructured.Unstructured, provisioner string) error {
	name, _, _ := unstructured.NestedString(consumer.Object, "status", "storageClassName")
	var class storagev1.StorageClass
	if err := r.c.Get(r.ctx, client.ObjectKey{Name: name}, &class); err != nil {
		return fmt.Errorf("%s %s's StorageClass: %w", consumer.GetKind(), consumer.GetName(), err)
	}
	if class.Provisioner != provisioner {
		return fmt.Errorf("StorageClass %s: provisioner %s, want %s", name, class.Provisioner, provisioner)
	}
	if err := r.c.Get(r.ctx, client.ObjectKey{Name: provisioner}, &storagev1.CSIDriver{}); err != nil {
		return fmt.Errorf("StorageClass %s names provisioner %s: no such CSIDriver: %w", name, provisioner, err)
	}
	var secrets []string
	for key, secret := range class.Parameters {
		prefix, ok := strings.CutSuffix(key, "-secret-name")
		if !ok {
			continue
		}
		ns := class.Parameters[prefix+"-secret-namespace"]
		if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: ns, Name: secret}, &corev1.Secret{}); err != nil {
			return fmt.Errorf("StorageClass %s parameter %s names Secret %s/%s: %w", name, key, ns, secret, err)
		}
		secrets = append(secrets, ns+"/"+secret)
	}
	if len(secrets) == 0 {
		return fmt.Errorf("StorageClass %s names no CSI secrets", name)
	}
	slices.Sort(secrets)
	r.step("StorageClass %s: CSIDriver %s registered, Secrets %v exist", name, provisioner, slices.Compact(secrets))
	return nil
}

// cephJSON runs a Ceph command with JSON output into v.
func (r *run) cephJSON(ctx context.Context, v any, args ...string) error {
	out, err := r.cephCLI(ctx, append(args, "--format=json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("ceph %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	o.SetAPIVersion("ceph.fundament.io/v1alpha1")
	o.SetKind(kind)
	o.SetName(name)
	return o
}

// createReady creates the ceph-rook object kind/e2e with spec and waits
// for it to report Ready.
func (r *run) createReady(kind string, spec map[string]any, timeout time.Duration) (*unstructured.Unstructured, error) {
	obj := object(kind, "e2e", spec)
	if err := r.c.Create(r.ctx, obj); err != nil {
		return nil, err
	}
	return obj, r.waitPhase(obj, "Ready", timeout)
}

func (r *run) waitPhase(obj *unstructured.Unstructured, phase string, timeout time.Duration) error {
	return r.waitPhaseSaying(obj, phase, "", timeout)
}

// waitPhaseSaying is waitPhase for a phase whose message contains text.
func (r *run) waitPhaseSaying(obj *unstructured.Unstructured, phase, text string, timeout time.Duration) error {
	return r.until(timeout, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "message")
		if got != phase || !strings.Contains(msg, text) {
			return fmt.Errorf("%s %s is %q (%s)", obj.GetKind(), obj.GetName(), got, msg)
		}
		return nil
	})
}

// waitRetirementGone waits until the DiskRetirement ret (what: "the
// refused retirement") is gone, saying its phase and message meanwhile.
func (r *run) waitRetirementGone(ret *unstructured.Unstructured, what string, timeout time.Duration) error {
	return r.until(timeout, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(ret), ret); !apierrors.IsNotFound(err) {
			phase, _, _ := unstructured.NestedString(ret.Object, "status", "phase")
			msg, _, _ := unstructured.NestedString(ret.Object, "status", "message")
			return fmt.Errorf("%s is still there (%v): %s: %s", what, err, phase, msg)
		}
		return nil
	})
}

// cephCLI runs the Ceph CLI in Rook's operator pod, with the admin
// credentials Rook keeps there.
func (r *run) cephCLI(ctx context.Context, args ...string) (string, error) {
	base := []string{"-n", "rook-ceph", "exec", "deploy/rook-ceph-operator", "--", "ceph",
		"--conf=/var/lib/rook/rook-ceph/rook-ceph.config", "--keyring=/var/lib/rook/rook-ceph/client.admin.keyring", "--name=client.admin"}
	return r.kubectlOut(append(base, args...)...)
}
