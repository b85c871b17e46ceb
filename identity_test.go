package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// osdLV is the entry Rook lists for the ceph-volume LVM OSD on a raw disk
// instead of the disk, modelled on Rook v1.18's own fixture
// (pkg/operator/ceph/cluster/watcher_test.go, TestOnDeviceCMUpdate): the
// volume's own udev properties, with no serial, WWN, model or by-id link
// of the disk under it.
func osdLV(kernel, parent string) device {
	lv := "ceph--bee31cdd--e899--4f9a--9e77--df71cfad66f9-osd--block--b5df7900--0cf0--4b1a--a337--7b57c9f0111b"
	return device{
		"name": kernel, "parent": parent, "hasChildren": false,
		"devLinks": "/dev/disk/by-id/dm-name-" + lv +
			" /dev/disk/by-id/dm-uuid-LVM-B10SBHeAy5yF6l2OM3p3EqTQbUAYc6JI63n8ZZPTmxRHXTJHmQ4YTAIBCJqY931Z" +
			" /dev/mapper/" + lv + " /dev/ceph-bee31cdd-e899-4f9a-9e77-df71cfad66f9/osd-block-b5df7900-0cf0-4b1a-a337-7b57c9f0111b",
		"size": uint64(4000783007744), "uuid": "", "serial": "", "type": "lvm", "rotational": true, "readOnly": false,
		"Partitions": []device{{"Name": lv, "Size": 0, "Label": "", "Filesystem": ""}},
		"filesystem": "ceph_bluestore", "mountpoint": "", "vendor": "", "model": "", "wwn": "", "wwnVendorExtension": "",
		"empty": false, "real-path": "/dev/mapper/" + lv, "kernel-name": kernel,
	}
}

// osdCrypt is the dm-crypt mapping of an encrypted OSD on a raw disk: like
// any device-mapper node, only dm-name-/dm-uuid- links of its own.
func osdCrypt(kernel, parent string) device {
	name := parent + "-block-dmcrypt"
	return device{
		"name": kernel, "parent": parent, "hasChildren": false,
		"devLinks": "/dev/disk/by-id/dm-name-" + name +
			" /dev/disk/by-id/dm-uuid-CRYPT-LUKS2-5e0f0c7a9d2b4f1e8c3a6b7d9e0f1a2b-" + name + " /dev/mapper/" + name,
		"size": uint64(4000770424832), "uuid": "", "serial": "", "type": "crypt", "rotational": true, "readOnly": false,
		"Partitions": nil, "filesystem": "ceph_bluestore", "mountpoint": "", "vendor": "", "model": "",
		"wwn": "", "wwnVendorExtension": "", "empty": false, "real-path": "/dev/mapper/" + name, "kernel-name": kernel,
	}
}

// publishedAs is what the inventory wrote for a report: its Disks by name,
// each in the state given (Available when none is).
func publishedAs(t *testing.T, node string, state cephv1alpha1.DiskState, devices ...device) map[string]*cephv1alpha1.Disk {
	t.Helper()
	disks, err := ParseDiscovery(discoveryConfigMap(t, node, devices...), DiscoveryOptions{})
	require.NoError(t, err)
	out := map[string]*cephv1alpha1.Disk{}
	for _, d := range disks {
		disk := &cephv1alpha1.Disk{Status: d.Status}
		disk.Name = d.Name
		if state != "" {
			disk.Status.State = state
		}
		out[d.Name] = disk
	}
	return out
}

