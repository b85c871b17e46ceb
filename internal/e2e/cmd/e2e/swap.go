package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// swap trades the kernel names of node A's two disks under the running
// cluster, as a reboot can: both OSDs stopped, the two loop devices
// detached and attached again the other way round, the OSDs started
// (Rook's activation finds each OSD's device by its ID; its Deployments
// keep the names they were prepared with). Ceph's metadata then places
// each OSD on the other name. Retiring the Disk at the first name must
// remove the OSD that device holds now, never the one Rook recorded there.
func (r *run) swap() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: nothing can be retired (every pool would lose a copy)")
		return nil
	}
	node := r.nodes[0]
	if len(r.loops[node]) != 2 || len(r.disks[node]) != 2 {
		return fmt.Errorf("node %s has loop devices %v and Disks %v, want two of each", node, r.loops[node], r.disks[node])
	}
	first, second := r.loops[node][0], r.loops[node][1]
	onFirst, err := r.osdOn(r.ctx, node, first)
	if err != nil {
		return err
	}
	onSecond, err := r.osdOn(r.ctx, node, second)
	if err != nil {
		return err
	}
	if err := r.swapLoops(node, first, second, onFirst, onSecond); err != nil {
		return err
	}
	if err := r.checkOSDDevice(int64(onFirst), node, second); err != nil {
		return fmt.Errorf("after the swap: %w", err)
	}
	r.step("Ceph: osd.%d now runs on %s and osd.%d on %s; Rook's Deployments still say %s and %s", onFirst, second, onSecond, first, first, second)
	// The restarted OSDs' PGs peer for a while, and Rook may still restart
	// OSDs after the last CephCluster edit: a retirement asked then is
	// refused for Ceph's health, as it should be, and asked again.
	disks, err := r.listDisks(r.ctx)
	if err != nil {
		return err
	}
	name := diskAt(disks.Items, node, first, "")
	id, err := r.askRetirement("e2e-swapped", map[string]any{"disk": name}, 20*time.Minute,
		func(*unstructured.Unstructured) func(context.Context) error { return noCheck })
	if err != nil {
		return err
	}
	if id != onSecond {
		return fmt.Errorf("DiskRetirement e2e-swapped of Disk %s (%s) retired osd.%d; the device holds osd.%d", name, first, id, onSecond)
	}
	if err := r.osdGoneFromCeph(id); err != nil {
		return err
	}
	if in, up, err := r.osdInUp(onFirst); err != nil || in != 1 || up != 1 {
		return fmt.Errorf("osd.%d, recorded at %s, after the retirement of that name: in=%d up=%d (%v)", onFirst, first, in, up, err)
	}
	r.step("DiskRetirement e2e-swapped of Disk %s (%s) retired osd.%d, which that device held, and left osd.%d (Rook recorded it at %s) up and in", name, first, id, onFirst, first)
	r.disks[node] = []string{diskAt(disks.Items, node, second, "")}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	if err := r.verifyPayload("after the swapped-name retirement of osd." + strconv.Itoa(id)); err != nil {
		return err
	}
	if err := r.renamedDiskFoundByLabel(node, second, onFirst); err != nil {
		return err
	}
	return r.noCephJobsLeft()
}

