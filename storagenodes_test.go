package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

func nodesJSON(t *testing.T, s string) []any {
	t.Helper()
	var out []any
	require.NoError(t, json.Unmarshal([]byte(s), &out))
	return out
}

func wantNodes(nodeDevices ...[]string) []cephv1.Node {
	var out []cephv1.Node
	for _, nd := range nodeDevices {
		n := cephv1.Node{Name: nd[0]}
		for _, d := range nd[1:] {
			n.Devices = append(n.Devices, cephv1.Device{Name: d})
		}
		out = append(out, n)
	}
	return out
}

func TestPlanStorageNodes(t *testing.T) {
	cases := []struct {
		name        string
		current     string
		managed     string
		want        []cephv1.Node
		wantNodes   string
		wantManaged string
	}{
		{
			name:        "an empty cluster gets the pools' devices, sorted",
			current:     `[]`,
			want:        wantNodes([]string{"b", "/dev/y", "/dev/x"}, []string{"a", "/dev/z"}),
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/z"}]},{"name":"b","devices":[{"name":"/dev/x"},{"name":"/dev/y"}]}]`,
			wantManaged: managed("a|/dev/z", "b|/dev/x", "b|/dev/y"),
		},
		{
			name:        "a device listed before the plugin (not managed) is never removed",
			current:     `[{"name":"a","devices":[{"name":"/dev/theirs"}]}]`,
			want:        nil,
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/theirs"}]}]`,
			wantManaged: ``,
		},
		{
			name:        "a managed device no pool wants any more is removed",
			current:     `[{"name":"a","devices":[{"name":"/dev/ours"},{"name":"/dev/theirs"}]}]`,
			managed:     managed("a|/dev/ours"),
			want:        nil,
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/theirs"}]}]`,
			wantManaged: ``,
		},
		{
			name:        "a node with only managed devices goes when they go",
			current:     `[{"name":"a","devices":[{"name":"/dev/ours"}]},{"name":"b","devices":[{"name":"/dev/kept"}]}]`,
			managed:     managed("a|/dev/ours", "b|/dev/kept"),
			want:        wantNodes([]string{"b", "/dev/kept"}),
			wantNodes:   `[{"name":"b","devices":[{"name":"/dev/kept"}]}]`,
			wantManaged: managed("b|/dev/kept"),
		},
		{
			name:        "fields someone else set on nodes and devices are carried over",
			current:     `[{"name":"a","config":{"osdsPerDevice":"2"},"devices":[{"name":"/dev/ours","config":{"deviceClass":"ssd"}}]}]`,
			managed:     managed("a|/dev/ours"),
			want:        wantNodes([]string{"a", "/dev/ours", "/dev/new"}),
			wantNodes:   `[{"name":"a","config":{"osdsPerDevice":"2"},"devices":[{"name":"/dev/new"},{"name":"/dev/ours","config":{"deviceClass":"ssd"}}]}]`,
			wantManaged: managed("a|/dev/new", "a|/dev/ours"),
		},
		{
			name:        "a new device of the plugin carries its Disk's class",
			current:     `[]`,
			want:        classed(wantNodes([]string{"a", "/dev/new"}), "ssd"),
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/new","config":{"deviceClass":"ssd"}}]}]`,
			wantManaged: managed("a|/dev/new"),
		},
		{
			name:        "the class of a device of the plugin follows its Disk, the rest of its config kept",
			current:     `[{"name":"a","devices":[{"name":"/dev/ours","config":{"deviceClass":"hdd","osdsPerDevice":"1"}},{"name":"/dev/theirs","config":{"deviceClass":"hdd"}}]}]`,
			managed:     managed("a|/dev/ours"),
			want:        classed(wantNodes([]string{"a", "/dev/ours"}), "nvme"),
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/ours","config":{"deviceClass":"nvme","osdsPerDevice":"1"}},{"name":"/dev/theirs","config":{"deviceClass":"hdd"}}]}]`,
			wantManaged: managed("a|/dev/ours"),
		},
		{
			name:        "a device of the plugin made before classes gets its class",
			current:     `[{"name":"a","devices":[{"name":"/dev/ours"}]}]`,
			managed:     managed("a|/dev/ours"),
			want:        classed(wantNodes([]string{"a", "/dev/ours"}), "hdd"),
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/ours","config":{"deviceClass":"hdd"}}]}]`,
			wantManaged: managed("a|/dev/ours"),
		},
		{
			name:        "a device both listed by someone else and wanted becomes managed, once",
			current:     `[{"name":"a","devices":[{"name":"/dev/both"}]}]`,
			want:        wantNodes([]string{"a", "/dev/both"}),
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/both"}]}]`,
			wantManaged: managed("a|/dev/both"),
		},
		{
			name:        "a malformed record is read as managing nothing, so nothing is removed",
			current:     `[{"name":"a","devices":[{"name":"/dev/x"}]}]`,
			managed:     `not json`,
			want:        nil,
			wantNodes:   `[{"name":"a","devices":[{"name":"/dev/x"}]}]`,
			wantManaged: ``,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanStorageNodes(nodesJSON(t, tc.current), tc.managed, tc.want)
			assert.JSONEq(t, tc.wantNodes, string(patch.MustJSON(plan.Nodes)))
			assert.Equal(t, tc.wantManaged, plan.Managed)
		})
	}
}

