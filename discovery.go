package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// Rook's discovery daemon writes one ConfigMap per node in the operator
// namespace, labelled app=rook-discover and rook.io/node=<node>, with the
// probed devices as a JSON array under the devices key.
const (
	DiscoveryAppLabel   = "app"
	DiscoveryAppValue   = "rook-discover"
	DiscoveryNodeLabel  = "rook.io/node"
	DiscoveryDevicesKey = "devices"
)

// discoveryConfigMapPrefix is how Rook (v1.18, pkg/daemon/discover) names a
// node's discovery ConfigMap: the prefix and the node name, or, when that
// would exceed a DNS label's 63 characters, the prefix and a hash of the
// node name (k8sutil.TruncateNodeName).
const discoveryConfigMapPrefix = "local-device-"

// MaxDiscoveryEntries bounds the device entries one node's ConfigMap may
// list. Real nodes hold tens, a dense JBOD a few hundred; a ConfigMap with
// thousands is broken or hostile, and publishing it would keep the
// inventory busy with one node for minutes while every other node waits.
const MaxDiscoveryEntries = 4096

// DiscoveryConfigMapName is the name Rook gives node's discovery ConfigMap.
func DiscoveryConfigMapName(node string) string {
	if len(discoveryConfigMapPrefix)+len(node) > validation.DNS1123LabelMaxLength {
		sum := sha256.Sum256([]byte(node))
		return discoveryConfigMapPrefix + hex.EncodeToString(sum[:16])
	}
	return discoveryConfigMapPrefix + node
}

// byIDDir holds the udev links that name a device by what it is rather than
// by where the kernel enumerated it.
const byIDDir = "/dev/disk/by-id/"

// stableLinkPreference orders /dev/disk/by-id/ links from most to least
// trustworthy: a WWN or an NVMe EUI is burnt into the device, a bus-specific
// serial comes next. Links matching none of these rank after all of them.
var stableLinkPreference = []string{"wwn-", "nvme-eui.", "scsi-", "ata-", "nvme-", "virtio-", "usb-"}

// logicalLinkPrefixes name logical layers (LVM, device mapper, MD RAID)
// rather than the physical device: they can be rebuilt on top of a different
// disk, so they never identify one.
var logicalLinkPrefixes = []string{"lvm-pv-uuid-", "dm-", "md-"}

// partitionSuffix is how udev names a partition's by-id link after its disk's.
var partitionSuffix = regexp.MustCompile(`-part[0-9]+$`)

// DiscoveryOptions are the install settings that change what is published.
type DiscoveryOptions struct {
	// AllowLoopDevices publishes loop devices (the dev loop-device mode). On
	// a real node a loop device is someone's image file, never a free disk.
	AllowLoopDevices bool
}

// DiscoveredDisk is one Disk as discovery describes it: its name and the
// status fields discovery owns. ClaimedBy and LastSeenTime are left for the
// caller (claims come from the pools, the time from the clock).
type DiscoveredDisk struct {
	Name   string
	Status cephv1alpha1.DiskStatus
	// Implied is true when Rook did not list the device itself, only what
	// is layered on it (partitions, LVM, crypt). Its identity is then only
	// what those entries carried: partitions carry their disk's, LVM and
	// crypt entries carry none (KeepDiskIdentities).
	Implied bool
	// kernel is the kernel path as discovery reported it, unique on the
	// node: what names the Disk when nothing else tells it apart (a
	// refused device's Status.Path is empty).
	kernel string
}

// discoveredDevice is one entry of Rook's devices JSON (pkg/util/sys
// LocalDisk in Rook v1.18). Only the fields the plugin reads are listed.
type discoveredDevice struct {
	Name           string   `json:"name"`
	Parent         string   `json:"parent"`
	DevLinks       string   `json:"devLinks"`
	Size           uint64   `json:"size"`
	Serial         string   `json:"serial"`
	Type           string   `json:"type"`
	Rotational     bool     `json:"rotational"`
	ReadOnly       bool     `json:"readOnly"`
	Partitions     nonEmpty `json:"Partitions"`
	Filesystem     string   `json:"filesystem"`
	Mountpoint     string   `json:"mountpoint"`
	Model          string   `json:"model"`
	WWN            string   `json:"wwn"`
	Empty          bool     `json:"empty"`
	CephVolumeData string   `json:"cephVolumeData"`
}

// nonEmpty reads a JSON array only to say whether it has an element
// (Rook's Partitions: only that is used), without decoding its elements:
// one entry of a megabyte of [{},{},...] would otherwise be some 350,000
// of them, live at once.
type nonEmpty bool

