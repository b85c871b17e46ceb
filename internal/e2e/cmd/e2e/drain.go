package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// drain retires a disk of a cluster that keeps three copies on three
// hosts, for real, and checks each step with Ceph rather than with the
// plugin's status: the OSD is marked out while it runs and drains (its PGs
// counted down), Ceph purges it, the device is wiped and leaves the
// CephCluster; Ceph is HEALTH_OK again and the payload reads back. Then
// Rook's operator restarts and prepares every node again, and no
// rook-ceph-osd Deployment comes back for the purged OSD.
//
// A second retirement, of a disk on another host, is created together with
// the first: it must wait in Pending while the first runs (two OSDs
// stopped at once can take PGs inactive). Once the first is done it runs,
// and an OSD of a third host fails while it drains: the drain holds while
// Ceph counts that OSD in, and aborts, saying why, once it is out; its OSD
// is back in and up, and the payload still reads back.
func (r *run) drain() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: nothing can be retired (every pool would lose a copy)")
		return nil
	}
	node, second := r.nodes[1], r.nodes[2]
	name := r.disks[node][len(r.disks[node])-1]
	disk := object("Disk", name, nil)
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(disk), disk); err != nil {
		return err
	}
	path, _, _ := unstructured.NestedString(disk.Object, "status", "path")
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}

	ret := object("DiskRetirement", "e2e-drain", map[string]any{"disk": name})
	// Asked together: a tie on the creation second goes to the name, and
	// e2e-drain sorts first.
	waiting := object("DiskRetirement", "e2e-second", map[string]any{"disk": r.disks[second][len(r.disks[second])-1]})
	start := time.Now()
	for _, o := range []*unstructured.Unstructured{ret, waiting} {
		if err := r.c.Create(r.ctx, o); err != nil {
			return err
		}
	}
	id, err := r.followRetirement(ret, 20*time.Minute, r.staysPending(waiting))
	if err != nil {
		return err
	}
	r.step("DiskRetirement e2e-drain retired %s (%s of %s, osd.%d) in %s; e2e-second waited in Pending all along", name, path, node, id, time.Since(start).Round(time.Second))
	r.disks[node] = slices.DeleteFunc(r.disks[node], func(d string) bool { return d == name })
	// The second must still be draining when another OSD fails: on the
	// e2e's few MiB Ceph moves its PGs in seconds, and a CI run saw it
	// Retired before the failure was staged. Backfill, recovery and
	// rebalancing are held (in place before the second's preflight, whose
	// Ceph Jobs take half a minute) until it has aborted; its PGs stay
	// mapped to its OSD meanwhile. OSDMAP_FLAGS is not a check the
	// retirement blocks on.
	if err := r.holdBackfill(true); err != nil {
		return err
	}
	defer func() { _ = r.holdBackfill(false) }() // a failed phase leaves Ceph as it found it
	// The second starts as soon as the first is done: it is followed now,
	// and the first's aftermath checked once it has aborted.
	if err := r.abortOnFailure(waiting); err != nil {
		return err
	}
	if err := r.osdGoneFromCeph(id); err != nil {
		return err
	}
	if err := r.verifyPayload("after osd." + strconv.Itoa(id) + " was retired"); err != nil {
		return err
	}
	if err := r.osdStaysGone(id, node); err != nil {
		return err
	}
	return r.noCephJobsLeft()
}

// staysPending is followRetirement's check on the second retirement: it
// may not start while the first runs. A failed read judges nothing (the
// next poll reads again).
func (r *run) staysPending(waiting *unstructured.Unstructured) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(waiting), waiting); err != nil {
			return nil
		}
		if phase, _, _ := unstructured.NestedString(waiting.Object, "status", "phase"); phase != "" && phase != "Pending" {
			msg, _, _ := unstructured.NestedString(waiting.Object, "status", "message")
			return fmt.Errorf("DiskRetirement %s is %s while another retirement runs: %s", waiting.GetName(), phase, msg)
		}
		return nil
	}
}