// classed gives every device of nodes the class.
func classed(nodes []cephv1.Node, class string) []cephv1.Node {
	for i := range nodes {
		for j := range nodes[i].Devices {
			nodes[i].Devices[j].Config = map[string]string{DeviceClassConfigKey: class}
		}
	}
	return nodes
}

func TestPlanStorageNodesIsStable(t *testing.T) {
	want := classed(wantNodes([]string{"a", "/dev/x", "/dev/y"}, []string{"b", "/dev/z"}), "ssd")
	first := PlanStorageNodes(nil, "", want)
	second := PlanStorageNodes(first.Nodes, first.Managed, want)
	assert.Equal(t, first, second, "planning again over its own result changes nothing (no write)")
}

// managed is the record of "node|device" entries.
func managed(entries ...string) string {
	var ids []DeviceID
	for _, e := range entries {
		node, device, _ := strings.Cut(e, "|")
		ids = append(ids, DeviceID{Node: node, Device: device})
	}
	return encodeManaged(ids)
}

func TestManagedRecordFitsTheAnnotationBudget(t *testing.T) {
	var ids []DeviceID
	for n := range 500 {
		for d := range 20 {
			ids = append(ids, DeviceID{Node: fmt.Sprintf("worker-%04d.example.com", n), Device: fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%04d%04d", n, d)})
		}
	}
	record := encodeManaged(ids)
	assert.Less(t, len(record), 100_000, "10,000 devices must leave most of the 256 KiB annotation budget")
	assert.Len(t, parseManaged(record), 10000)
}

func TestRetainedDevices(t *testing.T) {
	a := available("a", "n1", 100)
	kept := DeviceIDOf(&a)
	gone := DeviceID{Node: "n1", Device: "/dev/disk/by-id/wwn-deleted"}
	foreign := DeviceID{Node: "n1", Device: "/dev/disk/by-id/wwn-foreign"}
	relisted := DeviceID{Node: "n2", Device: "/dev/disk/by-id/wwn-renamed"}
	inCluster := map[DeviceID]bool{kept: true, gone: true, foreign: true, relisted: true}
	record := managed(kept.Node+"|"+kept.Device, gone.Node+"|"+gone.Device, relisted.Node+"|"+relisted.Device)
	describedOnly := func(ids ...DeviceID) func(DeviceID) bool {
		return func(id DeviceID) bool { return slices.Contains(ids, id) }
	}
	pools := func(p ...cephv1alpha1.DiskPool) DiskUnion { return Union(p, byName(a), inCluster) }
	for _, tc := range []struct {
		name      string
		union     DiskUnion
		described func(DeviceID) bool
		want      []DeviceID
	}{
		{"a pool names a Disk someone deleted: the device no Disk describes stays, ours only",
			pools(pool("p", 0, "a", "deleted")), describedOnly(kept, relisted), []DeviceID{gone}},
		{"every Disk deleted (kubectl delete disks --all): every device of ours stays",
			pools(pool("p", 0, "a", "deleted", "renamed")), describedOnly(), []DeviceID{gone, relisted}},
		{"a Disk published again but not described yet answers to its name with nothing: the device stays",
			func() DiskUnion {
				fresh := cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: "deleted"}}
				return Union([]cephv1alpha1.DiskPool{pool("p", 0, "a", "deleted")}, byName(a, fresh), inCluster)
			}(), describedOnly(kept, relisted), []DeviceID{gone}},
		{"no pool names an unresolved Disk: nothing is kept, the pools changed",
			pools(pool("p", 0, "a")), describedOnly(), nil},
		{"a device a Disk still describes is not kept: that Disk's pools decide it",
			pools(pool("p", 0, "a", "deleted")), describedOnly(kept, gone, relisted), nil},
		{"a pool being deleted names nothing",
			func() DiskUnion {
				p := pool("p", 0, "a", "deleted")
				p.DeletionTimestamp = &metav1.Time{}
				return Union([]cephv1alpha1.DiskPool{p}, byName(a), inCluster)
			}(), describedOnly(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, RetainedDevices(inCluster, record, tc.union, tc.described))
		})
	}
}
