package retirement

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// Disk retirement: the pure decisions. The reconciler
// (controller.go) gathers the facts and carries out the step.

// OSDLookup is what the OSD Deployments say about one disk.
type OSDLookup struct {
	// OSD is the disk's OSD; nil when the device carries none.
	OSD *rook.OSD
	// Refusal, when set, is why the plugin cannot tell: two OSDs claim the
	// device, or an OSD on the same node runs on a path that names no Disk
	// (an LVM volume, a renamed device) and may be this disk's.
	Refusal string
}

// FindOSD finds the OSD on disk among osds. nodePaths are every path (kernel
// and stable) of every Disk on the disk's node, so that an OSD whose path
// belongs to another Disk is known not to be this one's. unreadable names
// OSD Deployments rook.ParseOSDDeployment refused: any of them may be this
// disk's, so their presence refuses a "no OSD" answer.
func FindOSD(disk *cephv1alpha1.Disk, osds []rook.OSD, nodePaths map[string]bool, unreadable []string) OSDLookup {
	node := disk.Status.NodeName
	var matches []rook.OSD
	var unattributed []string
	for _, o := range osds {
		if o.Node != node {
			continue
		}
		switch {
		case o.BlockPath == disk.Status.Path || (disk.Status.StablePath != "" && o.BlockPath == disk.Status.StablePath):
			matches = append(matches, o)
		case !nodePaths[o.BlockPath]:
			unattributed = append(unattributed, fmt.Sprintf("osd.%d on %s", o.ID, o.BlockPath))
		}
	}
	switch {
	case len(matches) == 1:
		return OSDLookup{OSD: &matches[0]}
	case len(matches) > 1:
		ids := make([]string, len(matches))
		for i, m := range matches {
			ids[i] = "osd." + strconv.Itoa(int(m.ID))
		}
		return OSDLookup{Refusal: fmt.Sprintf("%s all run on %s of node %s; remove the stale ones in Ceph first", strings.Join(ids, " and "), disk.Status.Path, node)}
	case len(unattributed) > 0:
		sort.Strings(unattributed)
		return OSDLookup{Refusal: fmt.Sprintf("no OSD runs on %s, but %s of node %s name no Disk and may be this one's; retire it by hand", disk.Status.Path, strings.Join(unattributed, ", "), node)}
	case len(unreadable) > 0:
		return OSDLookup{Refusal: fmt.Sprintf("no OSD runs on %s, but Rook's OSD Deployments %s cannot be read and may be this one's", disk.Status.Path, strings.Join(unreadable, ", "))}
	}
	return OSDLookup{}
}

// FindOSDByLabel finds the disk's OSD by the OSD UUID its BlueStore label
// names: the OSD of that UUID on the disk's node, whatever path Rook
// recorded for it (the path is the kernel name the device had when it was
// prepared; the label moves with the disk).
func FindOSDByLabel(disk *cephv1alpha1.Disk, osds []rook.OSD, label string) OSDLookup {
	var matches []rook.OSD
	for _, o := range osds {
		if o.Node == disk.Status.NodeName && o.UUID == label {
			matches = append(matches, o)
		}
	}
	switch len(matches) {
	case 1:
		return OSDLookup{OSD: &matches[0]}
	case 0:
		return OSDLookup{Refusal: fmt.Sprintf("refused, nothing was touched: %s on node %s holds the OSD with UUID %s, which no OSD Deployment of node %s runs; retire it by hand",
			disk.Status.Path, disk.Status.NodeName, label, disk.Status.NodeName)}
	}
	return OSDLookup{Refusal: fmt.Sprintf("refused, nothing was touched: %d OSD Deployments of node %s run the OSD with UUID %s; remove the stale ones first",
		len(matches), disk.Status.NodeName, label)}
}

// Preflight check names: the consumers' (the Ceph-side ones are in
// ceph.go).
const (
	CheckHosts    = "Hosts"
	CheckCopies   = "Copies"
	CheckCapacity = "Capacity"
)