func (n *nonEmpty) UnmarshalJSON(raw []byte) error {
	trimmed := bytes.TrimSpace(raw)
	switch {
	case bytes.Equal(trimmed, []byte("null")):
		*n = false
	case len(trimmed) >= 2 && trimmed[0] == '[' && trimmed[len(trimmed)-1] == ']':
		*n = nonEmpty(len(bytes.TrimSpace(trimmed[1:len(trimmed)-1])) > 0)
	default:
		return fmt.Errorf("Partitions is not a JSON array")
	}
	return nil
}

// cephVolumeVerdict is ceph-volume inventory's view of a device. Rook passes
// it on as a JSON string inside the device entry, not as an object.
type cephVolumeVerdict struct {
	Available       bool     `json:"available"`
	RejectedReasons []string `json:"rejected_reasons"`
}

// ParseDiscovery turns one discovery ConfigMap into the Disks of its node,
// sorted by name. The node comes from the rook.io/node label: Rook hashes the
// ConfigMap's name for long node names.
//
// Every physical device is published, usable or not, so nothing vanishes
// without an explanation: Rook lists a partitioned disk only through its
// partitions (or an LVM/crypt child), so those are folded back into their
// disk, published as InUse with the reason. Loop devices are published only
// with opts.AllowLoopDevices. Malformed JSON is an error naming the
// ConfigMap.
func ParseDiscovery(cm *corev1.ConfigMap, opts DiscoveryOptions) ([]DiscoveredDisk, error) {
	if cm == nil {
		return nil, fmt.Errorf("discovery ConfigMap is nil")
	}
	ref := cm.Namespace + "/" + cm.Name
	node := cm.Labels[DiscoveryNodeLabel]
	if node == "" {
		return nil, fmt.Errorf("discovery ConfigMap %s: no %s label naming the node", ref, DiscoveryNodeLabel)
	}
	// A ConfigMap whose label names another node than its name would make
	// one node's report overwrite another's Disks.
	if want := DiscoveryConfigMapName(node); cm.Name != want {
		return nil, fmt.Errorf("discovery ConfigMap %s: its name does not match its %s label %q (Rook names that node's ConfigMap %s)", ref, DiscoveryNodeLabel, node, want)
	}
	raw, ok := cm.Data[DiscoveryDevicesKey]
	if !ok {
		return nil, fmt.Errorf("discovery ConfigMap %s: no %q key", ref, DiscoveryDevicesKey)
	}
	devices, err := decodeDevices(raw)
	if err != nil {
		return nil, fmt.Errorf("discovery ConfigMap %s: parse %q: %w", ref, DiscoveryDevicesKey, err)
	}
	return describeNode(node, devices, opts), nil
}

// jsonToken writes a token of encoding/json's Decoder as it reads in JSON.
func jsonToken(t json.Token) string {
	if d, ok := t.(json.Delim); ok {
		return string(d)
	}
	raw, _ := json.Marshal(t)
	return string(raw)
}

// errTooManyDevices is decodeDevices' refusal of a list past the cap.
var errTooManyDevices = fmt.Errorf("more than the %d device entries one node can plausibly hold", MaxDiscoveryEntries)