// renamedDiskFoundByLabel retires the Disk at second, which holds osd.osd
// while no OSD Deployment records second (osd's records first, the name of
// the Disk just retired): its label must be read and name osd, whose
// retirement node's last OSD is then refused by the checks; the Disk is
// never marked retired as "no OSD", and osd stays up and in.
func (r *run) renamedDiskFoundByLabel(node, second string, osd int) error {
	disks, err := r.listDisks(r.ctx)
	if err != nil {
		return err
	}
	name := diskAt(disks.Items, node, second, "")
	ret := object("DiskRetirement", "e2e-renamed", map[string]any{"disk": name})
	if err := r.c.Create(r.ctx, ret); err != nil {
		return err
	}
	if err := r.waitPhase(ret, "Refused", 10*time.Minute); err != nil {
		return err
	}
	msg, _, _ := unstructured.NestedString(ret.Object, "status", "message")
	id, found, _ := unstructured.NestedInt64(ret.Object, "status", "osdID")
	label, _, _ := unstructured.NestedString(ret.Object, "status", "deviceLabel")
	if !found || int(id) != osd || label == "" {
		return fmt.Errorf("DiskRetirement e2e-renamed of %s (%s) found osd %v (label %q), want osd.%d by its label: %s", name, second, id, label, osd, msg)
	}
	disk := object("Disk", name, nil)
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(disk), disk); err != nil {
		return err
	}
	if mark := disk.GetAnnotations()["ceph.fundament.io/retired"]; mark != "" {
		return fmt.Errorf("Disk %s was marked retired (%s): %s", name, mark, msg)
	}
	if in, up, err := r.osdInUp(osd); err != nil || in != 1 || up != 1 {
		return fmt.Errorf("osd.%d after the refused retirement of %s: in=%d up=%d (%v)", osd, second, in, up, err)
	}
	r.step("DiskRetirement e2e-renamed of Disk %s (%s, recorded by no OSD Deployment) read its label, found osd.%d (label %s) and refused, nothing touched: %s", name, second, osd, label, msg)
	if err := r.c.Delete(r.ctx, ret); err != nil {
		return err
	}
	return r.waitRetirementGone(ret, "the refused retirement", time.Minute)
}

// swapLoops stops the OSDs on two loop devices of node (their Deployments
// at zero replicas, left alone by Rook's operator meanwhile), detaches both
// devices and attaches each one's file to the other's name, then starts
// the OSDs again and waits until Ceph has them up.
func (r *run) swapLoops(node, first, second string, osds ...int) error {
	for _, id := range osds {
		deploy := "deployment/rook-ceph-osd-" + strconv.Itoa(id)
		if _, err := r.kubectlOut("-n", "rook-ceph", "label", "--overwrite", deploy, "ceph.rook.io/do-not-reconcile=e2e-swap"); err != nil {
			return err
		}
		if _, err := r.kubectlOut("-n", "rook-ceph", "scale", deploy, "--replicas=0"); err != nil {
			return err
		}
	}
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		for _, id := range osds {
			out, err := r.kubectlOut("-n", "rook-ceph", "get", "pod", "-l", "ceph-osd-id="+strconv.Itoa(id), "-o", "name")
			if err != nil {
				return err
			}
			if strings.TrimSpace(out) != "" {
				return fmt.Errorf("osd.%d's pod is still there: %s", id, out)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.waitOSDsDown(osds); err != nil {
		return err
	}
	files := map[string]string{}
	for _, dev := range []string{first, second} {
		out, err := r.sh("losetup", "--list", "--noheadings", "--output", "BACK-FILE", dev)
		if err != nil {
			return err
		}
		files[dev] = filepath.Clean(lastLine(out))
	}
	for _, dev := range []string{first, second} {
		if _, err := r.sh("losetup", "-d", dev); err != nil {
			return err
		}
	}
	// A device something still holds open is only detached when it is
	// closed: wait for both to be free.
	err = r.until(time.Minute, func(ctx context.Context) error {
		out, err := r.sh("losetup", "--list", "--noheadings", "--output", "NAME")
		if err != nil {
			return err
		}
		for _, dev := range strings.Fields(out) {
			if dev == first || dev == second {
				return fmt.Errorf("%s is still attached", dev)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for dev, other := range map[string]string{first: second, second: first} {
		if _, err := r.sh("losetup", dev, files[other]); err != nil {
			return err
		}
	}
	if err := r.findLoopDevices(); err != nil {
		return err
	}
	r.step("node %s: %s now backed by %s, %s by %s", node, first, files[second], second, files[first])
	for _, id := range osds {
		deploy := "deployment/rook-ceph-osd-" + strconv.Itoa(id)
		if _, err := r.kubectlOut("-n", "rook-ceph", "scale", deploy, "--replicas=1"); err != nil {
			return err
		}
		if _, err := r.kubectlOut("-n", "rook-ceph", "label", deploy, "ceph.rook.io/do-not-reconcile-"); err != nil {
			return err
		}
	}
	p, err := r.readPlacement(r.ctx)
	if err != nil {
		return err
	}
	return r.waitOSDsUp(len(p.up))
}

// noCheck is followRetirement without a check of its own.
func noCheck(context.Context) error { return nil }