// abortOnFailure waits for ret to drain its OSD (marked out, PGs moving),
// then stops an OSD of another host, as a failing disk would: while Ceph
// counts it in (as it does an OSD Rook restarts) the drain holds; once it
// is out the retirement cannot finish (Ceph would drain from fewer
// copies), so it must abort by itself and say why; Ceph then has the
// drained OSD back in and up, its Deployment at one replica. Once the
// failed OSD is started and marked in again, Ceph is HEALTH_OK, the
// payload reads back, and the failed retirement goes away when deleted.
func (r *run) abortOnFailure(ret *unstructured.Unstructured) error {
	if err := r.waitPhase(ret, "Draining", 10*time.Minute); err != nil {
		return err
	}
	id, found, _ := unstructured.NestedInt64(ret.Object, "status", "osdID")
	if !found {
		return fmt.Errorf("DiskRetirement %s drains without an osdID", ret.GetName())
	}
	p, err := r.readPlacement(r.ctx)
	if err != nil {
		return err
	}
	failed := p.osdsOn(r.nodes[0])
	if len(failed) == 0 {
		return fmt.Errorf("CRUSH places no OSD on %s", r.nodes[0])
	}
	// Stopped as the plugin stops an OSD, with Rook's do-not-reconcile
	// label: Rook's OSD pass (after the previous retirement's CephCluster
	// edit) re-applies every unlabelled OSD Deployment with one replica,
	// which would start the failed disk again mid-scenario.
	victim := "rook-ceph-osd-" + strconv.Itoa(failed[0])
	if _, err := r.kubectlOut("-n", "rook-ceph", "label", "--overwrite", "deployment", victim, "ceph.rook.io/do-not-reconcile=e2e-failed"); err != nil {
		return err
	}
	if _, err := r.kubectlOut("-n", "rook-ceph", "scale", "deployment", victim, "--replicas=0"); err != nil {
		return err
	}
	r.step("DiskRetirement %s is Draining osd.%d: osd.%d of %s stopped (its Deployment scaled to 0, do-not-reconcile)", ret.GetName(), id, failed[0], r.nodes[0])
	if err := r.waitPhaseSaying(ret, "Draining", fmt.Sprintf("waiting for osd.%d on host %s, down but still in", failed[0], r.nodes[0]), 5*time.Minute); err != nil {
		return err
	}
	msg, _, _ := unstructured.NestedString(ret.Object, "status", "message")
	r.step("DiskRetirement %s holds its drain while Ceph counts osd.%d in (as for an OSD Rook restarts): %s", ret.GetName(), failed[0], msg)
	// Ceph's monitors mark a down OSD out after mon_osd_down_out_interval
	// (600 s), but not below mon_osd_min_in_ratio (75%) of the OSDs in:
	// here 3 of 5 would stay. The e2e does it, as an operator does for a
	// disk known dead.
	if _, err := r.cephCLI(r.ctx, "osd", "out", strconv.Itoa(failed[0])); err != nil {
		return err
	}
	r.step("osd.%d marked out (ceph osd out)", failed[0])
	if err := r.waitPhase(ret, "Failed", 10*time.Minute); err != nil {
		return err
	}
	msg, _, _ = unstructured.NestedString(ret.Object, "status", "message")
	if !strings.Contains(msg, fmt.Sprintf("osd.%d", failed[0])) {
		return fmt.Errorf("DiskRetirement %s failed without naming osd.%d: %s", ret.GetName(), failed[0], msg)
	}
	r.step("DiskRetirement %s: Failed: %s", ret.GetName(), msg)
	if err := r.holdBackfill(false); err != nil {
		return err
	}
	err = r.until(5*time.Minute, func(ctx context.Context) error {
		in, up, err := r.osdInUp(int(id))
		if err != nil {
			return err
		}
		if in != 1 || up != 1 {
			return fmt.Errorf("osd.%d after the abort: in=%d up=%d, want both 1", id, in, up)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.osdRunsOne(id, "after the abort"); err != nil {
		return err
	}
	r.step("Ceph: the aborted retirement's osd.%d is in and up again, its Deployment at 1 replica", id)
	if _, err := r.kubectlOut("-n", "rook-ceph", "scale", "deployment", victim, "--replicas=1"); err != nil {
		return err
	}
	if _, err := r.kubectlOut("-n", "rook-ceph", "label", "deployment", victim, "ceph.rook.io/do-not-reconcile-"); err != nil {
		return err
	}
	// Marked out by hand, it stays out when it comes back up (the monitors
	// mark in only the OSDs they marked out).
	if _, err := r.cephCLI(r.ctx, "osd", "in", strconv.Itoa(failed[0])); err != nil {
		return err
	}
	if err := r.waitOSDsUp(len(p.up)); err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	if err := r.verifyPayload("after the retirement of osd." + strconv.FormatInt(id, 10) + " aborted"); err != nil {
		return err
	}
	if err := r.c.Delete(r.ctx, ret); err != nil {
		return err
	}
	return r.waitRetirementGone(ret, "the failed retirement", 2*time.Minute)
}

// backfillFlags keep Ceph from moving PGs: set, a drain stays a drain.
var backfillFlags = []string{"nobackfill", "norecover", "norebalance"}

// holdBackfill sets (or unsets) backfillFlags.
func (r *run) holdBackfill(hold bool) error {
	verb := "unset"
	if hold {
		verb = "set"
	}
	for _, flag := range backfillFlags {
		if _, err := r.cephCLI(r.ctx, "osd", verb, flag); err != nil {
			return err
		}
	}
	r.step("ceph osd %s %s", verb, strings.Join(backfillFlags, ", "))
	return nil
}

// osdInUp reads osd.id's in and up flags from Ceph's OSD map.
func (r *run) osdInUp(id int) (in, up int, err error) {
	var dump struct {
		OSDs []struct {
			OSD int `json:"osd"`
			In  int `json:"in"`
			Up  int `json:"up"`
		} `json:"osds"`
	}
	if err := r.cephJSON(r.ctx, &dump, "osd", "dump"); err != nil {
		return 0, 0, err
	}
	for _, o := range dump.OSDs {
		if o.OSD == id {
			return o.In, o.Up, nil
		}
	}
	return 0, 0, fmt.Errorf("Ceph's OSD map has no osd.%d", id)
}

// followRetirement waits for ret to end Retired, printing each phase and
// the PGs left as they change, and running during at each poll (a failure
// of it ends the wait); it returns the retired OSD's ID.
func (r *run) followRetirement(ret *unstructured.Unstructured, timeout time.Duration, during func(context.Context) error) (int, error) {
	var last string
	var ended error // a terminal phase other than Retired, or during's failure
	err := r.until(timeout, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(ret), ret); err != nil {
			return err
		}
		if err := during(ctx); err != nil {
			ended = err
			return nil
		}
		phase, _, _ := unstructured.NestedString(ret.Object, "status", "phase")
		msg, _, _ := unstructured.NestedString(ret.Object, "status", "message")
		left, hasLeft, _ := unstructured.NestedInt64(ret.Object, "status", "pgsLeft")
		shown := phase
		if hasLeft {
			shown += fmt.Sprintf(" (%d PGs left)", left)
		}
		now := shown
		if phase == "Pending" {
			now += msg // what it waits for changes as it waits
		}
		if now != last {
			r.step("DiskRetirement %s: %s: %s", ret.GetName(), shown, msg)
			last = now
		}
		switch phase {
		case "Retired":
			return nil
		case "Refused", "Failed", "Cancelled":
			ended = fmt.Errorf("DiskRetirement %s ended %s: %s", ret.GetName(), phase, msg)
			return nil
		}
		return fmt.Errorf("DiskRetirement %s is %s: %s", ret.GetName(), phase, msg)
	})
	id, _, _ := unstructured.NestedInt64(ret.Object, "status", "osdID")
	if err == nil {
		err = ended
	}
	return int(id), err
}

// osdGoneFromCeph checks with Ceph that osd.id is no longer in its OSD map
// nor in CRUSH.
func (r *run) osdGoneFromCeph(id int) error {
	var dump struct {
		OSDs []struct {
			OSD int `json:"osd"`
		} `json:"osds"`
	}
	if err := r.cephJSON(r.ctx, &dump, "osd", "dump"); err != nil {
		return err
	}
	for _, o := range dump.OSDs {
		if o.OSD == id {
			return fmt.Errorf("Ceph's OSD map still has osd.%d", id)
		}
	}
	tree, err := r.cephCLI(r.ctx, "osd", "tree")
	if err != nil {
		return err
	}
	if strings.Contains(tree, fmt.Sprintf("osd.%d ", id)) {
		return fmt.Errorf("CRUSH still places osd.%d:\n%s", id, tree)
	}
	r.step("Ceph: osd.%d is gone from the OSD map and CRUSH; ceph osd tree:\n%s", id, indent(tree))
	return nil
}

// noCephJobsLeft: the plugin deleted every Ceph Job once it read it.
func (r *run) noCephJobsLeft() error {
	return r.until(time.Minute, func(ctx context.Context) error {
		out, err := r.kubectlOut("-n", "rook-ceph", "get", "jobs", "-l", "app=ceph-rook-ceph-job", "-o", "name")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "" {
			return fmt.Errorf("Ceph Jobs left: %s", out)
		}
		return nil
	})
}

// osdStaysGone restarts Rook's operator, which prepares every node again
// (its prepare lists every OSD a device of the node carries, whatever the
// CephCluster lists), and checks that no Deployment comes back for osd.id.
func (r *run) osdStaysGone(id int, node string) error {
	before := time.Now()
	if _, err := r.kubectlOut("-n", "rook-ceph", "delete", "pod", "-l", "app=rook-ceph-operator", "--wait=false"); err != nil {
		return err
	}
	err := r.until(10*time.Minute, func(ctx context.Context) error {
		out, err := r.kubectlOut("-n", "rook-ceph", "get", "jobs", "-l", "app=rook-ceph-osd-prepare", "-o",
			`jsonpath={range .items[*]}{.metadata.labels.ceph\.rook\.io/pvc}{.spec.template.spec.nodeSelector.kubernetes\.io/hostname} {.metadata.creationTimestamp} {.status.succeeded}{"\n"}{end}`)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == node && f[2] == "1" {
				created, err := time.Parse(time.RFC3339, f[1])
				if err == nil && !created.Before(before.Truncate(time.Second)) {
					return nil
				}
			}
		}
		return fmt.Errorf("no OSD prepare of %s has run since the operator restarted: %s", node, out)
	})
	if err != nil {
		return err
	}
	out, err := r.kubectlOut("-n", "rook-ceph", "get", "deployment", "rook-ceph-osd-"+strconv.Itoa(id), "--ignore-not-found", "-o", "name")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		return fmt.Errorf("rook-ceph-osd-%d came back after Rook prepared %s again", id, node)
	}
	r.step("Rook's operator restarted and prepared %s again: no rook-ceph-osd-%d came back", node, id)
	return nil
}

// askRetirement asks for the DiskRetirement name of spec once Ceph is HEALTH_OK
// and follows it to Retired (during built for it). Rook may still restart
// OSDs after the previous phase's CephCluster edit, and HEALTH_OK can be
// read in the minute before it starts: the retirement then waits in
// Pending for Ceph to settle, as the plugin does for any OSD that is down
// but still in.
func (r *run) askRetirement(name string, spec map[string]any, timeout time.Duration, during func(ret *unstructured.Unstructured) func(context.Context) error) (int, error) {
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return 0, err
	}
	ret := object("DiskRetirement", name, spec)
	if err := r.c.Create(r.ctx, ret); err != nil {
		return 0, err
	}
	return r.followRetirement(ret, timeout, during(ret))
}