// decodeDevices reads Rook's devices JSON array one entry at a time and
// stops at the first entry past MaxDiscoveryEntries. Decoding the array
// whole before counting would let a 1 MiB ConfigMap of "[{},{},...]"
// (some 350,000 entries, over 100 MB decoded) exhaust the plugin's memory
// before the cap is ever checked. JSON null is an empty list, as
// json.Unmarshal makes it; anything after the array is refused.
func decodeDevices(raw string) ([]discoveredDevice, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	open, err := dec.Token()
	if err == io.EOF {
		return nil, errors.New("empty, not a JSON array of devices")
	}
	if err != nil {
		return nil, err
	}
	var devices []discoveredDevice
	switch open {
	case json.Delim('['):
		for dec.More() {
			if len(devices) == MaxDiscoveryEntries {
				return nil, errTooManyDevices
			}
			var d discoveredDevice
			if err := dec.Decode(&d); err != nil {
				return nil, fmt.Errorf("entry %d: %w", len(devices), err)
			}
			devices = append(devices, d)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
	case nil:
	default:
		return nil, fmt.Errorf("want a JSON array of devices, found %s", jsonToken(open))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the devices array")
	}
	return devices, nil
}

// describeNode groups a node's device entries by physical device and
// describes each one.
func describeNode(node string, devices []discoveredDevice, opts DiscoveryOptions) []DiscoveredDisk {
	tree := newDeviceTree(devices)
	var disks []DiscoveredDisk
	for _, root := range tree.roots() {
		if tree.isLoop(root) && !opts.AllowLoopDevices {
			continue
		}
		_, listed := tree.byName[root]
		disks = append(disks, DiscoveredDisk{Status: tree.describe(node, root), Implied: !listed, kernel: "/dev/" + root})
	}
	refuseSharedLinks(disks)
	nameDisks(node, disks)
	sort.Slice(disks, func(i, j int) bool { return disks[i].Name < disks[j].Name })
	return disks
}

// refuseSharedLinks refuses the devices of one node that report the same
// by-id link: a link names one disk, so two devices claiming it are two
// paths to one disk (an OSD on each would corrupt it) or a false report
// taking a real disk's identity. Neither is used, and neither keeps the
// link, so neither is taken for the disk it names.
func refuseSharedLinks(disks []DiscoveredDisk) {
	holders := map[string][]int{}
	for i, d := range disks {
		if d.Status.StablePath != "" {
			holders[d.Status.StablePath] = append(holders[d.Status.StablePath], i)
		}
	}
	for link, idx := range holders {
		if len(idx) < 2 {
			continue
		}
		var kernels []string
		for _, i := range idx {
			kernels = append(kernels, strconv.Quote(disks[i].kernel))
		}
		slices.Sort(kernels)
		// One reason, built once and naming a few, shared by every holder:
		// a report of thousands of devices on one link must not give each
		// its own list of all the others (quadratic memory, and as much
		// status in etcd).
		reason := fmt.Sprintf("refused: %s all report the by-id link %s (two paths to one disk, or a false report)", namedFew(kernels), link)
		for _, i := range idx {
			st := &disks[i].Status
			st.Reason = reason
			st.StablePath, st.Available, st.State = "", false, cephv1alpha1.DiskInUse
		}
	}
}

// sharedLinkNamed is how many of the devices sharing a link a refusal names.
const sharedLinkNamed = 8

// namedFew joins the first sharedLinkNamed names, and counts the rest.
func namedFew(names []string) string {
	if len(names) <= sharedLinkNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:sharedLinkNamed], ", "), len(names)-sharedLinkNamed)
}

// nameDisks gives each disk its deterministic name. Devices that claim the
// same identity (a serial shared by virtual disks, a WWN seen through two
// paths) fall back to their kernel paths, which are unique on a node, so
// neither hides the other. Falling back can only move keys to kernel paths,
// so the loop ends.
func nameDisks(node string, disks []DiscoveredDisk) {
	keys := make([]string, len(disks))
	for i, d := range disks {
		keys[i] = DeviceKey(d.Status.StablePath, d.Status.WWN, d.Status.Serial, d.kernel)
	}
	for changed := true; changed; {
		changed = false
		count := make(map[string]int, len(keys))
		for _, k := range keys {
			count[k]++
		}
		for i, k := range keys {
			if count[k] > 1 && k != disks[i].kernel {
				keys[i], changed = disks[i].kernel, true
			}
		}
	}
	for i := range disks {
		disks[i].Name = DiskName(node, keys[i])
	}
}

// isKernelName says whether a name can be a block device's kernel name (a
// file below /dev): not empty, not . or .., no space.
func isKernelName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, " \t\n")
}

// deviceTree indexes a node's entries by kernel name and collects, per
// physical device, the entries layered on it (partitions, LVM, crypt).
type deviceTree struct {
	byName   map[string]*discoveredDevice
	children map[string][]*discoveredDevice
	// listedTwice are kernel names discovery listed more than once: which
	// entry is the device cannot be told, so neither is used.
	listedTwice map[string]bool
}

func newDeviceTree(devices []discoveredDevice) *deviceTree {
	t := &deviceTree{byName: map[string]*discoveredDevice{}, children: map[string][]*discoveredDevice{}, listedTwice: map[string]bool{}}
	for i := range devices {
		d := &devices[i]
		d.Name = strings.TrimPrefix(d.Name, "/dev/")
		d.Parent = strings.TrimPrefix(d.Parent, "/dev/")
		if !isKernelName(d.Parent) {
			d.Parent = "" // lsblk says "." when it knows no parent
		}
		if !isKernelName(d.Name) {
			continue
		}
		if _, dup := t.byName[d.Name]; dup {
			t.listedTwice[d.Name] = true
			continue
		}
		t.byName[d.Name] = d
	}
	for _, name := range sortedKeys(t.byName) {
		d := t.byName[name]
		if !isPhysical(d) {
			if root := t.rootOf(d); root != "" {
				t.children[root] = append(t.children[root], d)
			}
		}
	}
	return t
}

