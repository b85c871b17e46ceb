package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// The floors are what the API server alone needs for the plugin's part of
// discovery: every Disk created and its status written (2 writes a disk),
// by a plain client with no reconciler in between, against the CRDs the
// plugin installed (the same schema it writes to) and with the plugin
// stopped. The floor runs as many workers as the plugin's inventory (8),
// on the path the plugin's requests take (the counting proxy, the
// benchmark's watch of Disks open); the write limit goes straight to the
// API server with nothing watching and as many workers as it takes
// before its throughput stops growing: its own limit on this machine.

const (
	floorLabel  = "bench.ceph.fundament.io/floor"
	floorPrefix = "floor-"
	// limitSweepDisks is how many Disks each step of the write-limit
	// sweep publishes (2 writes each).
	limitSweepDisks = 1000
	// maxLimitWorkers ends the sweep where it would still be growing.
	maxLimitWorkers = 256
	// limitGain is the growth over the best step so far that counts as
	// growing; limitFlatSteps steps in a row without it end the sweep.
	limitGain      = 1.05
	limitFlatSteps = 2
)

// floorDisks are what a plain client writes to publish the same inventory:
// one Disk and one status per device, each as large as the plugin's (its
// name, two labels, the status discovery gives the same device).
func floorDisks(nodes, devices int) []*cephv1alpha1.Disk {
	now := metav1.Time{Time: time.Now().Truncate(time.Second)}
	var out []*cephv1alpha1.Disk
	for i := range nodes {
		node := nodeName(i)
		for _, d := range simulate.MixedDevices(node, devices) {
			out = append(out, floorDisk(node, d, now))
		}
	}
	return out
}

func floorDisk(node string, d simulate.Device, now metav1.Time) *cephv1alpha1.Disk {
	size := resource.NewQuantity(int64(d.Size), resource.BinarySI)
	stable := strings.Fields(d.DevLinks)[0] // the by-id link discovery prefers
	sum := sha256.Sum256([]byte(node + "\x00" + stable))
	status := cephv1alpha1.DiskStatus{
		NodeName: node, Path: "/dev/" + d.Name, StablePath: stable, Size: size,
		DisplaySize: fmt.Sprintf("%.1f TiB", float64(d.Size)/(1<<40)), Type: floorDiskType(d),
		Rotational: d.Rotational, Model: d.Model, Serial: d.Serial, WWN: d.WWN, Filesystem: d.Filesystem,
		Available: d.Empty, State: cephv1alpha1.DiskAvailable, LastSeenTime: &now,
	}
	if !d.Empty {
		status.State, status.Reason = cephv1alpha1.DiskInUse, "filesystem "+d.Filesystem
	}
	return &cephv1alpha1.Disk{
		ObjectMeta: metav1.ObjectMeta{
			// As long as the plugin's names (node, then a 16-digit hash).
			Name:   floorPrefix + node + "-" + hex.EncodeToString(sum[:])[:10],
			Labels: map[string]string{floorLabel: "true", cephv1alpha1.DiscoveryConfigMapLabel: simulate.ConfigMapName(node)},
		},
		Status: status,
	}
}

func floorDiskType(d simulate.Device) cephv1alpha1.DiskType {
	switch {
	case strings.HasPrefix(d.Name, "nvme"):
		return cephv1alpha1.DiskTypeNVMe
	case d.Rotational:
		return cephv1alpha1.DiskTypeHDD
	}
	return cephv1alpha1.DiskTypeSSD
}

// writeFloor creates each Disk and writes its status with workers.
func writeFloor(ctx context.Context, c client.Client, workers int, disks []*cephv1alpha1.Disk) error {
	return parallel(ctx, workers, disks, func(ctx context.Context, d *cephv1alpha1.Disk) error {
		status := d.Status
		if err := c.Create(ctx, d); err != nil {
			return err
		}
		d.Status = status
		return c.Status().Update(ctx, d)
	})
}

// timeFloor publishes the floor Disks of the inventory with workers,
// returns how long that took (and, with cpuNow, the CPU it cost), and
// deletes them again.
func timeFloor(ctx context.Context, c client.Client, workers, nodes, devices int, cpuNow func() CPU) (float64, CPU, error) {
	disks := floorDisks(nodes, devices)
	var before CPU
	if cpuNow != nil {
		before = cpuNow()
	}
	start := time.Now()
	if err := writeFloor(ctx, c, workers, disks); err != nil {
		return 0, nil, err
	}
	seconds := time.Since(start).Seconds()
	var used CPU
	if cpuNow != nil {
		used = CPUSince(before, cpuNow())
	}
	return seconds, used, deleteAll(ctx, c, &cephv1alpha1.Disk{}, &cephv1alpha1.DiskList{}, client.MatchingLabels{floorLabel: "true"})
}

