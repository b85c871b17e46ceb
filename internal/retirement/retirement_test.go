package retirement

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

func retirementDisk(name, node, path, stable string) *cephv1alpha1.Disk {
	d := &cephv1alpha1.Disk{}
	d.Name = name
	d.Status = cephv1alpha1.DiskStatus{NodeName: node, Path: path, StablePath: stable, State: cephv1alpha1.DiskInUse, ClaimedBy: "pool"}
	size := resource.MustParse("100Gi")
	d.Status.Size = &size
	return d
}

func TestFindOSD(t *testing.T) {
	disk := retirementDisk("a-sdb", "node-a", "/dev/sdb", "/dev/disk/by-id/wwn-0xb")
	osd := func(id int32, node, path string) rook.OSD {
		return rook.OSD{ID: id, Node: node, BlockPath: path, UUID: "u", Deployment: "rook-ceph-osd-" + string(rune('0'+id))}
	}
	nodePaths := map[string]bool{"/dev/sdb": true, "/dev/disk/by-id/wwn-0xb": true, "/dev/sdc": true}
	tests := []struct {
		name       string
		osds       []rook.OSD
		unreadable []string
		wantID     int32 // -1: none
		refusal    string
	}{
		{name: "by kernel path on the node", osds: []rook.OSD{osd(1, "node-a", "/dev/sdc"), osd(2, "node-a", "/dev/sdb")}, wantID: 2},
		{name: "by stable path", osds: []rook.OSD{osd(3, "node-a", "/dev/disk/by-id/wwn-0xb")}, wantID: 3},
		{name: "the same path on another node is another disk", osds: []rook.OSD{osd(4, "node-b", "/dev/sdb")}, wantID: -1},
		{name: "no OSD at all", wantID: -1},
		{name: "two OSDs on the device", osds: []rook.OSD{osd(1, "node-a", "/dev/sdb"), osd(5, "node-a", "/dev/sdb")}, wantID: -1, refusal: "osd.1 and osd.5 all run on /dev/sdb of node node-a"},
		{name: "an OSD of the node on a path no Disk names may be this one", osds: []rook.OSD{osd(6, "node-a", "/dev/ceph-x/osd-block-y")}, wantID: -1, refusal: "osd.6 on /dev/ceph-x/osd-block-y of node node-a name no Disk"},
		{name: "an unreadable OSD Deployment may be this one", unreadable: []string{"rook-ceph-osd-9"}, wantID: -1, refusal: "rook-ceph-osd-9 cannot be read"},
		{name: "a found OSD wins over unreadable ones", osds: []rook.OSD{osd(2, "node-a", "/dev/sdb")}, unreadable: []string{"rook-ceph-osd-9"}, wantID: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FindOSD(disk, tc.osds, nodePaths, tc.unreadable)
			if tc.wantID < 0 {
				assert.Nil(t, got.OSD)
			} else if assert.NotNil(t, got.OSD) {
				assert.Equal(t, tc.wantID, got.OSD.ID)
			}
			if tc.refusal == "" {
				assert.Empty(t, got.Refusal)
			} else {
				assert.Contains(t, got.Refusal, tc.refusal)
			}
		})
	}
}

