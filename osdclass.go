package main

import (
	"fmt"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// A Disk's OSD and its class. The plugin counts tiers by a Disk's type
// (TiersOf) and gives each device that type as its class when Rook
// prepares it (RenderStorageNodes, config.deviceClass), so as prepared the
// two agree. They part when an OSD was prepared before its Disk had a
// class (Ceph then picked one itself, an NVMe drive perhaps as ssd), or
// when discovery later sees the device otherwise (a virtual disk's
// rotational flag). Rook v1.18.11 never re-classes an existing OSD after
// a per-device class (osd.go getOSDPropsForNode reads the node-level
// config only), and with allowDeviceClassUpdate on, as the plugin sets it,
// it keeps CRUSH's class at the one the OSD's Deployment carries
// (updateDeviceClassIfChanged): that class is the OSD's class here.

// OSDNodeFacts are one node's OSD Deployments as the inventory reads
// them: those parsed, and the names of those that cannot be (any of them
// may run on any of the node's disks).
type OSDNodeFacts struct {
	OSDs       []rook.OSD
	Unreadable []string
}

// DiskOSDOf is the OSD that runs on disk, found as a retirement finds it
// (retirement.FindOSD: the path its Deployment records, on the disk's
// node); nil when none does, or when the Deployments cannot tell (two on
// the device, one on a path no Disk of the node names). nodePaths are the
// kernel and stable paths of every Disk of the node.
func DiskOSDOf(disk *cephv1alpha1.Disk, node OSDNodeFacts, nodePaths map[string]bool) *cephv1alpha1.DiskOSD {
	found := retirement.FindOSD(disk, node.OSDs, nodePaths, node.Unreadable).OSD
	if found == nil {
		return nil
	}
	// A Deployment's word, bounded as the Disk's CRD bounds it.
	return &cephv1alpha1.DiskOSD{ID: found.ID, DeviceClass: reported(found.DeviceClass)}
}

// ClassMismatch says what it means that a disk of type diskType runs osd,
// whose device class differs: "" when they agree, when there is no OSD, or
// when either is unknown (an OSD Deployment naming no class leaves CRUSH's
// class as it is, which only Ceph knows).
func ClassMismatch(diskType cephv1alpha1.DiskType, osd *cephv1alpha1.DiskOSD) string {
	if osd == nil || osd.DeviceClass == "" || diskType == "" || osd.DeviceClass == string(diskType) {
		return ""
	}
	name := fmt.Sprintf("osd.%d", osd.ID)
	return message.Bound(fmt.Sprintf("%s runs on this %s disk with device class %s, the class its Deployment %s carries and Rook keeps CRUSH's at: "+
		"the plugin's tiers count the disk as %s while Ceph places data by the CRUSH class, "+
		"so pools on class %s never use this OSD and pools on class %s do. "+
		"A re-created OSD fixes it: retire the disk with a DiskRetirement (its data moves off first), then remove its %s annotation, and Rook prepares it again as %s. "+
		"`ceph osd crush set-device-class %s %s` by hand does not last: Rook sets the Deployment's class back at its next OSD reconcile (allowDeviceClassUpdate)",
		name, diskType, osd.DeviceClass, rook.OSDDeploymentName(osd.ID),
		diskType, diskType, osd.DeviceClass, cephv1alpha1.RetiredAnnotation, diskType, diskType, name))
}

// nodePathsOf are the kernel and stable paths of the disks given.
func nodePathsOf(statuses []cephv1alpha1.DiskStatus) map[string]bool {
	paths := map[string]bool{}
	for _, s := range statuses {
		for _, p := range []string{s.Path, s.StablePath} {
			if p != "" {
				paths[p] = true
			}
		}
	}
	return paths
}
