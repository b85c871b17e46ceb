package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// device is one entry of Rook's devices JSON, as a map so tests can write
// exactly the keys Rook writes (and leave out the ones it omits).
type device map[string]any

// sdb is the example entry from rook.md.
func sdb() device {
	return device{
		"name": "sdb", "parent": "", "hasChildren": false,
		"devLinks": "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4 /dev/disk/by-id/ata-ST4000NM0035_ZC1ABCDE /dev/disk/by-path/pci-0000:00:17.0-ata-2",
		"size":     uint64(4000787030016), "uuid": "", "serial": "ST4000NM0035_ZC1ABCDE", "type": "disk",
		"rotational": true, "readOnly": false, "Partitions": nil, "filesystem": "", "mountpoint": "",
		"vendor": "ATA", "model": "ST4000NM0035", "wwn": "0x5000c500a1b2c3d4",
		"wwnVendorExtension": "0x5000c500a1b2c3d4", "empty": true,
		"cephVolumeData": `{"path":"/dev/sdb","available":true,"rejected_reasons":[]}`,
		"real-path":      "/dev/sdb", "kernel-name": "sdb",
	}
}

// with returns a copy of d with keys overridden.
func (d device) with(kv device) device {
	out := device{}
	for k, v := range d {
		out[k] = v
	}
	for k, v := range kv {
		out[k] = v
	}
	return out
}

func discoveryConfigMap(t testing.TB, node string, devices ...device) *corev1.ConfigMap {
	t.Helper()
	raw, err := json.Marshal(devices)
	require.NoError(t, err)
	return rawDiscoveryConfigMap(node, string(raw))
}

func rawDiscoveryConfigMap(node, devicesJSON string) *corev1.ConfigMap {
	labels := map[string]string{DiscoveryAppLabel: DiscoveryAppValue}
	if node != "" {
		labels[DiscoveryNodeLabel] = node
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: DiscoveryConfigMapName(node), Namespace: "rook-ceph", Labels: labels},
		Data:       map[string]string{DiscoveryDevicesKey: devicesJSON},
	}
}

func parseOne(t *testing.T, opts DiscoveryOptions, devices ...device) DiscoveredDisk {
	t.Helper()
	disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", devices...), opts)
	require.NoError(t, err)
	require.Len(t, disks, 1)
	return disks[0]
}

func TestParseDiscoveryDescribesRooksExampleDisk(t *testing.T) {
	got := parseOne(t, DiscoveryOptions{}, sdb())
	size := resource.MustParse("4000787030016")
	want := cephv1alpha1.DiskStatus{
		NodeName:    "worker-1",
		Path:        "/dev/sdb",
		StablePath:  "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4",
		Size:        &size,
		DisplaySize: "3.6 TiB",
		Type:        cephv1alpha1.DiskTypeHDD,
		Rotational:  true,
		Model:       "ST4000NM0035",
		Serial:      "ST4000NM0035_ZC1ABCDE",
		WWN:         "0x5000c500a1b2c3d4",
		Available:   true,
		State:       cephv1alpha1.DiskAvailable,
	}
	assert.Equal(t, DiskName("worker-1", "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4"), got.Name)
	assert.Equal(t, want.Size.Value(), got.Status.Size.Value())
	got.Status.Size = want.Size
	assert.Equal(t, want, got.Status)
}