// ConsumerNeed is the replication one consumer uses now.
type ConsumerNeed struct {
	Consumer string // "BlockStorage app-data"
	Size     int32
	Domain   string
	// Class is the device class its pools are on ("": every OSD): only
	// that class's hosts and OSDs hold its copies.
	Class cephv1alpha1.DiskType
}

// Room is how many hosts and OSDs a device class has: where the copies of
// a consumer on that class can go.
type Room struct {
	Hosts, OSDs int
}

// PreflightInput is what the consumers' checks are made against.
type PreflightInput struct {
	// After is the shared OSD set by device class once the disk is gone
	// (its replacement, when it joined or is joining, included); "" is
	// every OSD, whatever its class, and a class not there has no room.
	// Before is the same now, with the disk.
	After, Before map[cephv1alpha1.DiskType]Room
	Consumers     []ConsumerNeed
}

// Preflight checks a retirement against what the consumers ask, before
// anything is touched: enough hosts (or, for consumers whose copies sit on
// OSDs, enough OSDs) remain for every consumer's replica count, and every
// consumer keeps a second copy. Ceph's own checks (CephChecks) follow.
// Every check is reported, passed or not.
func Preflight(in PreflightInput) []cephv1alpha1.PreflightCheck {
	return []cephv1alpha1.PreflightCheck{hostsCheck(in), copiesCheck(in)}
}

// copiesCheck refuses while a consumer keeps one copy: Rook removes only an
// OSD that is down (remove.go), and a single-copy pool's data on a down
// OSD has nowhere to be copied from, so Ceph would never call it safe to
// destroy and Rook's Job would wait forever, the data unavailable.
func copiesCheck(in PreflightInput) cephv1alpha1.PreflightCheck {
	var single []string
	for _, c := range in.Consumers {
		if c.Size < 2 {
			single = append(single, c.Consumer)
		}
	}
	if len(single) > 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckCopies, Message: fmt.Sprintf("%s keeps a single copy: its data on the stopped OSD could not be copied elsewhere and Ceph would never call the OSD safe to destroy; give it two replicas (and the nodes they need) first", message.Clauses(single))}
	}
	return cephv1alpha1.PreflightCheck{Name: CheckCopies, Passed: true, Message: "every consumer keeps a second copy while the OSD is stopped"}
}

func hostsCheck(in PreflightInput) cephv1alpha1.PreflightCheck {
	var short []string
	for _, c := range in.Consumers {
		have, unit := roomFor(c, in.After[c.Class])
		had, _ := roomFor(c, in.Before[c.Class])
		if c.Class != "" {
			unit = string(c.Class) + " " + unit
		}
		// A consumer its class is already short for (refused, its pools
		// kept) refuses only a retirement that takes more of that room.
		if int(c.Size) > have && (in.Before == nil || have < had) {
			short = append(short, fmt.Sprintf("%s keeps %d copies on different %s", c.Consumer, c.Size, unit))
		}
	}
	after := fmt.Sprintf("%s and %s would remain", message.Plural(in.After[""].Hosts, "host"), message.Plural(in.After[""].OSDs, "OSD"))
	if len(short) > 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckHosts, Message: fmt.Sprintf("%s: too few for %s; add a disk on another node first (a replacement does)", after, message.Clauses(short))}
	}
	return cephv1alpha1.PreflightCheck{Name: CheckHosts, Passed: true, Message: after + ": enough for every consumer's copies"}
}

// roomFor is the hosts (or, for a consumer whose copies sit on OSDs, the
// OSDs) of room that can hold c's copies, and their unit.
func roomFor(c ConsumerNeed, room Room) (int, string) {
	if c.Domain == rook.FailureDomainOSD {
		return room.OSDs, "OSDs"
	}
	return room.Hosts, "hosts"
}

