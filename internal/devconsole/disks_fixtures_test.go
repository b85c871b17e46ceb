package devconsole_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// The inventory the Disks page and the picker are tested against at scale:
// 60 nodes of 20 disks, and a node with a 63-character name whose disks
// have long names and paths. Every node looks alike so the expected
// answer of each filter can be worked out from the rules below:
//
//	d00–d11 HDD 8 TiB, d12–d17 SSD 2 TiB, d18–d19 NVMe 1 TiB
//	d05 InUse (filesystem ext4), d06 Missing
//	nodes 1–3: d00–d03 claimed by bigPoolA (InUse)
//	node 4:    d00–d01 claimed by bigPoolB but still Available ("Held by")
//	big-node-017-d13 has the model "Quantum Fireball XT"
const (
	bigNodeCount  = 60
	disksPerNode  = 20
	bigPoolA      = "big-pool-a"
	bigPoolB      = "big-pool-b"
	bigPoolDetail = "big-pool-detail"
	bigLabel      = "ceph-rook.test/inventory"
	missingReason = "not reported by discovery since the last scan"
	quantumModel  = "Quantum Fireball XT"
)

// longNode is a node name as long as Kubernetes allows (63 characters).
var longNode = "worker-" + strings.Repeat("abcdefgh", 7)

// longDisk is the i-th disk of longNode, named as long as a Disk's name
// may be (63 characters: DiskName, and the CRDs that list Disks).
func longDisk(i int) string {
	return fmt.Sprintf("%s-long-disk-%02d", longNode[:49], i)
}

// longStablePath is a by-id path as long as real NVMe ones get.
const longStablePath = "/dev/disk/by-id/nvme-SAMSUNG_MZQL27T6HBLA-00A07_S6CKNA0T123456_0123456789abcdef0123456789abcdef-namespace-1"

type bigDisk struct {
	Name, Node, Path, StablePath, Size, Model, Serial, Reason, ClaimedBy string
	Type                                                                 v1alpha1.DiskType
	State                                                                v1alpha1.DiskState
	SizeTiB                                                              float64
}

func bigNode(n int) string { return fmt.Sprintf("big-node-%03d", n) }

// bigInventory is the scale fixture, in node and path order.
func bigInventory() []bigDisk {
	var out []bigDisk
	for n := 1; n <= bigNodeCount; n++ {
		node := bigNode(n)
		for i := range disksPerNode {
			d := bigDisk{Name: fmt.Sprintf("%s-d%02d", node, i), Node: node, State: v1alpha1.DiskAvailable, Serial: fmt.Sprintf("SN%03d%02d", n, i)}
			switch {
			case i < 12:
				d.Type, d.Size, d.SizeTiB, d.Model = v1alpha1.DiskTypeHDD, "8Ti", 8, "ST8000NM000A"
			case i < 18:
				d.Type, d.Size, d.SizeTiB, d.Model = v1alpha1.DiskTypeSSD, "2Ti", 2, "Samsung PM883"
			default:
				d.Type, d.Size, d.SizeTiB, d.Model = v1alpha1.DiskTypeNVMe, "1Ti", 1, "Micron 7450"
			}
			if i < 18 {
				d.Path = "/dev/sd" + string(rune('b'+i))
			} else {
				d.Path = fmt.Sprintf("/dev/nvme%dn1", i-18)
			}
			d.StablePath = "/dev/disk/by-id/wwn-0x5000c500" + d.Serial
			switch i {
			case 5:
				d.State, d.Reason = v1alpha1.DiskInUse, "filesystem ext4"
			case 6:
				d.State, d.Reason = v1alpha1.DiskMissing, missingReason
			}
			if n <= 3 && i < 4 {
				d.State, d.ClaimedBy = v1alpha1.DiskInUse, bigPoolA
			}
			if n == 4 && i < 2 {
				d.ClaimedBy = bigPoolB
			}
			if n == 17 && i == 13 {
				d.Model = quantumModel
			}
			out = append(out, d)
		}
	}
	for i := range 2 {
		out = append(out, bigDisk{
			Name: longDisk(i), Node: longNode, Path: fmt.Sprintf("/dev/nvme%dn1", i),
			StablePath: fmt.Sprintf("%s-%d", longStablePath, i), Size: "7680G", SizeTiB: 7680e9 / (1 << 40), Type: v1alpha1.DiskTypeNVMe,
			State: v1alpha1.DiskAvailable, Model: "SAMSUNG MZQL27T6HBLA-00A07", Serial: fmt.Sprintf("S6CKNA0T12345%d", i),
		})
	}
	return out
}

// pickable is whether a new pool may take the disk.
func (d bigDisk) pickable() bool {
	return d.State == v1alpha1.DiskAvailable && d.ClaimedBy == ""
}

func (d bigDisk) object() *v1alpha1.Disk {
	q := resource.MustParse(d.Size)
	return &v1alpha1.Disk{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Labels: map[string]string{bigLabel: "true"}},
		Status: v1alpha1.DiskStatus{
			NodeName: d.Node, Path: d.Path, StablePath: d.StablePath, Size: &q, Type: d.Type, Rotational: d.Type == v1alpha1.DiskTypeHDD,
			Model: d.Model, Serial: d.Serial, State: d.State, Reason: d.Reason, ClaimedBy: d.ClaimedBy, Available: d.State == v1alpha1.DiskAvailable,
		},
	}
}

// createBigInventory creates the scale fixture (with 16 writers: two
// requests a disk) and deletes it when the test ends, so the package's
// other tests see the inventory they expect.
func createBigInventory(t *testing.T) []bigDisk {
	t.Helper()
	env := controlPlane.Env(t)
	disks := bigInventory()
	work := make(chan bigDisk)
	errs := make(chan error, len(disks))
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for d := range work {
				if err := createWithStatusErr(context.Background(), env.Client, d.object()); err != nil {
					errs <- fmt.Errorf("disk %s: %w", d.Name, err)
				}
			}
		})
	}
	for _, d := range disks {
		work <- d
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = env.Client.DeleteAllOf(ctx, &v1alpha1.Disk{}, client.MatchingLabels{bigLabel: "true"})
		for _, pool := range []string{bigPoolA, "big-pool-new", bigPoolDetail} {
			_ = env.Client.Delete(ctx, &v1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: pool}})
		}
	})
	return disks
}

// allDisks is every Disk the API server has: the scale fixture and
// whatever the package's other tests left.
func allDisks(t *testing.T) []v1alpha1.Disk {
	t.Helper()
	var list v1alpha1.DiskList
	require.NoError(t, controlPlane.Env(t).Client.List(context.Background(), &list))
	return list.Items
}

// distinctNodes counts the nodes of disks ("" included, as the pages group it).
func distinctNodes(disks []v1alpha1.Disk) int {
	nodes := map[string]bool{}
	for _, d := range disks {
		nodes[d.Status.NodeName] = true
	}
	return len(nodes)
}
