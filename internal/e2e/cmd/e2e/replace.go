package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// replace adds a new disk to the last node (a loop device plugged in while
// the cluster runs, found by Rook's discovery once its pod on that node
// probes again) and replaces one of that node's disks with it: the
// replacement joins the pool and its OSD is up before the old OSD is
// marked out; the old one is then retired the whole way, and the payload
// reads back.
func (r *run) replace() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: nothing can be retired (every pool would lose a copy)")
		return nil
	}
	node := r.nodes[len(r.nodes)-1]
	spare, err := r.plugDisk(node)
	if err != nil {
		return err
	}
	old := r.disks[node][len(r.disks[node])-1]
	start := time.Now()
	id, err := r.askRetirement("e2e-replace", map[string]any{"disk": old, "replacement": spare}, 25*time.Minute,
		func(ret *unstructured.Unstructured) func(context.Context) error {
			return r.replacementUpFirst(ret, spare)
		})
	if err != nil {
		return err
	}
	r.step("DiskRetirement e2e-replace replaced %s (osd.%d) with %s of %s in %s", old, id, spare, node, time.Since(start).Round(time.Second))
	r.disks[node] = append(slices.DeleteFunc(r.disks[node], func(d string) bool { return d == old }), spare)
	if err := r.osdGoneFromCeph(id); err != nil {
		return err
	}
	if err := r.waitHealthOK(10 * time.Minute); err != nil {
		return err
	}
	if err := r.verifyPayload("after osd." + strconv.Itoa(id) + " was replaced"); err != nil {
		return err
	}
	return r.noCephJobsLeft()
}

// plugDisk attaches a new empty loop device to node, has the node's
// discovery pod probe again (Rook's discovery probes when it starts), and
// returns the Available Disk the plugin publishes for it.
func (r *run) plugDisk(node string) (string, error) {
	dev, err := r.newLoopDevice(loopDevices * len(r.nodes))
	if err != nil {
		return "", err
	}
	if err := giveDevice(node, dev); err != nil {
		return "", err
	}
	if err := r.findLoopDevices(); err != nil {
		return "", err
	}
	if _, err := r.kubectlOut("-n", "rook-ceph", "delete", "pod", "-l", "app=rook-discover",
		"--field-selector", "spec.nodeName="+node, "--wait=false"); err != nil {
		return "", err
	}
	var name string
	err = r.until(5*time.Minute, func(ctx context.Context) error {
		disks, err := r.listDisks(ctx)
		if err != nil {
			return err
		}
		if name = diskAt(disks.Items, node, dev, "Available"); name == "" {
			return fmt.Errorf("no Available Disk yet for the new %s of %s", dev, node)
		}
		return nil
	})
	if err == nil {
		r.step("node %s: new loop device %s plugged in, published as Available Disk %s", node, dev, name)
	}
	return name, err
}

// replacementUpFirst is followRetirement's check on a replacement: once the
// retirement is past waiting for it, Ceph has an OSD on the replacement's
// device, up and in (checked once, at the first such poll: the old OSD is
// then at most just marked out).
func (r *run) replacementUpFirst(ret *unstructured.Unstructured, replacement string) func(context.Context) error {
	checked := false
	return func(ctx context.Context) error {
		phase, _, _ := unstructured.NestedString(ret.Object, "status", "phase")
		if checked || slices.Contains([]string{"", "Pending", "WaitingForReplacement"}, phase) {
			return nil
		}
		checked = true
		disk := object("Disk", replacement, nil)
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(disk), disk); err != nil {
			return err
		}
		node, _, _ := unstructured.NestedString(disk.Object, "status", "nodeName")
		path, _, _ := unstructured.NestedString(disk.Object, "status", "path")
		id, err := r.osdOn(ctx, node, path)
		if err != nil {
			return fmt.Errorf("DiskRetirement %s is %s: %w", ret.GetName(), phase, err)
		}
		in, up, err := r.osdInUp(id)
		if err != nil {
			return err
		}
		if in != 1 || up != 1 {
			return fmt.Errorf("DiskRetirement %s is %s while the replacement's osd.%d is in=%d up=%d", ret.GetName(), phase, id, in, up)
		}
		r.step("DiskRetirement %s is %s: the replacement's osd.%d (%s of %s) is already up and in", ret.GetName(), phase, id, path, node)
		return nil
	}
}

// osdOn asks Ceph which OSD runs on the device path of node.
func (r *run) osdOn(ctx context.Context, node, path string) (int, error) {
	var metas []map[string]any
	if err := r.cephJSON(ctx, &metas, "osd", "metadata"); err != nil {
		return 0, err
	}
	for _, meta := range metas {
		id, _ := meta["id"].(float64)
		if metadataPlaces(meta, int64(id), node, path) == nil {
			return int(id), nil
		}
	}
	return 0, fmt.Errorf("Ceph has no OSD on %s of %s", path, node)
}