// clearInventory deletes the discovery ConfigMaps and the Disks published
// from them (the plugin stopped, so nothing reacts), and the floor's.
func clearInventory(ctx context.Context, c client.Client) error {
	if err := deleteAll(ctx, c, &corev1.ConfigMap{}, &corev1.ConfigMapList{}, client.InNamespace(Namespace), client.MatchingLabels{simulate.SimulatedLabel: "true"}); err != nil {
		return err
	}
	return deleteAll(ctx, c, &cephv1alpha1.Disk{}, &cephv1alpha1.DiskList{}, client.HasLabels{cephv1alpha1.DiscoveryConfigMapLabel})
}

// deleteAll deletes every object of obj's kind that opts select and waits
// until a list finds none.
func deleteAll(ctx context.Context, c client.Client, obj client.Object, list client.ObjectList, opts ...client.DeleteAllOfOption) error {
	if err := c.DeleteAllOf(ctx, obj, opts...); err != nil {
		return fmt.Errorf("delete %T: %w", obj, err)
	}
	var listOpts client.ListOptions
	for _, o := range opts {
		if lo, ok := o.(client.ListOption); ok {
			lo.ApplyToList(&listOpts)
		}
	}
	listOpts.Limit = 1
	return waitFor(ctx, 5*time.Minute, func() bool {
		err := c.List(ctx, list, &listOpts)
		return err == nil && meta.LenList(list) == 0
	})
}

// LimitStep is one step of the write-limit sweep.
type LimitStep struct {
	Workers         int     `json:"workers"`
	WritesPerSecond float64 `json:"writesPerSecond"`
}

// WriteLimit is the API server's write limit as the sweep found it: the
// throughput of each worker count tried, and the count that gave most.
type WriteLimit struct {
	DisksPerStep int         `json:"disksPerStep"`
	Steps        []LimitStep `json:"steps"`
	Workers      int         `json:"workers"`
}

func (l WriteLimit) String() string {
	var parts []string
	for _, s := range l.Steps {
		parts = append(parts, fmt.Sprintf("%d workers %.0f/s", s.Workers, s.WritesPerSecond))
	}
	return fmt.Sprintf("%s; %d workers (%d disks a step)", strings.Join(parts, ", "), l.Workers, l.DisksPerStep)
}

// best is the step with the most writes a second.
func (l WriteLimit) best() LimitStep {
	var b LimitStep
	for _, s := range l.Steps {
		if s.WritesPerSecond > b.WritesPerSecond {
			b = s
		}
	}
	return b
}

// SweepDone says whether the write-limit sweep has seen throughput stop
// growing: the last limitFlatSteps steps each stayed under limitGain ×
// the best step before them. (One flat step on a shared machine is as
// likely noise as a limit.)
func SweepDone(steps []LimitStep) bool {
	if len(steps) <= limitFlatSteps {
		return false
	}
	best := 0.0
	for _, s := range steps[:len(steps)-limitFlatSteps] {
		best = max(best, s.WritesPerSecond)
	}
	for _, s := range steps[len(steps)-limitFlatSteps:] {
		if s.WritesPerSecond >= best*limitGain {
			return false
		}
	}
	return true
}

// sweepWriteLimit doubles the floor's workers from first until the
// throughput of disks Disks (created and status written) stops growing,
// and chooses the worker count that wrote fastest.
func sweepWriteLimit(ctx context.Context, c client.Client, disks, devicesPerNode, first int) (WriteLimit, error) {
	nodes := max(1, disks/devicesPerNode)
	limit := WriteLimit{DisksPerStep: nodes * devicesPerNode}
	for workers := max(1, first); workers <= maxLimitWorkers && !SweepDone(limit.Steps); workers *= 2 {
		seconds, _, err := timeFloor(ctx, c, workers, nodes, devicesPerNode, nil)
		if err != nil {
			return limit, err
		}
		limit.Steps = append(limit.Steps, LimitStep{Workers: workers, WritesPerSecond: float64(2*limit.DisksPerStep) / seconds})
	}
	limit.Workers = limit.best().Workers
	return limit, nil
}
