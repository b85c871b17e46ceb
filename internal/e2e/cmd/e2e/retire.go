package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// retire previews the retirement of one loop Disk against the real Rook
// and Ceph (spec.suspend: nothing may be touched): the plugin must find the
// OSD that Rook runs on that device, the one Ceph's own metadata places on
// it, and refuse, since the consumers of the one node contributing disks
// so far keep a single copy and Ceph
// would never call a stopped OSD of theirs safe to destroy.
func (r *run) retire() error {
	if len(r.nodes) == 0 || len(r.disks[r.nodes[0]]) == 0 {
		return errors.New("no loop Disks (the rook phase finds them)")
	}
	disk := object("Disk", r.disks[r.nodes[0]][0], nil)
	if err := r.c.Get(r.ctx, client.ObjectKeyFromObject(disk), disk); err != nil {
		return err
	}
	node, _, _ := unstructured.NestedString(disk.Object, "status", "nodeName")
	path, _, _ := unstructured.NestedString(disk.Object, "status", "path")

	ret := object("DiskRetirement", "e2e", map[string]any{"disk": disk.GetName(), "suspend": true})
	if err := r.c.Create(r.ctx, ret); err != nil {
		return err
	}
	if err := r.waitPhase(ret, "Refused", 2*time.Minute); err != nil {
		return err
	}
	id, found, _ := unstructured.NestedInt64(ret.Object, "status", "osdID")
	if !found {
		msg, _, _ := unstructured.NestedString(ret.Object, "status", "message")
		return fmt.Errorf("the retirement found no OSD on %s of %s: %s", path, node, msg)
	}
	if err := r.checkOSDDevice(id, node, path); err != nil {
		return err
	}
	if err := copiesRefused(ret); err != nil {
		return err
	}
	if err := r.osdRunsOne(id, "after a refused retirement"); err != nil {
		return err
	}
	r.step("DiskRetirement of %s found osd.%d, which Ceph places on %s, and refused it (single-copy consumers), touching nothing", disk.GetName(), id, path)
	if err := r.c.Delete(r.ctx, ret); err != nil {
		return err
	}
	return r.waitRetirementGone(ret, "the refused retirement", time.Minute)
}

// checkOSDDevice asks Ceph where osd.id runs: its host must be node and
// one of its devices the Disk's kernel device.
func (r *run) checkOSDDevice(id int64, node, path string) error {
	var meta map[string]any
	if err := r.cephJSON(r.ctx, &meta, "osd", "metadata", strconv.FormatInt(id, 10)); err != nil {
		return err
	}
	return metadataPlaces(meta, id, node, path)
}

// metadataPlaces checks that Ceph's metadata of osd.id places it on the
// device path of node.
func metadataPlaces(meta map[string]any, id int64, node, path string) error {
	if host, _ := meta["hostname"].(string); host != node {
		return fmt.Errorf("Ceph runs osd.%d on host %q, the Disk is on %q", id, host, node)
	}
	kernel := filepath.Base(path)
	for _, key := range []string{"devices", "bluestore_bdev_dev_node", "bluestore_bdev_devices"} {
		if v, _ := meta[key].(string); v == path || listHolds(v, kernel) {
			return nil
		}
	}
	return fmt.Errorf("Ceph's metadata of osd.%d names none of %s: %v", id, path, meta)
}

// listHolds reports whether the comma-separated list holds item.
func listHolds(list, item string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == item || strings.TrimSpace(v) == "/dev/"+item {
			return true
		}
	}
	return false
}

func copiesRefused(ret *unstructured.Unstructured) error {
	checks, _, _ := unstructured.NestedSlice(ret.Object, "status", "preflight")
	for _, c := range checks {
		check, _ := c.(map[string]any)
		if check["name"] == "Copies" && check["passed"] == false {
			return nil
		}
	}
	return fmt.Errorf("the preflight did not refuse single-copy consumers: %v", checks)
}

// osdRunsOne checks that osd.id's Deployment asks for one replica, when.
func (r *run) osdRunsOne(id int64, when string) error {
	replicas, err := r.kubectlOut("-n", "rook-ceph", "get", "deployment", "rook-ceph-osd-"+strconv.FormatInt(id, 10), "-o", "jsonpath={.spec.replicas}")
	if err != nil {
		return err
	}
	if strings.TrimSpace(replicas) != "1" {
		return fmt.Errorf("osd.%d's Deployment has %q replicas %s", id, replicas, when)
	}
	return nil
}