// roots lists every physical device, listed or only implied by its
// children, sorted by kernel name.
func (t *deviceTree) roots() []string {
	set := map[string]bool{}
	for name, d := range t.byName {
		if isPhysical(d) {
			set[name] = true
		}
	}
	for name := range t.children {
		set[name] = true
	}
	return sortedKeys(set)
}

// rootOf follows parent links to the physical device under d: the first
// ancestor that is not itself a layered entry of this ConfigMap. Parent
// cycles in malformed input end the walk instead of looping.
func (t *deviceTree) rootOf(d *discoveredDevice) string {
	visited := map[string]bool{}
	for d.Parent != "" && !visited[d.Name] {
		visited[d.Name] = true
		parent, listed := t.byName[d.Parent]
		if !listed || isPhysical(parent) {
			return d.Parent
		}
		d = parent
	}
	return ""
}

// describe builds the status of one physical device.
func (t *deviceTree) describe(node, root string) cephv1alpha1.DiskStatus {
	d, listed := t.byName[root]
	if !listed {
		d = t.impliedDisk(root)
	}
	status := cephv1alpha1.DiskStatus{
		NodeName:    node,
		Path:        "/dev/" + root,
		StablePath:  StablePath(d.DevLinks),
		Size:        bytesQuantity(d.Size),
		DisplaySize: message.Bytes(int64(min(d.Size, math.MaxInt64))),
		Type:        diskType(root, d.Rotational),
		Rotational:  d.Rotational,
		Model:       d.Model,
		Serial:      d.Serial,
		WWN:         d.WWN,
		Filesystem:  d.Filesystem,
	}
	status.Reason = t.unavailableReason(root, d)
	if t.listedTwice[root] {
		status.Reason = fmt.Sprintf("refused: discovery listed %q more than once", status.Path)
	}
	if err := SafeDevicePath(status.Path); err != nil {
		// It would reach the CephCluster's device list and Rook's
		// prepare job on the node: a name that is no clean /dev path is
		// refused. Its path stays empty, so that no printable form of it
		// ("sd\u202eb" without its bidi override is "sdb") is taken for
		// another device's; the reason quotes it, escaped.
		status.Reason, status.Path = "refused: "+err.Error(), ""
	}
	status.Available = status.Reason == ""
	// What the node's tools reported is shown in the console and by
	// kubectl describe: control characters (escape sequences, NULs) go.
	// Bounded as the CRD bounds them: a node's report cannot make a Disk
	// (and the plugin's cache of Disks) as large as it likes.
	status.Model, status.Serial, status.WWN = reported(status.Model), reported(status.Serial), reported(status.WWN)
	status.Filesystem, status.Reason = reported(status.Filesystem), message.Bound(message.Printable(status.Reason))
	status.State = cephv1alpha1.DiskAvailable
	if !status.Available {
		status.State = cephv1alpha1.DiskInUse
	}
	return status
}

// MaxReportedLen bounds each text a node's tools report of a device
// (model, serial, WWN, filesystem): udev's are far shorter.
const MaxReportedLen = 256

// reported is a node's text as a Disk shows it: printable, and cut to
// MaxReportedLen bytes on a character boundary.
func reported(s string) string {
	return message.Cut(message.Printable(s), MaxReportedLen)
}

// MaxDevicePathLen bounds a device path: a file name may not pass 255
// bytes (NAME_MAX), and udev's names and links are far shorter.
const MaxDevicePathLen = 255

// SafeDevicePath says why a device path may not go into the CephCluster,
// or nil: it must be a clean absolute path below /dev/ (no . or ..
// elements, no doubled or trailing slash) written in udev's alphabet.
// Rook's prepare job on the node opens it as given, and it reaches the
// retirement's wipe instructions, which an operator pastes into a root
// shell: no character outside the set udev itself leaves unescaped in the
// names and links it makes (letters, digits and "#+-.:=@_", systemd's
// udev-util allow list) plus "/" between elements and udev's own \xNN
// escapes (a by-label link's space is "\x20").
func SafeDevicePath(p string) error {
	rest, ok := strings.CutPrefix(p, "/dev/")
	switch {
	case len(p) > MaxDevicePathLen:
		return fmt.Errorf("device path %.40q… is %d bytes long, more than %d", p, len(p), MaxDevicePathLen)
	case !ok || rest == "":
		return fmt.Errorf("device path %q is not below /dev/", p)
	case !udevAlphabet(rest):
		return fmt.Errorf("device path %q holds a character udev does not put in device names (only letters, digits, \"#+-.:=@_/\" and \\xNN escapes)", p)
	case path.Clean(p) != p || slices.Contains(strings.Split(rest, "/"), ".."):
		return fmt.Errorf("device path %q is not a clean path", p)
	}
	return nil
}

