package simulate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// SimulatedLabel marks every object the simulation writes.
const SimulatedLabel = "simulation.ceph.fundament.io/simulated"

// Device is one entry of the discovery daemon's devices JSON, with the keys
// and types Rook v1.18 writes (pkg/util/sys LocalDisk).
type Device struct {
	Name               string      `json:"name"`
	Parent             string      `json:"parent"`
	HasChildren        bool        `json:"hasChildren"`
	DevLinks           string      `json:"devLinks"`
	Size               uint64      `json:"size"`
	UUID               string      `json:"uuid"`
	Serial             string      `json:"serial"`
	Type               string      `json:"type"`
	Rotational         bool        `json:"rotational"`
	ReadOnly           bool        `json:"readOnly"`
	Partitions         []Partition `json:"Partitions"`
	Filesystem         string      `json:"filesystem"`
	Mountpoint         string      `json:"mountpoint"`
	Vendor             string      `json:"vendor"`
	Model              string      `json:"model"`
	WWN                string      `json:"wwn"`
	WWNVendorExtension string      `json:"wwnVendorExtension"`
	Empty              bool        `json:"empty"`
	CephVolumeData     string      `json:"cephVolumeData,omitempty"`
	RealPath           string      `json:"real-path,omitempty"`
	KernelName         string      `json:"kernel-name,omitempty"`
}

// Partition is one item of a device's Partitions.
type Partition struct {
	Name       string `json:"Name"`
	Size       uint64 `json:"Size"`
	Label      string `json:"Label"`
	Filesystem string `json:"Filesystem"`
}

// Kind is the sort of simulated device.
type Kind int

const (
	HDD Kind = iota
	SSD
	NVMe
	// InUse is an HDD carrying an ext4 filesystem: discovery lists it, but
	// it is not available to Ceph.
	InUse
)

// NewDevice is a realistic device of kind k, the index-th of its node.
// Identities (WWN, EUI, serial) are derived from node and index, so the same
// inputs always give the same device (and the same Disk name).
func NewDevice(node string, index int, k Kind) Device {
	id := identity(node, index)
	kernel := fmt.Sprintf("sd%c", 'b'+rune(index%24))
	if index >= 24 {
		kernel = fmt.Sprintf("sd%c%c", 'a'+rune(index/24-1), 'a'+rune(index%24))
	}
	d := Device{Type: "disk", Empty: true, Vendor: "ATA"}
	switch k {
	case HDD, InUse:
		wwn := "0x5000c500" + id[:8]
		d.Name, d.Rotational, d.Size = kernel, true, 4000787030016
		d.Model, d.Serial, d.WWN, d.WWNVendorExtension = "ST4000NM0035", "ST4000NM0035_"+id[:8], wwn, wwn
		d.DevLinks = fmt.Sprintf("/dev/disk/by-id/wwn-%s /dev/disk/by-id/ata-%s /dev/disk/by-path/pci-0000:00:17.0-ata-%d", wwn, d.Serial, index+1)
	case SSD:
		wwn := "0x5002538e" + id[:8]
		d.Name, d.Size = kernel, 1000204886016
		d.Model, d.Serial, d.WWN, d.WWNVendorExtension = "Samsung SSD 870 EVO 1TB", "Samsung_SSD_870_EVO_"+id[:8], wwn, wwn
		d.DevLinks = fmt.Sprintf("/dev/disk/by-id/wwn-%s /dev/disk/by-id/ata-%s /dev/disk/by-path/pci-0000:00:17.0-ata-%d", wwn, d.Serial, index+1)
	case NVMe:
		eui := "0025385b" + id[:8]
		d.Name, d.Size, d.Vendor = fmt.Sprintf("nvme%dn1", index), 2000398934016, ""
		d.Model, d.Serial = "Samsung SSD 980 PRO 2TB", "S69ENF0"+id[:8]
		d.DevLinks = fmt.Sprintf("/dev/disk/by-id/nvme-eui.%s /dev/disk/by-id/nvme-Samsung_SSD_980_PRO_2TB_%s /dev/disk/by-path/pci-0000:01:00.0-nvme-%d", eui, d.Serial, index+1)
	}
	verdict := `{"path":"/dev/` + d.Name + `","available":true,"rejected_reasons":[]}`
	if k == InUse {
		d.Filesystem, d.Empty = "ext4", false
		verdict = `{"path":"/dev/` + d.Name + `","available":false,"rejected_reasons":["Has a FileSystem"]}`
	}
	d.CephVolumeData, d.RealPath, d.KernelName = verdict, "/dev/"+d.Name, d.Name
	return d
}

// MixedDevices are count devices for a node: mostly HDDs, some SSDs and
// NVMe drives, and every seventh device (from the fourth) in use.
func MixedDevices(node string, count int) []Device {
	out := make([]Device, 0, count)
	for i := range count {
		k := HDD
		switch {
		case i%7 == 3:
			k = InUse
		case i%5 == 1:
			k = SSD
		case i%5 == 2:
			k = NVMe
		}
		out = append(out, NewDevice(node, i, k))
	}
	return out
}

// DevicesJSON is the ConfigMap value Rook writes for devices.
func DevicesJSON(devices []Device) (string, error) {
	if devices == nil {
		devices = []Device{}
	}
	data, err := json.Marshal(devices)
	return string(data), err
}

func identity(node string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", node, index))
	return hex.EncodeToString(sum[:])
}