// After the kernel names moved, the label names the disk's OSD whatever
// path Rook recorded for it; only an OSD of the disk's node counts.
func TestFindOSDByLabel(t *testing.T) {
	disk := retirementDisk("a-sdb", "node-a", "/dev/sdb", "")
	osd := func(id int32, node, path, uuid string) rook.OSD {
		return rook.OSD{ID: id, Node: node, BlockPath: path, UUID: uuid}
	}
	tests := []struct {
		name    string
		osds    []rook.OSD
		wantID  int32 // -1: none
		refusal string
	}{
		{name: "the labelled rook.OSD, recorded at the other disk's kernel name", osds: []rook.OSD{osd(1, "node-a", "/dev/sdb", "u1"), osd(2, "node-a", "/dev/sdc", "u2")}, wantID: 2},
		{name: "an OSD of that UUID on another node is not this disk's", osds: []rook.OSD{osd(2, "node-b", "/dev/sdc", "u2")}, wantID: -1, refusal: "holds the OSD with UUID u2, which no OSD Deployment of node node-a runs"},
		{name: "two Deployments of one OSD", osds: []rook.OSD{osd(2, "node-a", "/dev/sdc", "u2"), osd(7, "node-a", "/dev/sdd", "u2")}, wantID: -1, refusal: "2 OSD Deployments of node node-a run the OSD with UUID u2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FindOSDByLabel(disk, tc.osds, "u2")
			if tc.wantID < 0 {
				assert.Nil(t, got.OSD)
				assert.Contains(t, got.Refusal, tc.refusal)
				assert.Contains(t, got.Refusal, "nothing was touched")
			} else if assert.NotNil(t, got.OSD) {
				assert.Equal(t, tc.wantID, got.OSD.ID)
				assert.Empty(t, got.Refusal)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	healthy := func() PreflightInput {
		return PreflightInput{
			After:     map[cephv1alpha1.DiskType]Room{"": {Hosts: 3, OSDs: 5}, "ssd": {Hosts: 2, OSDs: 2}},
			Consumers: []ConsumerNeed{{Consumer: "BlockStorage db", Size: 3, Domain: rook.FailureDomainHost}},
		}
	}
	tests := []struct {
		name   string
		change func(*PreflightInput)
		failed map[string]string // check name -> part of its message
	}{
		{name: "enough hosts for every consumer", change: func(*PreflightInput) {}},
		{name: "too few hosts for a consumer's copies", change: func(in *PreflightInput) { in.After[""] = Room{Hosts: 2, OSDs: 5} },
			failed: map[string]string{CheckHosts: "2 hosts and 5 OSDs would remain: too few for BlockStorage db keeps 3 copies on different hosts"}},
		{name: "copies on OSDs count OSDs", change: func(in *PreflightInput) {
			in.After[""] = Room{Hosts: 1, OSDs: 1}
			in.Consumers = []ConsumerNeed{{Consumer: "FileStorage f", Size: 2, Domain: rook.FailureDomainOSD}}
		}, failed: map[string]string{CheckHosts: "FileStorage f keeps 2 copies on different OSDs"}},
		{name: "two copies on the OSDs of one node that remain", change: func(in *PreflightInput) {
			in.After[""] = Room{Hosts: 1, OSDs: 2}
			in.Consumers = []ConsumerNeed{{Consumer: "FileStorage f", Size: 2, Domain: rook.FailureDomainOSD}}
		}},
		{name: "a consumer on a class counts that class's hosts", change: func(in *PreflightInput) {
			in.Consumers = append(in.Consumers, ConsumerNeed{Consumer: "BlockStorage fast", Size: 3, Domain: rook.FailureDomainHost, Class: "ssd"})
		}, failed: map[string]string{CheckHosts: "too few for BlockStorage fast keeps 3 copies on different ssd hosts"}},
		{name: "a consumer on a class fits its class's hosts", change: func(in *PreflightInput) {
			in.Consumers = []ConsumerNeed{{Consumer: "BlockStorage fast", Size: 2, Domain: rook.FailureDomainHost, Class: "ssd"}}
		}},
		{name: "a consumer with a single copy", change: func(in *PreflightInput) {
			in.Consumers = append(in.Consumers, ConsumerNeed{Consumer: "ObjectStorage media", Size: 1, Domain: rook.FailureDomainOSD})
		}, failed: map[string]string{CheckCopies: "ObjectStorage media keeps a single copy"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := healthy()
			tc.change(&in)
			checks := Preflight(in)
			require.Len(t, checks, 2, "every check is reported")
			for _, c := range checks {
				want, fails := tc.failed[c.Name]
				assert.Equal(t, !fails, c.Passed, "%s: %s", c.Name, c.Message)
				if fails {
					assert.Contains(t, c.Message, want)
				}
			}
			preflight := cephv1alpha1.PreflightChecks(checks)
			assert.Equal(t, len(tc.failed) == 0, preflight.Passed(), preflight.Failed())
		})
	}
}

// The wipe instructions are pasted into a root shell: every device path
// discovery lets through reaches the command as one word, as written.
func TestWipeInstructionsGiveTheShellTheDeviceAsWritten(t *testing.T) {
	for _, device := range []string{"/dev/sdb", `/dev/disk/by-label/My\x20Disk`, "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", "/dev/sd'b"} {
		steps := WipeInstructions("node-a", device, "0c8f3a52-5d8e-4c3b-9a57-8e1f0d2c4b6a")
		assert.Contains(t, steps, "show-label --dev "+strings.SplitN(strings.SplitN(steps, "show-label --dev ", 2)[1], "`", 2)[0]+"` names osd_uuid 0c8f3a52", "the disk is checked first")
		command, _, ok := strings.Cut(strings.SplitN(steps, "sgdisk --zap-all ", 2)[1], ";")
		require.True(t, ok, steps)
		out, err := exec.Command("sh", "-c", `printf '%s|' `+command).Output()
		require.NoError(t, err)
		assert.Equal(t, device+"|", string(out), "the shell reads %s", command)
	}
}

func TestQueueOf(t *testing.T) {
	at := func(name, disk string, minute int, phase cephv1alpha1.DiskRetirementPhase, suspend bool) cephv1alpha1.DiskRetirement {
		r := cephv1alpha1.DiskRetirement{Spec: cephv1alpha1.DiskRetirementSpec{Disk: disk, Suspend: suspend}}
		r.Name, r.CreationTimestamp = name, metav1.NewTime(time.Date(2026, 12, 3, 12, minute, 0, 0, time.UTC))
		r.Status.Phase = phase
		return r
	}
	const (
		pending  = cephv1alpha1.RetirementPending
		removing = cephv1alpha1.RetirementRemoving
	)
	tests := []struct {
		name   string
		self   cephv1alpha1.DiskRetirement
		others []cephv1alpha1.DiskRetirement
		want   Queue
	}{
		{"alone", at("b", "d2", 5, pending, false), nil, Queue{}},
		{"an older one asked first goes first", at("b", "d2", 5, pending, false), []cephv1alpha1.DiskRetirement{at("a", "d1", 1, pending, false)},
			Queue{Ahead: "DiskRetirement a, asked first"}},
		{"a newer one waits for this one", at("a", "d1", 1, pending, false), []cephv1alpha1.DiskRetirement{at("b", "d2", 5, pending, false)}, Queue{}},
		{"one that runs goes first, however new", at("a", "d1", 1, pending, false), []cephv1alpha1.DiskRetirement{at("b", "d2", 5, removing, false)},
			Queue{Ahead: "DiskRetirement b (Removing)"}},
		{"one adding its replacement runs", at("a", "d1", 1, pending, false), []cephv1alpha1.DiskRetirement{at("b", "d2", 5, cephv1alpha1.RetirementWaitingForReplacement, false)},
			Queue{Ahead: "DiskRetirement b (WaitingForReplacement)"}},
		{"a suspended older one waits for its confirmation, not in the queue", at("b", "d2", 5, pending, false), []cephv1alpha1.DiskRetirement{at("a", "d1", 1, cephv1alpha1.RetirementSuspended, true)},
			Queue{}},
		{"finished ones are no queue", at("b", "d2", 5, pending, false), []cephv1alpha1.DiskRetirement{at("a", "d1", 1, cephv1alpha1.RetirementRetired, false), at("c", "d3", 0, cephv1alpha1.RetirementRefused, false)},
			Queue{}},
		{"one that runs keeps its turn when an older one is confirmed", func() cephv1alpha1.DiskRetirement {
			r := at("b", "d2", 5, cephv1alpha1.RetirementStoppingOSD, false)
			r.Status.OSDStopped = true
			return r
		}(), []cephv1alpha1.DiskRetirement{at("a", "d1", 1, pending, false)}, Queue{}},
		{"the oldest of the same disk keeps it", at("c", "d1", 5, pending, false), []cephv1alpha1.DiskRetirement{at("b", "d1", 3, pending, false), at("a", "d1", 1, pending, false)},
			Queue{SameDisk: "a"}},
		{"the oldest asked first is named", at("c", "d3", 5, pending, false), []cephv1alpha1.DiskRetirement{at("b", "d2", 3, pending, false), at("a", "d1", 1, pending, false)},
			Queue{Ahead: "DiskRetirement a, asked first"}},
		{"ties on time go by name", at("b", "d2", 1, pending, false), []cephv1alpha1.DiskRetirement{at("a", "d1", 1, pending, false)},
			Queue{Ahead: "DiskRetirement a, asked first"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, QueueOf(&tc.self, append(tc.others, tc.self)))
		})
	}
}

// A consumer its class is already short for (refused by the plugin, its
// pools kept as they are) does not refuse every retirement in the
// cluster: only one that takes more of its class's room.
func TestHostsCheckRefusesOnlyWhatTakesTheRoom(t *testing.T) {
	refused := ConsumerNeed{Consumer: "BlockStorage fast", Size: 3, Domain: rook.FailureDomainHost, Class: cephv1alpha1.DiskTypeSSD}
	before := map[cephv1alpha1.DiskType]Room{"": {Hosts: 3, OSDs: 6}, cephv1alpha1.DiskTypeSSD: {Hosts: 2, OSDs: 2}}
	hdd := map[cephv1alpha1.DiskType]Room{"": {Hosts: 3, OSDs: 5}, cephv1alpha1.DiskTypeSSD: {Hosts: 2, OSDs: 2}}
	ssd := map[cephv1alpha1.DiskType]Room{"": {Hosts: 3, OSDs: 5}, cephv1alpha1.DiskTypeSSD: {Hosts: 1, OSDs: 1}}
	assert.True(t, hostsCheck(PreflightInput{Before: before, After: hdd, Consumers: []ConsumerNeed{refused}}).Passed, "an hdd disk takes nothing of ssd's room")
	check := hostsCheck(PreflightInput{Before: before, After: ssd, Consumers: []ConsumerNeed{refused}})
	assert.False(t, check.Passed)
	assert.Contains(t, check.Message, "BlockStorage fast keeps 3 copies on different ssd hosts")
}
