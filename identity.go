package main

import (
	"slices"
	"sort"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// KeepDiskIdentities gives a device whose identity discovery can no longer
// see the name and identity of the Disk it was published as. discovered is
// one discovery ConfigMap's report (ParseDiscovery), published the Disks
// that ConfigMap reported before, by name.
//
// Rook stops listing a disk once something is layered on it and lists the
// layers instead (pkg/clusterd/disk.go, DiscoverDevicesWithFilter).
// Partitions carry their disk's identity; the LVM volume or dm-crypt
// mapping an OSD puts on a raw disk carries none: Rook reports each entry's
// own udev properties, and a device-mapper node has no serial or WWN and
// only dm-name-/dm-uuid- links. Named from its kernel path, the disk would
// become a second Disk while the first goes Missing under a live OSD, and
// an operator cleaning up the Missing one would take that OSD's device out.
//
// A discovered device d takes the name of a published Disk p when all hold:
//
//   - d is implied (Rook listed only its children) and has no stable path,
//     WWN or serial. A disk Rook lists itself comes with its own udev
//     properties: if it has no identity, that is a fact about it, and it is
//     not the disk that had one.
//   - p is on the same node at the same kernel path, has a stable path, WWN
//     or serial, and is not Missing, so it sat at that path in the report
//     before this one. A Missing Disk was there at some earlier time, and
//     the kernel hands its name to whichever disk comes next.
//   - no device of this report has p's name, stable path, WWN or serial: a
//     disk reported with p's identity (say, under another kernel name) is
//     p, and p is not handed to anything else.
//   - p is the only such Disk for d, and d the only such device for p.
//
// d then keeps p's identity (stable path, WWN, serial, model) and hardware
// (rotational, type, and size when p's is larger: an implied size is a
// lower bound), none of which its children tell; its state and reason stay
// what discovery reports now. The kernel path is all that ties d to p, so
// two such disks trading kernel names between two reports cannot be told
// apart; the by-id path each Disk keeps still names its own physical disk.
//
// Nothing else changes; the result is sorted by name like ParseDiscovery's.
func KeepDiskIdentities(discovered []DiscoveredDisk, published map[string]*cephv1alpha1.Disk) []DiscoveredDisk {
	if !slices.ContainsFunc(discovered, unidentifiedImplied) {
		return discovered // the common case, every publish of every node: nothing to carry over
	}
	out := make([]DiscoveredDisk, len(discovered))
	copy(out, discovered)

	taken := map[string]bool{}
	type place struct{ node, path string }
	unidentified := map[place]int{}
	for i, d := range out {
		taken["name:"+d.Name] = true
		for _, id := range identities(d.Status) {
			taken[id] = true
		}
		if unidentifiedImplied(d) {
			at := place{d.Status.NodeName, d.Status.Path}
			if _, dup := unidentified[at]; dup {
				unidentified[at] = -1 // two devices at one path: neither is told apart
				continue
			}
			unidentified[at] = i
		}
	}

	candidates := map[int][]*cephv1alpha1.Disk{}
	for _, name := range sortedKeys(published) {
		p := published[name]
		ids := identities(p.Status)
		if p.Status.State == cephv1alpha1.DiskMissing || len(ids) == 0 || taken["name:"+name] || anyTaken(taken, ids) {
			continue
		}
		if i, ok := unidentified[place{p.Status.NodeName, p.Status.Path}]; ok && i >= 0 {
			candidates[i] = append(candidates[i], p)
		}
	}
	for i, ps := range candidates {
		if len(ps) == 1 {
			inherit(&out[i], ps[0])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// inherit gives d the name, identity and hardware of the Disk p it is.
func inherit(d *DiscoveredDisk, p *cephv1alpha1.Disk) {
	s, old := &d.Status, p.Status
	d.Name = p.Name
	s.StablePath, s.WWN, s.Serial, s.Model = old.StablePath, old.WWN, old.Serial, old.Model
	s.Rotational, s.Type = old.Rotational, old.Type
	if old.Size != nil && (s.Size == nil || old.Size.Cmp(*s.Size) > 0) {
		size := old.Size.DeepCopy()
		s.Size, s.DisplaySize = &size, message.Bytes(size.Value())
	}
}

// identities are the stable identities a status reports, each tagged with
// its kind so a serial never equals a WWN by accident.
func identities(s cephv1alpha1.DiskStatus) []string {
	var ids []string
	if s.StablePath != "" {
		ids = append(ids, "stable:"+s.StablePath)
	}
	if s.WWN != "" {
		ids = append(ids, "wwn:"+s.WWN)
	}
	if s.Serial != "" {
		ids = append(ids, "serial:"+s.Serial)
	}
	return ids
}

func anyTaken(taken map[string]bool, ids []string) bool {
	for _, id := range ids {
		if taken[id] {
			return true
		}
	}
	return false
}

// unidentifiedImplied is a disk Rook listed only through its children, with
// no identity of its own.
func unidentifiedImplied(d DiscoveredDisk) bool {
	return d.Implied && len(identities(d.Status)) == 0
}