// udevAlphabet reports whether s uses only the characters udev leaves in
// device names and links, with any other byte written as udev escapes it.
func udevAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("#+-.:=@_/", c) >= 0:
		case c == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]):
			i += 3
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// impliedDisk reconstructs a disk Rook did not list because it has
// partitions or other children. Its identity comes from its first direct
// partition: udev names a partition's by-id links after its disk's plus
// -partN, and carries the disk's serial, model and WWN. The size is the sum
// of its partitions, a lower bound of the disk's. LVM and crypt children
// carry nothing of their disk (Rook reports each entry's own udev
// properties, and a device-mapper node has no serial or WWN and only
// dm-name-/dm-uuid- links), so a disk under them has no identity here;
// KeepDiskIdentities gives it back the one it was published with.
func (t *deviceTree) impliedDisk(root string) *discoveredDevice {
	d := &discoveredDevice{Name: root}
	identified := false
	for _, c := range t.children[root] {
		if c.Parent != root || c.Type != "part" {
			continue
		}
		d.Size += c.Size
		if !identified {
			identified = true
			d.DevLinks = partitionSuffixStripped(c.DevLinks)
			d.Serial, d.Model, d.WWN, d.Rotational = c.Serial, c.Model, c.WWN, c.Rotational
		}
	}
	return d
}

// unavailableReason says why a device cannot be given to Ceph, or "" when it
// can. Discovery is a stale snapshot (empty stays true after an OSD takes
// the disk), so every signal is checked, not only empty.
func (t *deviceTree) unavailableReason(root string, d *discoveredDevice) string {
	if kids := t.children[root]; len(kids) > 0 {
		return childrenReason(kids)
	}
	if d.Partitions {
		return "partitioned"
	}
	switch {
	case d.Filesystem != "":
		return "filesystem " + d.Filesystem
	case d.Mountpoint != "":
		return "mounted at " + d.Mountpoint
	case d.ReadOnly:
		return "read-only"
	case d.Size == 0:
		return "reports no capacity"
	}
	if reason := cephVolumeReason(d.CephVolumeData); reason != "" {
		return reason
	}
	if !d.Empty {
		return "not empty"
	}
	return ""
}

// childrenReason describes what sits on a disk: "partitioned: sdb1 (ext4),
// sdb2", or "in use by lvm dm-0".
func childrenReason(kids []*discoveredDevice) string {
	var parts, others []string
	for _, k := range kids {
		desc := k.Name
		if k.Filesystem != "" {
			desc += " (" + k.Filesystem + ")"
		}
		if k.Type == "part" {
			parts = append(parts, desc)
		} else {
			others = append(others, k.Type+" "+desc)
		}
	}
	if len(parts) > 0 {
		return "partitioned: " + strings.Join(parts, ", ")
	}
	return "in use by " + strings.Join(others, ", ")
}

// cephVolumeReason reads ceph-volume's verdict (a JSON string) and returns
// its rejection, or "" when it accepts the device or did not run.
func cephVolumeReason(data string) string {
	if data == "" {
		return ""
	}
	var v cephVolumeVerdict
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return "unreadable ceph-volume verdict"
	}
	if v.Available {
		return ""
	}
	if len(v.RejectedReasons) == 0 {
		return "rejected by ceph-volume"
	}
	return "rejected by ceph-volume: " + strings.Join(v.RejectedReasons, "; ")
}

// StablePath picks the /dev/disk/by-id/ link that names the device itself
// from udev's space-separated links, in stableLinkPreference order, ties
// broken lexicographically. Links of logical layers are ignored. It returns
// "" when there is none (loop devices, some virtual disks): those fall back
// to the kernel path, which is only as stable as the kernel's ordering.
//
// The stable path is what goes into the CephCluster's device list: Rook
// documents the by-id form as the one that does not change after reboots.
func StablePath(devLinks string) string {
	best, bestRank := "", math.MaxInt
	for _, link := range strings.Fields(devLinks) {
		id, ok := strings.CutPrefix(link, byIDDir)
		if !ok || id == "" || strings.Contains(id, "/") || hasAnyPrefix(id, logicalLinkPrefixes) || SafeDevicePath(link) != nil {
			continue
		}
		rank := linkRank(id)
		if rank < bestRank || (rank == bestRank && link < best) {
			best, bestRank = link, rank
		}
	}
	return best
}

