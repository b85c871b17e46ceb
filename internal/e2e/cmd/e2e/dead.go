package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// dead runs two retirements on the last node's two disks that the issue's
// third data-safety pass asked to see on real Ceph. First an abort gives
// back exactly what it changed: an OSD an operator marked out before the
// retirement is still out after it is cancelled. Then a disk dies under
// its running OSD (its loop device detached, so the OSD's next start finds
// no device and Ceph has it down): retiring it purges the OSD by its ID
// once Ceph has recovered its copies, without a label to read or a device
// to wipe; Ceph is HEALTH_OK, the payload reads back, and no
// rook-ceph-osd Deployment comes back for it.
func (r *run) dead() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: nothing can be retired (every pool would lose a copy)")
		return nil
	}
	node := r.nodes[len(r.nodes)-1]
	if len(r.loops[node]) < 2 || len(r.disks[node]) < 2 {
		return fmt.Errorf("node %s has loop devices %v and Disks %v, want two of each", node, r.loops[node], r.disks[node])
	}
	disks, err := r.listDisks(r.ctx)
	if err != nil {
		return err
	}
	var devices []string
	for _, dev := range r.loops[node] {
		if name := diskAt(disks.Items, node, dev, ""); slices.Contains(r.disks[node], name) {
			devices = append(devices, dev)
		}
	}
	if len(devices) < 2 {
		return fmt.Errorf("node %s: fewer than two of %v are the pool's Disks %v", node, r.loops[node], r.disks[node])
	}
	if err := r.outStaysOut(node, devices[0], diskAt(disks.Items, node, devices[0], "")); err != nil {
		return err
	}
	return r.deadDisk(node, devices[1], diskAt(disks.Items, node, devices[1], ""))
}

// outStaysOut marks the OSD on dev out by hand and lets Ceph move its PGs,
// then retires its Disk and cancels the retirement while it stops the OSD
// (a finalizer on the OSD's pod holds it there): the abort starts the OSD
// again and leaves it out, as it found it.
func (r *run) outStaysOut(node, dev, name string) error {
	id, err := r.osdOn(r.ctx, node, dev)
	if err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	if _, err := r.cephCLI(r.ctx, "osd", "out", strconv.Itoa(id)); err != nil {
		return err
	}
	r.step("osd.%d (%s of %s) marked out by hand (ceph osd out)", id, dev, node)
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	pod, err := r.kubectlOut("-n", "rook-ceph", "get", "pod", "-l", "ceph-osd-id="+strconv.Itoa(id), "-o", "name")
	if err != nil {
		return err
	}
	pod = strings.TrimSpace(pod)
	const hold = `{"metadata":{"finalizers":["e2e.fundament.io/hold"]}}`
	if _, err := r.kubectlOut("-n", "rook-ceph", "patch", pod, "--type=merge", "-p", hold); err != nil {
		return err
	}
	release := func() error {
		_, err := r.kubectlOut("-n", "rook-ceph", "patch", pod, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
		return err
	}
	defer func() { _ = release() }() // a failed phase leaves no pod held
	ret := object("DiskRetirement", "e2e-was-out", map[string]any{"disk": name})
	if err := r.c.Create(r.ctx, ret); err != nil {
		return err
	}
	if err := r.waitPhase(ret, "StoppingOSD", 15*time.Minute); err != nil {
		return err
	}
	in, _, _ := unstructured.NestedBool(ret.Object, "status", "osdBefore", "in")
	markedOut, _, _ := unstructured.NestedBool(ret.Object, "status", "markedOut")
	if in || markedOut {
		return fmt.Errorf("DiskRetirement e2e-was-out recorded osd.%d in=%v before and marked it out=%v; it was out", id, in, markedOut)
	}
	r.step("DiskRetirement e2e-was-out stops osd.%d (its pod held terminating); it recorded the OSD out before, and did not mark it out", id)
	if err := r.c.Delete(r.ctx, ret); err != nil {
		return err
	}
	if err := release(); err != nil {
		return err
	}
	if err := r.waitRetirementGone(ret, "the cancelled retirement", 10*time.Minute); err != nil {
		return err
	}
	err = r.until(5*time.Minute, func(ctx context.Context) error {
		in, up, err := r.osdInUp(id)
		if err != nil {
			return err
		}
		if in != 0 || up != 1 {
			return fmt.Errorf("osd.%d after the cancel: in=%d up=%d, want out and up", id, in, up)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.osdRunsOne(int64(id), "after the cancel"); err != nil {
		return err
	}
	r.step("Ceph: after the cancel osd.%d is up and still out, as the operator left it; its Deployment at 1 replica", id)
	if _, err := r.cephCLI(r.ctx, "osd", "in", strconv.Itoa(id)); err != nil {
		return err
	}
	return r.waitHealthOK(10 * time.Minute)
}

// deadDisk detaches the loop device under osd's running OSD and restarts
// its pod, as a disk that dies does to an OSD: the device is still a node
// in /dev, of size 0. Ceph has the OSD down; its retirement purges it by
// ID once Ceph calls it safe to destroy.
func (r *run) deadDisk(node, dev, name string) error {
	id, err := r.osdOn(r.ctx, node, dev)
	if err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	// The OSD holds the device open: losetup -d detaches it when it is
	// closed, which the OSD's pod restart does.
	if _, err := r.sh("losetup", "-d", dev); err != nil {
		return err
	}
	if _, err := r.kubectlOut("-n", "rook-ceph", "delete", "pod", "-l", "ceph-osd-id="+strconv.Itoa(id), "--wait=false"); err != nil {
		return err
	}
	err = r.until(5*time.Minute, func(ctx context.Context) error {
		_, up, err := r.osdInUp(id)
		if err != nil {
			return err
		}
		if up != 0 {
			return fmt.Errorf("osd.%d is still up", id)
		}
		size, err := r.sh("blockdev", "--getsize64", dev)
		if err != nil {
			return err
		}
		if strings.TrimSpace(size) != "0" {
			return fmt.Errorf("%s still has %s bytes", dev, strings.TrimSpace(size))
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.step("%s of %s detached under osd.%d (size 0 now); Ceph has osd.%d down", dev, node, id, id)
	ret := object("DiskRetirement", "e2e-dead", map[string]any{"disk": name})
	if err := r.c.Create(r.ctx, ret); err != nil {
		return err
	}
	start := time.Now()
	got, err := r.followRetirement(ret, 30*time.Minute, noCheck)
	if err != nil {
		return err
	}
	if got != id {
		return fmt.Errorf("DiskRetirement e2e-dead retired osd.%d; the dead disk held osd.%d", got, id)
	}
	if gone, _, _ := unstructured.NestedBool(ret.Object, "status", "diskGone"); !gone {
		return fmt.Errorf("DiskRetirement e2e-dead retired osd.%d without saying its disk was gone: %v", id, ret.Object["status"])
	}
	steps, _, _ := unstructured.NestedString(ret.Object, "status", "manualSteps")
	r.step("DiskRetirement e2e-dead retired the dead disk's osd.%d by its ID in %s; manual steps: %s", id, time.Since(start).Round(time.Second), steps)
	r.disks[node] = slices.DeleteFunc(r.disks[node], func(d string) bool { return d == name })
	r.loops[node] = slices.DeleteFunc(r.loops[node], func(d string) bool { return d == dev })
	if err := r.osdGoneFromCeph(id); err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	if err := r.verifyPayload("after the dead disk's osd." + strconv.Itoa(id) + " was retired"); err != nil {
		return err
	}
	if err := r.osdStaysGone(id, node); err != nil {
		return err
	}
	return r.noCephJobsLeft()
}