func TestParseDiscoveryStates(t *testing.T) {
	cases := []struct {
		name       string
		device     device
		wantState  cephv1alpha1.DiskState
		wantReason string
	}{
		{
			name:      "an empty disk ceph-volume accepts is available",
			device:    sdb(),
			wantState: cephv1alpha1.DiskAvailable,
		},
		{
			name:      "an empty disk without a ceph-volume verdict is available",
			device:    sdb().with(device{"cephVolumeData": ""}),
			wantState: cephv1alpha1.DiskAvailable,
		},
		{
			name:       "a filesystem makes a disk in use",
			device:     sdb().with(device{"filesystem": "ext4", "empty": false}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "filesystem ext4",
		},
		{
			name:       "a disk with a partition table is published as partitioned",
			device:     sdb().with(device{"Partitions": []device{{"Name": "sdb1", "Size": 1, "Label": "", "Filesystem": "xfs"}}, "empty": false}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "partitioned",
		},
		{
			name: "ceph-volume's rejection wins over a stale empty flag",
			device: sdb().with(device{
				"cephVolumeData": `{"path":"/dev/sdb","available":false,"rejected_reasons":["LVM detected","Has BlueStore device label"]}`,
			}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "rejected by ceph-volume: LVM detected; Has BlueStore device label",
		},
		{
			name:       "a rejection without reasons still says who rejected it",
			device:     sdb().with(device{"cephVolumeData": `{"available":false}`}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "rejected by ceph-volume",
		},
		{
			name:       "an unreadable ceph-volume verdict is not trusted",
			device:     sdb().with(device{"cephVolumeData": `{"available":tr`}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "unreadable ceph-volume verdict",
		},
		{
			name:       "a mounted disk is in use",
			device:     sdb().with(device{"mountpoint": "/data"}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "mounted at /data",
		},
		{
			name:       "a read-only disk is not usable",
			device:     sdb().with(device{"readOnly": true}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "read-only",
		},
		{
			name:       "a device Rook calls not empty is not usable",
			device:     sdb().with(device{"empty": false, "cephVolumeData": ""}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "not empty",
		},
		{
			name:       "a device without capacity is not usable",
			device:     sdb().with(device{"size": 0}),
			wantState:  cephv1alpha1.DiskInUse,
			wantReason: "reports no capacity",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseOne(t, DiscoveryOptions{}, tc.device)
			assert.Equal(t, tc.wantState, got.Status.State)
			assert.Equal(t, tc.wantReason, got.Status.Reason)
			assert.Equal(t, tc.wantState == cephv1alpha1.DiskAvailable, got.Status.Available)
		})
	}
}

func TestParseDiscoveryTypes(t *testing.T) {
	cases := []struct {
		name   string
		device device
		want   cephv1alpha1.DiskType
	}{
		{name: "a rotational disk is an hdd", device: sdb(), want: cephv1alpha1.DiskTypeHDD},
		{name: "a non-rotational sata disk is an ssd", device: sdb().with(device{"rotational": false}), want: cephv1alpha1.DiskTypeSSD},
		{
			name: "an nvme namespace is nvme",
			device: sdb().with(device{"name": "nvme0n1", "rotational": false,
				"devLinks": "/dev/disk/by-id/nvme-eui.0025388b71b1f3a2 /dev/disk/by-id/nvme-Samsung_SSD_970_S1"}),
			want: cephv1alpha1.DiskTypeNVMe,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, parseOne(t, DiscoveryOptions{}, tc.device).Status.Type)
		})
	}
}

// Rook lists a disk with partitions only through its partitions.
func partitionsOfSdc() []device {
	base := device{
		"parent": "sdc", "type": "part", "rotational": false, "serial": "Samsung_SSD_860_S3Z", "model": "Samsung SSD 860",
		"wwn": "0x5002538e40a1b2c3", "empty": false, "Partitions": nil,
	}
	return []device{
		base.with(device{"name": "sdc2", "size": 2000,
			"devLinks": "/dev/disk/by-id/wwn-0x5002538e40a1b2c3-part2 /dev/disk/by-id/ata-Samsung_SSD_860_S3Z-part2 /dev/disk/by-partuuid/2222"}),
		base.with(device{"name": "sdc1", "size": 1000, "filesystem": "ext4",
			"devLinks": "/dev/disk/by-id/wwn-0x5002538e40a1b2c3-part1 /dev/disk/by-id/ata-Samsung_SSD_860_S3Z-part1 /dev/disk/by-uuid/1111"}),
	}
}

func TestParseDiscoveryPublishesAPartitionedDiskWithTheReason(t *testing.T) {
	got := parseOne(t, DiscoveryOptions{}, partitionsOfSdc()...)

	assert.Equal(t, "/dev/sdc", got.Status.Path)
	assert.Equal(t, "/dev/disk/by-id/wwn-0x5002538e40a1b2c3", got.Status.StablePath, "the disk's link is its partition's minus -partN")
	assert.Equal(t, cephv1alpha1.DiskInUse, got.Status.State)
	assert.False(t, got.Status.Available)
	assert.Equal(t, "partitioned: sdc1 (ext4), sdc2", got.Status.Reason)
	assert.Equal(t, int64(3000), got.Status.Size.Value(), "size is the sum of the partitions")
	assert.Equal(t, "0x5002538e40a1b2c3", got.Status.WWN)
	assert.Equal(t, cephv1alpha1.DiskTypeSSD, got.Status.Type)

	t.Run("once wiped, the same disk keeps its name", func(t *testing.T) {
		wiped := parseOne(t, DiscoveryOptions{}, device{
			"name": "sdc", "type": "disk", "size": 500107862016, "empty": true, "serial": "Samsung_SSD_860_S3Z",
			"devLinks": "/dev/disk/by-id/ata-Samsung_SSD_860_S3Z /dev/disk/by-id/wwn-0x5002538e40a1b2c3",
		})
		assert.Equal(t, got.Name, wiped.Name)
		assert.Equal(t, cephv1alpha1.DiskAvailable, wiped.Status.State)
	})
}

func TestParseDiscoveryPublishesADiskUnderLVM(t *testing.T) {
	lv := device{"name": "dm-0", "parent": "sdd", "type": "lvm", "size": 100, "devLinks": "/dev/disk/by-id/dm-name-vg-lv /dev/mapper/vg-lv"}
	got := parseOne(t, DiscoveryOptions{}, lv)
	assert.Equal(t, "/dev/sdd", got.Status.Path)
	assert.Equal(t, "in use by lvm dm-0", got.Status.Reason)
	assert.Empty(t, got.Status.StablePath, "device-mapper links never identify the physical disk")
}

func TestParseDiscoveryFoldsNestedLayersIntoTheirDisk(t *testing.T) {
	parts := partitionsOfSdc()
	crypt := device{"name": "dm-1", "parent": "sdc2", "type": "crypt", "size": 1900}
	disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", append(parts, crypt)...), DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, disks, 1, "the crypt device on sdc2 belongs to sdc, not to a disk of its own")
	assert.Equal(t, "/dev/sdc", disks[0].Status.Path)
}

func TestParseDiscoverySkipsLogicalDevicesWithoutAParent(t *testing.T) {
	disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1",
		device{"name": "dm-3", "type": "mpath", "size": 100}, sdb()), DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, disks, 1)
	assert.Equal(t, "/dev/sdb", disks[0].Status.Path)
}

// Rook's own fixture of an OSD's LVM volume (pkg/operator/ceph/cluster/
// watcher_test.go) names its parent ".": lsblk's answer when it has none to
// give. That is no kernel name, and no disk of its own.
func TestParseDiscoverySkipsParentsThatAreNoKernelName(t *testing.T) {
	for _, parent := range []string{".", "..", "/dev/.", "sd b"} {
		t.Run(parent, func(t *testing.T) {
			lv := device{"name": "dm-0", "parent": parent, "type": "lvm", "size": 31138512896, "filesystem": "ceph_bluestore",
				"devLinks": "/dev/disk/by-id/dm-name-ceph--bee31cdd-osd--data"}
			disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", lv, sdb()), DiscoveryOptions{})
			require.NoError(t, err)
			require.Len(t, disks, 1, "%+v", disks)
			assert.Equal(t, "/dev/sdb", disks[0].Status.Path)
		})
	}
}

func TestParseDiscoveryLoopDevices(t *testing.T) {
	loop := device{"name": "loop0", "type": "loop", "size": 10737418240, "empty": true, "rotational": false, "devLinks": ""}
	loopPart := device{"name": "loop1p1", "parent": "loop1", "type": "part", "size": 10}

	t.Run("loop devices are not published outside dev mode", func(t *testing.T) {
		disks, err := ParseDiscovery(discoveryConfigMap(t, "k3d-server-0", loop, loopPart), DiscoveryOptions{})
		require.NoError(t, err)
		assert.Empty(t, disks)
	})
	t.Run("in dev loop-device mode a loop device is a disk named from its kernel path", func(t *testing.T) {
		disks, err := ParseDiscovery(discoveryConfigMap(t, "k3d-server-0", loop, loopPart), DiscoveryOptions{AllowLoopDevices: true})
		require.NoError(t, err)
		require.Len(t, disks, 2)
		byPath := map[string]DiscoveredDisk{}
		for _, d := range disks {
			byPath[d.Status.Path] = d
		}
		loop0, loop1 := byPath["/dev/loop0"], byPath["/dev/loop1"]
		assert.Equal(t, DiskName("k3d-server-0", "/dev/loop0"), loop0.Name)
		assert.Equal(t, cephv1alpha1.DiskAvailable, loop0.Status.State)
		assert.Empty(t, loop0.Status.StablePath)
		assert.Equal(t, "partitioned: loop1p1", loop1.Status.Reason)
	})
}

func TestParseDiscoveryNamesSurviveAKernelRename(t *testing.T) {
	before := parseOne(t, DiscoveryOptions{}, sdb())
	after := parseOne(t, DiscoveryOptions{}, sdb().with(device{"name": "sdf", "real-path": "/dev/sdf", "kernel-name": "sdf"}))
	assert.Equal(t, before.Name, after.Name)
	assert.Equal(t, "/dev/sdf", after.Status.Path)
}

func TestParseDiscoveryKeepsDevicesThatShareAnIdentityApart(t *testing.T) {
	virt := device{"type": "disk", "size": 1 << 30, "empty": true, "serial": "QEMU_HARDDISK", "devLinks": ""}
	disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1",
		virt.with(device{"name": "vdb"}), virt.with(device{"name": "vdc"})), DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, disks, 2, "a shared serial must not hide one of the disks")
	names := []string{disks[0].Name, disks[1].Name}
	assert.ElementsMatch(t, []string{DiskName("worker-1", "/dev/vdb"), DiskName("worker-1", "/dev/vdc")}, names)
}

func TestParseDiscoveryIsDeterministic(t *testing.T) {
	devices := append(partitionsOfSdc(), sdb(),
		sdb().with(device{"name": "sde", "devLinks": "/dev/disk/by-id/wwn-0x5000c500ffffffff", "wwn": "0x5000c500ffffffff"}))
	first, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", devices...), DiscoveryOptions{})
	require.NoError(t, err)
	reversed := make([]device, len(devices))
	for i, d := range devices {
		reversed[len(devices)-1-i] = d
	}
	for range 5 {
		again, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", reversed...), DiscoveryOptions{})
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
	for i := 1; i < len(first); i++ {
		assert.Less(t, first[i-1].Name, first[i].Name, "sorted by name")
	}
}

func TestParseDiscoveryTakesTheNodeFromTheLabel(t *testing.T) {
	node := "a-node-name-long-enough-that-rook-hashes-the-configmap-name.example.com"
	cm := discoveryConfigMap(t, node, sdb())
	require.Equal(t, "local-device-0b77c1b0b37301badb0e793d2a74b89d", cm.Name, "Rook hashes the long node name")
	disks, err := ParseDiscovery(cm, DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, disks, 1)
	assert.Equal(t, node, disks[0].Status.NodeName)
}

func TestParseDiscoveryErrorsNameTheConfigMap(t *testing.T) {
	cases := []struct {
		name string
		cm   *corev1.ConfigMap
		want string
	}{
		{name: "malformed JSON", cm: rawDiscoveryConfigMap("worker-1", `[{"name":"sdb",`), want: `discovery ConfigMap rook-ceph/local-device-worker-1: parse "devices"`},
		{name: "a size of the wrong type", cm: rawDiscoveryConfigMap("worker-1", `[{"name":"sdb","size":"big"}]`), want: "discovery ConfigMap rook-ceph/local-device-worker-1"},
		{name: "an entry cut short", cm: rawDiscoveryConfigMap("worker-1", `[{"name":"sdb"},{"name":`), want: `parse "devices": entry 1: unexpected EOF`},
		{name: "an object, not a list", cm: rawDiscoveryConfigMap("worker-1", `{"name":"sdb"}`), want: `parse "devices": want a JSON array of devices, found {`},
		{name: "data after the list", cm: rawDiscoveryConfigMap("worker-1", `[{"name":"sdb"}] [{"name":"sdc"}]`), want: `parse "devices": data after the devices array`},
		{name: "no node label", cm: rawDiscoveryConfigMap("", `[]`), want: "discovery ConfigMap rook-ceph/local-device-: no rook.io/node label"},
		{name: "no devices key", cm: func() *corev1.ConfigMap {
			cm := rawDiscoveryConfigMap("worker-1", "")
			cm.Data = nil
			return cm
		}(), want: `discovery ConfigMap rook-ceph/local-device-worker-1: no "devices" key`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDiscovery(tc.cm, DiscoveryOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("a null device list is no devices", func(t *testing.T) {
		disks, err := ParseDiscovery(rawDiscoveryConfigMap("worker-1", "null"), DiscoveryOptions{})
		require.NoError(t, err)
		assert.Empty(t, disks)
	})
}

func TestDiscoveryConfigMapNameFollowsRook(t *testing.T) {
	cases := []struct{ node, want string }{
		{"worker-1", "local-device-worker-1"},
		{strings.Repeat("n", 50), "local-device-" + strings.Repeat("n", 50)},
		{strings.Repeat("n", 51), "local-device-9feeed8a0f664fb778571af5e635735e"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, DiscoveryConfigMapName(tc.node), "node %q", tc.node)
		assert.Equal(t, simulate.ConfigMapName(tc.node), DiscoveryConfigMapName(tc.node), "the simulation names it alike")
	}
}

func TestParseDiscoveryRejectsWhatCannotBeANodesReport(t *testing.T) {
	t.Run("a label naming another node than the ConfigMap's name", func(t *testing.T) {
		cm := discoveryConfigMap(t, "worker-2", sdb())
		cm.Name = "local-device-worker-1"
		_, err := ParseDiscovery(cm, DiscoveryOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `discovery ConfigMap rook-ceph/local-device-worker-1: its name does not match its rook.io/node label "worker-2"`)
	})
	t.Run("more device entries than a node can hold", func(t *testing.T) {
		entries := make([]string, MaxDiscoveryEntries+1)
		for i := range entries {
			entries[i] = fmt.Sprintf(`{"name":"sd%d","type":"disk","size":1}`, i)
		}
		_, err := ParseDiscovery(rawDiscoveryConfigMap("worker-1", "["+strings.Join(entries, ",")+"]"), DiscoveryOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("discovery ConfigMap rook-ceph/local-device-worker-1: parse \"devices\": more than the %d device entries", MaxDiscoveryEntries))
	})
	t.Run("a ConfigMap's worth of empty entries is refused at the cap, not decoded whole", func(t *testing.T) {
		// 1 MiB of "{}," is some 350,000 entries: decoding them all before
		// counting is what let such a ConfigMap exhaust the plugin's memory.
		raw := "[" + strings.Repeat("{},", 1<<20/3) + "{}]"
		cm := rawDiscoveryConfigMap("worker-1", raw)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParseDiscovery(cm, DiscoveryOptions{})
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, errTooManyDevices)
		// Decoding the whole list allocates its 350,000 entries (~100 MB);
		// stopping at the cap allocates the 4,096 before it.
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("allocated %d KiB", allocated>>10)
		assert.Less(t, allocated, uint64(8<<20), "bytes allocated decoding a hostile list")
	})
	t.Run("as many as a node can hold", func(t *testing.T) {
		entries := make([]string, MaxDiscoveryEntries)
		for i := range entries {
			entries[i] = fmt.Sprintf(`{"name":"sd%d","type":"disk","size":1,"empty":true}`, i)
		}
		disks, err := ParseDiscovery(rawDiscoveryConfigMap("worker-1", "["+strings.Join(entries, ",")+"]"), DiscoveryOptions{})
		require.NoError(t, err)
		assert.Len(t, disks, MaxDiscoveryEntries)
	})
}

func TestStablePath(t *testing.T) {
	cases := []struct {
		name     string
		devLinks string
		want     string
	}{
		{name: "wwn wins over ata", devLinks: "/dev/disk/by-id/ata-X_1 /dev/disk/by-id/wwn-0x1", want: "/dev/disk/by-id/wwn-0x1"},
		{name: "nvme-eui wins over the nvme model link", devLinks: "/dev/disk/by-id/nvme-Samsung_1 /dev/disk/by-id/nvme-eui.0025", want: "/dev/disk/by-id/nvme-eui.0025"},
		{name: "scsi wins over ata", devLinks: "/dev/disk/by-id/ata-X /dev/disk/by-id/scsi-SATA_X", want: "/dev/disk/by-id/scsi-SATA_X"},
		{name: "ata wins over nvme", devLinks: "/dev/disk/by-id/nvme-Y /dev/disk/by-id/ata-X", want: "/dev/disk/by-id/ata-X"},
		{name: "nvme wins over virtio", devLinks: "/dev/disk/by-id/virtio-abc /dev/disk/by-id/nvme-Y", want: "/dev/disk/by-id/nvme-Y"},
		{name: "virtio wins over usb", devLinks: "/dev/disk/by-id/usb-Stick /dev/disk/by-id/virtio-abc", want: "/dev/disk/by-id/virtio-abc"},
		{name: "usb wins over an unknown bus", devLinks: "/dev/disk/by-id/mmc-Card /dev/disk/by-id/usb-Stick", want: "/dev/disk/by-id/usb-Stick"},
		{name: "an unknown bus is better than no stable path", devLinks: "/dev/disk/by-id/mmc-Card", want: "/dev/disk/by-id/mmc-Card"},
		{name: "ties break lexicographically", devLinks: "/dev/disk/by-id/scsi-SATA_b /dev/disk/by-id/scsi-0ATA_a", want: "/dev/disk/by-id/scsi-0ATA_a"},
		{name: "lvm-pv-uuid is a logical layer", devLinks: "/dev/disk/by-id/lvm-pv-uuid-abc /dev/disk/by-id/usb-Stick", want: "/dev/disk/by-id/usb-Stick"},
		{name: "device-mapper links are logical layers", devLinks: "/dev/disk/by-id/dm-name-vg-lv /dev/disk/by-id/dm-uuid-LVM-x", want: ""},
		{name: "md-uuid is a logical layer", devLinks: "/dev/disk/by-id/md-uuid-1234", want: ""},
		{name: "by-path and by-uuid are not identities", devLinks: "/dev/disk/by-path/pci-0000:00:17.0-ata-2 /dev/disk/by-uuid/1111", want: ""},
		{name: "no links, no stable path", devLinks: "", want: ""},
		{name: "extra spaces are harmless", devLinks: "  /dev/disk/by-id/ata-X   /dev/disk/by-id/wwn-0x1  ", want: "/dev/disk/by-id/wwn-0x1"},
		{name: "a link that climbs out of by-id is no identity", devLinks: "/dev/disk/by-id/.. /dev/disk/by-id/ata-X", want: "/dev/disk/by-id/ata-X"},
		{name: "a link with a bidi override is no identity", devLinks: "/dev/disk/by-id/wwn-0x1\u202e /dev/disk/by-id/ata-X", want: "/dev/disk/by-id/ata-X"},
		{name: "a link with a zero-width space is no identity", devLinks: "/dev/disk/by-id/wwn-0x\u200b1", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, StablePath(tc.devLinks))
		})
	}
}

func TestSafeDevicePath(t *testing.T) {
	for _, ok := range []string{"/dev/sdb", "/dev/nvme0n1", "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", "/dev/cciss/c0d0", "/dev/disk/by-id/nvme-eui.0025385b71500001",
		"/dev/disk/by-path/pci-0000:00:1f.2-ata-1", `/dev/disk/by-label/My\x20Disk`, "/dev/mapper/vg0-lv_data", "/dev/disk/by-id/ata-ST4000NM+1#2=3@4"} {
		assert.NoError(t, SafeDevicePath(ok), ok)
	}
	for _, bad := range []string{
		"", "/dev/", "sdb", "/devsdb", "/etc/passwd", "/dev/../etc/shadow", "/dev/disk/by-id/..", "/dev/./sdb", "/dev//sdb", "/dev/sdb/",
		"/dev/sd\u202eb", "/dev/sd\u200bb",
		// a shell's metacharacters: the path reaches wipe instructions pasted as root
		"/dev/sdb;reboot", "/dev/sd$(id)b", "/dev/sd`id`b", "/dev/sd'b", `/dev/sd"b`, "/dev/sd|b", "/dev/sd&b", "/dev/sd*", "/dev/sd?", "/dev/sdb>x", "/dev/sd{a,b}", "/dev/sd~", "/dev/sd!b",
		// a backslash other than udev's \xNN escape
		`/dev/sd\b`, `/dev/sd\x2`, `/dev/sd\xg0`, "/dev/sd\u2028b", "/dev/sd\x00b", "/dev/sd\x1b[31mb", "/dev/sd b", "/dev/sd\xffb",
	} {
		assert.Error(t, SafeDevicePath(bad), "%q", bad)
	}
}

func TestPrintableDropsWhatMisleadsAReader(t *testing.T) {
	assert.Equal(t, "Samsung SSD 870 evilgnus", message.Printable("Samsung SSD 870 \u202eevil\u202c\u200bgnus\u2028\x1b"))
	assert.Equal(t, "ST4000NM", message.Printable("ST4000NM"))
}

// A kernel name with a bidi override would put a spoofed path into the
// console and, were it available, into the CephCluster: it is refused.
func TestParseDiscoveryRefusesADeviceWhosePathIsNotClean(t *testing.T) {
	got := parseOne(t, DiscoveryOptions{}, sdb().with(device{"name": "sd\u202eb", "devLinks": "", "real-path": "", "kernel-name": ""}))
	assert.False(t, got.Status.Available)
	assert.Equal(t, cephv1alpha1.DiskInUse, got.Status.State)
	assert.Contains(t, got.Status.Reason, `refused: device path "/dev/sd\u202eb"`, "the reason quotes it, escaped")
	assert.Empty(t, got.Status.Path, "no printable form of it (/dev/sdb) is published")
}

// A refused name that prints as a real device's, or a report reusing a
// real device's by-id link, must not take that device's identity: its
// Disk is another one, with no path or link a lookup could match.
func TestARefusedDeviceTakesNoRealDevicesIdentity(t *testing.T) {
	spoof := sdb().with(device{"name": "sd\u202eb", "devLinks": "", "serial": "", "wwn": ""})
	disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", sdb(), spoof), DiscoveryOptions{})
	require.NoError(t, err)
	require.Len(t, disks, 2)
	byPath := map[string]DiscoveredDisk{}
	for _, d := range disks {
		byPath[d.Status.Path] = d
	}
	require.Contains(t, byPath, "/dev/sdb")
	require.Contains(t, byPath, "")
	assert.True(t, byPath["/dev/sdb"].Status.Available)
	assert.NotEqual(t, byPath["/dev/sdb"].Name, byPath[""].Name)
	assert.Empty(t, byPath[""].Status.StablePath)

	t.Run("two devices reporting one by-id link: neither is used, neither keeps it", func(t *testing.T) {
		disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", sdb(), sdb().with(device{"name": "sdz"})), DiscoveryOptions{})
		require.NoError(t, err)
		require.Len(t, disks, 2)
		for _, d := range disks {
			assert.False(t, d.Status.Available, d.Status.Path)
			assert.Equal(t, cephv1alpha1.DiskInUse, d.Status.State)
			assert.Contains(t, d.Status.Reason, `refused: "/dev/sdb", "/dev/sdz" all report the by-id link /dev/disk/by-id/wwn-0x5000c500a1b2c3d4`)
			assert.Empty(t, d.Status.StablePath)
		}
		assert.NotEqual(t, disks[0].Name, disks[1].Name)
	})
	t.Run("N1: thousands of devices on one link share one reason naming a few", func(t *testing.T) {
		var devices []device
		for i := range MaxDiscoveryEntries {
			devices = append(devices, sdb().with(device{"name": fmt.Sprintf("sd%05d", i), "serial": "", "wwn": ""}))
		}
		disks, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", devices...), DiscoveryOptions{})
		require.NoError(t, err)
		require.Len(t, disks, MaxDiscoveryEntries)
		total := 0
		for _, d := range disks {
			assert.False(t, d.Status.Available)
			total += len(d.Status.Reason)
		}
		want := `refused: "/dev/sd00000", "/dev/sd00001", "/dev/sd00002", "/dev/sd00003", "/dev/sd00004", "/dev/sd00005", "/dev/sd00006", "/dev/sd00007" and 4088 more all report the by-id link`
		assert.Contains(t, disks[0].Status.Reason, want)
		assert.Less(t, total, MaxDiscoveryEntries*300, "linear in the devices: each reason names eight, not all 4096")
	})
	t.Run("N1: what a node reports of a device is cut to the CRD's bounds", func(t *testing.T) {
		long := strings.Repeat("é", MaxReportedLen) // two bytes each
		got := parseOne(t, DiscoveryOptions{}, sdb().with(device{"model": long, "serial": long, "wwn": long, "filesystem": long, "empty": false}))
		for name, v := range map[string]string{"model": got.Status.Model, "serial": got.Status.Serial, "wwn": got.Status.WWN, "filesystem": got.Status.Filesystem} {
			assert.LessOrEqual(t, len(v), MaxReportedLen, name)
			assert.True(t, utf8.ValidString(v), "%s cut on a character boundary", name)
		}
		assert.LessOrEqual(t, len(got.Status.Reason), 4096)
	})
	t.Run("N8: a partition list is read for whether it has one, not decoded", func(t *testing.T) {
		many := make([]device, 200_000)
		for i := range many {
			many[i] = device{}
		}
		partitioned := parseOne(t, DiscoveryOptions{}, sdb().with(device{"Partitions": many, "empty": false}))
		assert.Contains(t, partitioned.Status.Reason, "partitioned")
		none := parseOne(t, DiscoveryOptions{}, sdb().with(device{"Partitions": []device{}}))
		assert.True(t, none.Status.Available, none.Status.Reason)
		_, err := ParseDiscovery(discoveryConfigMap(t, "worker-1", sdb().with(device{"Partitions": "sdb1"})), DiscoveryOptions{})
		assert.ErrorContains(t, err, "Partitions is not a JSON array")
	})
	t.Run("one kernel name listed twice: not used", func(t *testing.T) {
		got := parseOne(t, DiscoveryOptions{}, sdb(), sdb().with(device{"size": uint64(1)}))
		assert.False(t, got.Status.Available)
		assert.Contains(t, got.Status.Reason, `refused: discovery listed "/dev/sdb" more than once`)
	})
	t.Run("a path longer than a file name may be", func(t *testing.T) {
		long := "/dev/disk/by-id/" + strings.Repeat("a", MaxDevicePathLen)
		assert.ErrorContains(t, SafeDevicePath(long), "bytes long, more than 255")
		assert.NoError(t, SafeDevicePath(long[:MaxDevicePathLen]))
	})
}

func TestDeviceKey(t *testing.T) {
	cases := []struct {
		name                            string
		stable, wwn, serial, kernelPath string
		want                            string
	}{
		{name: "the stable path comes first", stable: "/dev/disk/by-id/wwn-0x1", wwn: "0x1", serial: "S", kernelPath: "/dev/sdb", want: "/dev/disk/by-id/wwn-0x1"},
		{name: "without one, the WWN", wwn: "0x1", serial: "S", kernelPath: "/dev/sdb", want: "wwn:0x1"},
		{name: "without a WWN, the serial", serial: "S", kernelPath: "/dev/sdb", want: "serial:S"},
		{name: "without anything else, the kernel path", kernelPath: "/dev/loop0", want: "/dev/loop0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, DeviceKey(tc.stable, tc.wwn, tc.serial, tc.kernelPath))
		})
	}
}

func TestDiskName(t *testing.T) {
	key := "/dev/disk/by-id/wwn-0x1"
	t.Run("worker.1 and worker-1 get different names", func(t *testing.T) {
		assert.NotEqual(t, DiskName("worker.1", key), DiskName("worker-1", key))
	})
	t.Run("the same node and key always give the same name", func(t *testing.T) {
		assert.Equal(t, DiskName("worker-1", key), DiskName("worker-1", key))
	})
	t.Run("different keys on one node give different names", func(t *testing.T) {
		assert.NotEqual(t, DiskName("worker-1", key), DiskName("worker-1", "/dev/disk/by-id/wwn-0x2"))
	})
	t.Run("the name starts with the readable node name", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(DiskName("worker-1", key), "worker-1-"))
	})
	for _, node := range []string{
		"worker-1", "worker.1", "Worker_1", "ip-10-0-0-1.eu-west-1.compute.internal",
		strings.Repeat("n", 253), "---", "", "節點",
	} {
		t.Run("a valid label-length DNS-1123 name for node "+truncate(node, 40), func(t *testing.T) {
			name := DiskName(node, key)
			assert.Empty(t, validation.IsDNS1123Label(name), name)
		})
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func TestMarkMissing(t *testing.T) {
	seen := metav1.NewTime(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	now := time.Date(2026, 5, 2, 9, 30, 0, 0, time.UTC)
	prev := parseOne(t, DiscoveryOptions{}, sdb()).Status
	prev.ClaimedBy = "pool-a"

	t.Run("keeps what discovery knew and says since when it is gone", func(t *testing.T) {
		// seen is when this run of reports began, not when it ended: the
		// list that named the device was current until now.
		withSeen := prev
		withSeen.LastSeenTime = &seen
		got := MarkMissing(withSeen, now)
		assert.Equal(t, cephv1alpha1.DiskMissing, got.State)
		assert.False(t, got.Available)
		assert.Equal(t, "not reported by discovery since 2026-05-02T09:30:00Z", got.Reason)
		assert.Equal(t, "pool-a", got.ClaimedBy)
		assert.Equal(t, prev.StablePath, got.StablePath)
		assert.True(t, got.LastSeenTime.Time.Equal(now))
		assert.Equal(t, &seen, withSeen.LastSeenTime, "the input is not modified")
	})
	t.Run("without a last-seen time it starts counting now", func(t *testing.T) {
		got := MarkMissing(prev, now)
		require.NotNil(t, got.LastSeenTime)
		assert.True(t, got.LastSeenTime.Time.Equal(now))
		assert.Nil(t, prev.LastSeenTime, "the input is not modified")
	})
}

// FuzzParseDiscovery feeds arbitrary device JSON and node names to
// ParseDiscovery. It must never panic, and whatever it accepts must be
// publishable: valid, unique, sorted names on the labelled node, and a
// reason for every disk that is not available. Seeds live in
// testdata/fuzz/FuzzParseDiscovery.
func FuzzParseDiscovery(f *testing.F) {
	example, err := json.Marshal([]device{sdb()})
	require.NoError(f, err)
	partitioned, err := json.Marshal(partitionsOfSdc())
	require.NoError(f, err)
	f.Add(string(example), "worker-1", false)
	f.Add(string(partitioned), "worker.1", true)
	f.Add(`[{"name":"loop0","type":"loop","size":1,"empty":true}]`, "k3d-server-0", true)
	f.Add(`[{"name":"a","parent":"b","type":"part"},{"name":"b","parent":"a","type":"part"}]`, "n", false)

	f.Fuzz(func(t *testing.T, devicesJSON, node string, allowLoop bool) {
		disks, err := ParseDiscovery(rawDiscoveryConfigMap(node, devicesJSON), DiscoveryOptions{AllowLoopDevices: allowLoop})
		if err != nil {
			require.Contains(t, err.Error(), "discovery ConfigMap rook-ceph/")
			return
		}
		for i, d := range disks {
			require.Empty(t, validation.IsDNS1123Label(d.Name), "name %q", d.Name)
			if i > 0 {
				require.Less(t, disks[i-1].Name, d.Name, "names sorted and unique")
			}
			require.Equal(t, node, d.Status.NodeName)
			if strings.HasPrefix(d.Status.Reason, "refused: device path") {
				require.Empty(t, d.Status.Path, "a refused path is not published")
			} else {
				require.NoError(t, SafeDevicePath(d.Status.Path))
			}
			require.Equal(t, d.Status.State == cephv1alpha1.DiskAvailable, d.Status.Available)
			require.Equal(t, d.Status.Available, d.Status.Reason == "", "reason %q", d.Status.Reason)
			require.NotNil(t, d.Status.Size)
			require.GreaterOrEqual(t, d.Status.Size.Sign(), 0)
			for _, field := range []string{d.Status.Model, d.Status.Serial, d.Status.WWN, d.Status.Filesystem, d.Status.Reason, d.Status.Path} {
				require.False(t, strings.ContainsFunc(field, message.Unsafe), "control or format character in %q", field)
			}
			if d.Status.Available {
				require.NoError(t, SafeDevicePath(d.Status.StorageDevice()), "an available disk's device name reaches the CephCluster")
			}
			if d.Status.StablePath != "" {
				require.NoError(t, SafeDevicePath(d.Status.StablePath))
			}
			if !allowLoop {
				require.False(t, strings.HasPrefix(d.Status.Path, "/dev/loop"), "loop device outside dev mode")
			}
		}
	})
}