// Queue is where a retirement stands among the others.
type Queue struct {
	// SameDisk is an older unfinished retirement of the same disk: the
	// first asked keeps it.
	SameDisk string
	// Ahead is the retirement that goes before this one, and why: Ceph
	// retires one OSD at a time, since two OSDs stopped together on two
	// hosts take every PG with a copy on both below its copies (inactive
	// when only two were kept), and each removal's checks assume the rest
	// of the cluster stays as it is.
	Ahead string
}

// QueueOf places self among all retirements: one that has touched
// the cluster (stopped an OSD, added a replacement, runs a Job) goes first,
// then the oldest unfinished one (cephv1alpha1.OlderFirst) that is not held by
// spec.suspend; a suspended one waits for its confirmation, not its turn.
// One that runs keeps its turn whoever comes after.
func QueueOf(self *cephv1alpha1.DiskRetirement, all []cephv1alpha1.DiskRetirement) Queue {
	var q Queue
	selfRuns := runs(self.Status)
	var sameDisk, running, first *cephv1alpha1.DiskRetirement
	for i := range all {
		o := &all[i]
		if o.Name == self.Name || o.Status.Phase.Finished() {
			continue
		}
		older := cephv1alpha1.OlderFirst(o, self) < 0
		switch {
		case o.Spec.Disk == self.Spec.Disk:
			if older && (sameDisk == nil || cephv1alpha1.OlderFirst(o, sameDisk) < 0) {
				sameDisk = o
			}
		case selfRuns:
		case runs(o.Status):
			running = o
		case older && !o.Spec.Suspend && (first == nil || cephv1alpha1.OlderFirst(o, first) < 0):
			first = o
		}
	}
	if sameDisk != nil {
		q.SameDisk = sameDisk.Name
	}
	switch {
	case running != nil:
		q.Ahead = fmt.Sprintf("DiskRetirement %s (%s)", running.Name, running.Status.Phase)
	case first != nil:
		q.Ahead = fmt.Sprintf("DiskRetirement %s, asked first", first.Name)
	}
	return q
}

// runs: the retirement has its turn, having touched the cluster or added
// its replacement to the pool.
func runs(s cephv1alpha1.DiskRetirementStatus) bool {
	return touched(s) || s.Phase == cephv1alpha1.RetirementWaitingForReplacement
}

// WipeInstructions is what the operator must do by hand before the disk is
// used again: Rook's removal does not wipe it, and a device that still
// carries an OSD's data is skipped by Rook's prepare (or taken for the old
// OSD). They first check that the device still is the OSD's (its label
// names osdUUID): kernel names change across reboots. The steps are those
// of Rook's "Zapping Devices" (Documentation/Storage-Configuration/
// ceph-teardown.md), for this device. They are pasted into a root shell,
// so the device is single-quoted (its path passed SafeDevicePath, and a
// udev escape such as "\x20" must reach the command as written).
func WipeInstructions(node, device, osdUUID string) string {
	return fmt.Sprintf("The disk still holds the removed OSD's data. Before using it again, on node %s: "+
		"check that it is the OSD's disk (`ceph-bluestore-tool show-label --dev %[2]s` names osd_uuid %[4]s; if it names another, do not wipe it and find the disk that does), then "+
		"sgdisk --zap-all %[2]s; dd if=/dev/zero of=%[2]s bs=1K count=200 oflag=direct,dsync seek=0 "+
		"(and at 1 GB, 10 GB, 100 GB, 1000 GB, as Rook's teardown guide shows), or blkdiscard %[2]s on an SSD; partprobe %[2]s. "+
		"Then remove the %[3]s annotation from its Disk and take it out of its DiskPool's spec.disks (or leave it there to give it to Ceph again).",
		node, shellQuote(device), cephv1alpha1.RetiredAnnotation, osdUUID)
}

// shellQuote is s as one word of a POSIX shell: single-quoted, with any
// single quote closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