func linkRank(id string) int {
	for i, prefix := range stableLinkPreference {
		if strings.HasPrefix(id, prefix) {
			return i
		}
	}
	return len(stableLinkPreference)
}

// partitionSuffixStripped turns a partition's by-id links into its disk's.
func partitionSuffixStripped(devLinks string) string {
	var out []string
	for _, link := range strings.Fields(devLinks) {
		if strings.HasPrefix(link, byIDDir) && partitionSuffix.MatchString(link) {
			out = append(out, partitionSuffix.ReplaceAllString(link, ""))
		}
	}
	return strings.Join(out, " ")
}

// DeviceKey is the identity a Disk's name is hashed from: the stable path,
// else the WWN, else the serial, else the kernel path. A Disk whose name
// moved would drop out of every DiskPool listing it, so the key prefers what
// survives a reboot and a kernel rename.
func DeviceKey(stablePath, wwn, serial, kernelPath string) string {
	switch {
	case stablePath != "":
		return stablePath
	case wwn != "":
		return "wwn:" + wwn
	case serial != "":
		return "serial:" + serial
	}
	return kernelPath
}

// maxDiskNameLen keeps Disk names usable as label values too.
const maxDiskNameLen = 63

// diskHashLen is the hex length of the hash in a Disk name (64 bits).
const diskHashLen = 16

// DiskName is the deterministic DNS-1123 name of a device: a readable
// prefix from the node name, then a hash of the real node name and the
// device key. Hashing the real node name keeps worker.1 and worker-1 apart
// even though both sanitise to worker-1; hashing the key (not the kernel
// name) keeps the name after a kernel rename.
func DiskName(node, key string) string {
	sum := sha256.Sum256([]byte(node + "\x00" + key))
	hash := hex.EncodeToString(sum[:])[:diskHashLen]
	prefix := sanitiseNodeName(node, maxDiskNameLen-diskHashLen-1)
	if prefix == "" {
		return "disk-" + hash
	}
	return prefix + "-" + hash
}

// sanitiseNodeName lowercases and keeps [a-z0-9-], turning everything else
// into '-', trimmed to max and of leading and trailing dashes.
func sanitiseNodeName(node string, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(node) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() >= max {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// MarkMissing is the status of a Disk that discovery stopped reporting (its
// device or its node went away). The Disk is never deleted: pools that list
// it keep their meaning and its OSD is not touched. Everything discovery
// knew stays, and lastSeenTime becomes now: Rook's discovery daemon
// rewrites its ConfigMap only when the device list changes, and the
// inventory reads every change as it comes, so the list that last named
// the device was current until now. (After the plugin was down, now is
// late by at most that downtime.) Until then lastSeenTime held the start
// of the device's current run of reports, which would date its
// disappearance to the day it appeared.
func MarkMissing(prev cephv1alpha1.DiskStatus, now time.Time) cephv1alpha1.DiskStatus {
	next := *prev.DeepCopy()
	next.LastSeenTime = &metav1.Time{Time: now.Truncate(time.Second)}
	next.State = cephv1alpha1.DiskMissing
	next.Available = false
	next.Reason = "not reported by discovery since " + next.LastSeenTime.UTC().Format(time.RFC3339)
	return next
}

func isPhysical(d *discoveredDevice) bool { return d.Type == "disk" || d.Type == "loop" }

// isLoop recognises a loop device by its type or, when only its partitions
// are listed, by its kernel name.
func (t *deviceTree) isLoop(root string) bool {
	d, listed := t.byName[root]
	return strings.HasPrefix(root, "loop") || (listed && d.Type == "loop")
}

func diskType(kernelName string, rotational bool) cephv1alpha1.DiskType {
	switch {
	case strings.HasPrefix(kernelName, "nvme"):
		return cephv1alpha1.DiskTypeNVMe
	case rotational:
		return cephv1alpha1.DiskTypeHDD
	}
	return cephv1alpha1.DiskTypeSSD
}

func bytesQuantity(n uint64) *resource.Quantity {
	return resource.NewQuantity(int64(min(n, math.MaxInt64)), resource.BinarySI)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