func merged(sets ...map[string]*cephv1alpha1.Disk) map[string]*cephv1alpha1.Disk {
	out := map[string]*cephv1alpha1.Disk{}
	for _, s := range sets {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

func TestKeepDiskIdentities(t *testing.T) {
	const node = "worker-1"
	sdbName := DiskName(node, "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4")
	sdbByPath := DiskName(node, "/dev/sdb")
	bare := device{"name": "sdb", "type": "disk", "size": uint64(4000787030016), "empty": true, "rotational": true}

	cases := []struct {
		name      string
		published map[string]*cephv1alpha1.Disk
		now       []device
		// want is the name each kernel path ends up with.
		want map[string]string
	}{
		{
			name:      "a disk under an OSD's LVM keeps the Disk it was published as",
			published: publishedAs(t, node, "", sdb()),
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbName},
		},
		{
			name:      "a disk under an OSD's dm-crypt keeps the Disk it was published as",
			published: publishedAs(t, node, "", sdb()),
			now:       []device{osdCrypt("dm-1", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbName},
		},
		{
			name:      "an LVM disk that kept its name keeps it on the next report",
			published: map[string]*cephv1alpha1.Disk{sdbName: keptDisk(t, node, sdb(), osdLV("dm-0", "sdb"))},
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbName},
		},
		{
			name:      "a disk Rook lists itself without an identity is another disk",
			published: publishedAs(t, node, "", sdb()),
			now:       []device{bare},
			want:      map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "a Missing Disk's kernel path may belong to any disk since",
			published: publishedAs(t, node, cephv1alpha1.DiskMissing, sdb()),
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "a Disk named by its kernel path has no identity to hand on",
			published: publishedAs(t, node, "", bare),
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "a Disk at another kernel path is another disk",
			published: publishedAs(t, node, "", sdb().with(device{"name": "sdc"})),
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "a Disk of another node is another disk",
			published: publishedAs(t, "worker-2", "", sdb()),
			now:       []device{osdLV("dm-0", "sdb")},
			want:      map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "the Disk's identity reported under another kernel name wins",
			published: publishedAs(t, node, "", sdb()),
			now:       []device{osdLV("dm-0", "sdb"), sdb().with(device{"name": "sdf"})},
			want:      map[string]string{"/dev/sdb": sdbByPath, "/dev/sdf": sdbName},
		},
		{
			name:      "the Disk's serial reported by another device makes it ambiguous",
			published: publishedAs(t, node, "", sdb()),
			now: []device{osdLV("dm-0", "sdb"),
				hdd("sdf", "0x5000c500ffffffff").with(device{"serial": "ST4000NM0035_ZC1ABCDE"})},
			want: map[string]string{"/dev/sdb": sdbByPath, "/dev/sdf": DiskName(node, "/dev/disk/by-id/wwn-0x5000c500ffffffff")},
		},
		{
			name: "two Disks at the kernel path: neither is handed on",
			published: merged(publishedAs(t, node, "", sdb()),
				publishedAs(t, node, "", hdd("sdb", "0x5000c500ffffffff"))),
			now:  []device{osdLV("dm-0", "sdb")},
			want: map[string]string{"/dev/sdb": sdbByPath},
		},
		{
			name:      "a disk its partitions identify keeps its own identity",
			published: publishedAs(t, node, "", sdb().with(device{"name": "sdc"})),
			now:       partitionsOfSdc(),
			want:      map[string]string{"/dev/sdc": DiskName(node, "/dev/disk/by-id/wwn-0x5002538e40a1b2c3")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now, err := ParseDiscovery(discoveryConfigMap(t, node, tc.now...), DiscoveryOptions{})
			require.NoError(t, err)
			got := KeepDiskIdentities(now, tc.published)
			require.Len(t, got, len(now), "no device is added or dropped")
			names := map[string]string{}
			for _, d := range got {
				names[d.Status.Path] = d.Name
			}
			assert.Equal(t, tc.want, names)
			for i := 1; i < len(got); i++ {
				assert.Less(t, got[i-1].Name, got[i].Name, "sorted by name")
			}
		})
	}
}

// keptDisk is the Disk of a device published by before and then reported
// as after.
func keptDisk(t *testing.T, node string, before device, after ...device) *cephv1alpha1.Disk {
	t.Helper()
	now, err := ParseDiscovery(discoveryConfigMap(t, node, after...), DiscoveryOptions{})
	require.NoError(t, err)
	kept := KeepDiskIdentities(now, publishedAs(t, node, "", before))
	require.Len(t, kept, 1)
	disk := &cephv1alpha1.Disk{Status: kept[0].Status}
	disk.Name = kept[0].Name
	return disk
}

func TestKeepDiskIdentitiesCarriesWhatTheChildrenCannotTell(t *testing.T) {
	const node = "worker-1"
	published := publishedAs(t, node, "", sdb())
	now, err := ParseDiscovery(discoveryConfigMap(t, node, osdLV("dm-0", "sdb")), DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, now, 1)
	require.Empty(t, now[0].Status.StablePath, "precondition: the LVM entry says nothing of its disk")

	got := KeepDiskIdentities(now, published)
	require.Len(t, got, 1)
	s := got[0].Status
	assert.Equal(t, "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", s.StablePath)
	assert.Equal(t, "0x5000c500a1b2c3d4", s.WWN)
	assert.Equal(t, "ST4000NM0035_ZC1ABCDE", s.Serial)
	assert.Equal(t, "ST4000NM0035", s.Model)
	assert.Equal(t, cephv1alpha1.DiskTypeHDD, s.Type, "an HDD under LVM is still an HDD")
	assert.True(t, s.Rotational)
	assert.Equal(t, int64(4000787030016), s.Size.Value(), "the disk's measured size, not its children's lower bound")
	assert.Equal(t, cephv1alpha1.DiskInUse, s.State, "what is on it is today's report")
	assert.Equal(t, "in use by lvm dm-0 (ceph_bluestore)", s.Reason)
	assert.False(t, s.Available)
	assert.Equal(t, "/dev/sdb", s.Path)
	assert.Empty(t, now[0].Status.StablePath, "the input is not modified")
}
