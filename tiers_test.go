package main

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// samePlacement places a consumer's metadata pools as its data.
func samePlacement(r Replication) Placement { return Placement{Data: r, Metadata: r} }

// storePlacement places an object store without a class: its metadata
// pools as automatic sizing says.
func storePlacement(r Replication) Placement { return Placement{Data: r, Metadata: r.Automatic()} }

// tiersWith is a union of all, with classes as given.
func tiersWith(all Tier, classes ...Tier) Tiers {
	t := Tiers{All: all}
	for i, class := range deviceClasses {
		t.byClass[i].Class = class
	}
	for _, c := range classes {
		t.byClass[classIndex(c.Class)] = c
	}
	return t
}

// mixed is a union of three nodes: node-a has an NVMe drive, an SSD and
// an HDD; node-b an SSD and an HDD; node-c an HDD (sizes in GiB).
func mixed() []cephv1alpha1.Disk {
	return []cephv1alpha1.Disk{
		typed(available("a-nvme", "node-a", 1), "nvme"),
		typed(available("a-ssd", "node-a", 2), "ssd"),
		typed(available("a-hdd", "node-a", 10), "hdd"),
		typed(available("b-ssd", "node-b", 2), "ssd"),
		typed(available("b-hdd", "node-b", 10), "hdd"),
		typed(available("c-hdd", "node-c", 10), "hdd"),
	}
}

func TestTiersOf(t *testing.T) {
	tiers := TiersOf(pointers(mixed()))
	assert.Equal(t, Tier{Nodes: 3, OSDs: 6, RawBytes: 35 << 30}, tiers.All)
	assert.Equal(t, Tier{Class: "nvme", Nodes: 1, OSDs: 1, RawBytes: 1 << 30}, tiers.Of("nvme"))
	assert.Equal(t, Tier{Class: "ssd", Nodes: 2, OSDs: 2, RawBytes: 4 << 30}, tiers.Of("ssd"))
	assert.Equal(t, Tier{Class: "hdd", Nodes: 3, OSDs: 3, RawBytes: 30 << 30}, tiers.Of("hdd"))
	assert.Equal(t, tiers.All, tiers.Of(""), "no class is every disk")
	var classes []cephv1alpha1.DiskType
	for _, tier := range tiers.Present() {
		classes = append(classes, tier.Class)
	}
	assert.Equal(t, []cephv1alpha1.DiskType{"nvme", "ssd", "hdd"}, classes, "fastest first")

	untyped := TiersOf(pointers([]cephv1alpha1.Disk{available("x", "node-a", 1)}))
	assert.Equal(t, 1, untyped.All.OSDs, "a disk without a type counts for pools without a class")
	assert.Empty(t, untyped.Present())
	assert.Equal(t, TiersOf(pointers(mixed())), tiers, "comparable: the same union is the same tiers")
}

// classCopiesCase is one of testdata/class-copies-cases.json, which the
// console's tiers.js decides too (internal/devconsole TestTiersInBrowser).
type classCopiesCase struct {
	Name      string
	Requested *int32
	Have      int32
	Nodes     int
	Want      struct {
		Copies  int32
		Refused CopiesFloor
	}
}

// On a device class the copies are never fewer than asked, than the pool
// has, or, automatic, than 2; where the class's nodes cannot hold them one
// per node the placement is refused, never clamped.
func TestClassCopies(t *testing.T) {
	raw, err := os.ReadFile("testdata/class-copies-cases.json")
	require.NoError(t, err)
	var file struct{ Cases []classCopiesCase }
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Cases)
	for _, tc := range file.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			got, _, err := ClassCopies(tc.Requested, tc.Have, "nvme", tc.Nodes)
			if tc.Want.Refused != "" {
				var refused *TooFewNodesOfClassError
				require.ErrorAs(t, err, &refused)
				assert.Equal(t, TooFewNodesOfClassError{Class: "nvme", Nodes: tc.Nodes, Copies: tc.Want.Copies, Why: tc.Want.Refused}, *refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.Want.Copies, got)
		})
	}
}

func TestTierReplication(t *testing.T) {
	tiers := TiersOf(pointers(mixed()))
	one := TiersOf(pointers(mixed()[:3])) // node-a alone: nvme, ssd, hdd
	tests := []struct {
		name      string
		requested *int32
		have      int32
		class     cephv1alpha1.DiskType
		tiers     Tiers
		want      Replication
		refused   string
	}{
		{name: "no class: every node, as before classes", class: "",
			want: Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 3}},
		{name: "no class: what the pool has does not count", class: "", have: 3, tiers: TiersOf(pointers(mixed()[:4])),
			want: Replication{Size: 2, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 2}},
		{name: "no class on one node: one copy, as the seed says", class: "", tiers: one,
			want: Replication{Size: 1, FailureDomain: "osd", Nodes: 1}},
		{name: "no class, three asked on one node: clamped, as the seed says", class: "", requested: ptrTo[int32](3), tiers: one,
			want: Replication{Size: 1, FailureDomain: "osd", Nodes: 1, Message: "3 replicas requested but disks come from only 1 node; using 1"}},
		{name: "hdd is on three nodes", class: "hdd",
			want: Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 3, DeviceClass: "hdd"}},
		{name: "ssd is on two: two copies on separate hosts", class: "ssd",
			want: Replication{Size: 2, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 2, DeviceClass: "ssd"}},
		{name: "three asked on ssd's two nodes: refused, with the numbers", class: "ssd", requested: ptrTo[int32](3),
			refused: "device class ssd has disks on only 2 nodes; the pool keeps 3 copies (replicas: 3), one per node: add ssd disks on 1 more node, or choose another class"},
		{name: "automatic on ssd with three copies now: refused, not shrunk", class: "ssd", have: 3,
			refused: "device class ssd has disks on only 2 nodes; the pool keeps the 3 copies it has (replicas automatic), one per node: add ssd disks on 1 more node, choose another class, or set replicas: 2"},
		{name: "automatic on nvme's one node: refused, not one copy", class: "nvme",
			refused: "device class nvme has disks on only 1 node; the pool keeps at least 2 copies on a class (replicas automatic), one per node: add nvme disks on 1 more node, choose another class, or set replicas: 1"},
		{name: "three asked on nvme's one node: refused", class: "nvme", requested: ptrTo[int32](3),
			refused: "device class nvme has disks on only 1 node; the pool keeps 3 copies (replicas: 3), one per node: add nvme disks on 2 more nodes, or choose another class"},
		{name: "one asked on nvme's one node: one copy", class: "nvme", requested: ptrTo[int32](1),
			want: Replication{Size: 1, FailureDomain: "osd", Nodes: 1, DeviceClass: "nvme"}},
		{name: "a class on one node of a one-node cluster is refused too", class: "hdd", tiers: one,
			refused: "device class hdd has disks on only 1 node; the pool keeps at least 2 copies on a class"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on := tiers
			if tc.tiers != (Tiers{}) {
				on = tc.tiers
			}
			got, err := TierReplication(tc.requested, tc.have, tc.class, on)
			if tc.refused != "" {
				var refused *TooFewNodesOfClassError
				require.ErrorAs(t, err, &refused)
				assert.ErrorContains(t, err, tc.refused)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("a class without disks is refused, naming the classes there are", func(t *testing.T) {
		_, err := TierReplication(nil, 0, "nvme", TiersOf(pointers(mixed()[1:])))
		var noClass *NoDisksOfClassError
		require.ErrorAs(t, err, &noClass)
		assert.EqualError(t, err, "no DiskPool contributes disks of class nvme (classes with disks: ssd (2 nodes), hdd (3 nodes)): add nvme disks to a DiskPool, or choose another class")
	})
	t.Run("no disks at all is ErrNoDisks", func(t *testing.T) {
		_, err := TierReplication(nil, 0, "ssd", Tiers{})
		assert.ErrorIs(t, err, ErrNoDisks)
	})
}

// Place names the consumer and the pools a refusal is about, and sizes a
// class against what the Rook object's pools hold now.
func TestPlaceRefusesWhatAClassWouldShrink(t *testing.T) {
	tiers := TiersOf(pointers(mixed()))
	three := Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true}
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Spec: cephv1alpha1.BlockStorageSpec{DeviceClass: "ssd"}}
	_, err := blockStorageKind.Place(bs, tiers, Placement{Data: three, Metadata: three})
	assert.EqualError(t, err, "device class ssd has disks on only 2 nodes; BlockStorage fast keeps the 3 copies it has (replicas automatic), one per node: add ssd disks on 1 more node, choose another class, or set replicas: 2")
	place, err := blockStorageKind.Place(bs, tiers, Placement{})
	require.NoError(t, err, "new, it takes ssd's two nodes")
	assert.Equal(t, int32(2), place.Data.Size)

	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "files"},
		Spec: cephv1alpha1.FileStorageSpec{DeviceClass: "hdd", MetadataDeviceClass: "ssd"}}
	_, err = fileStorageKind.Place(fs, tiers, Placement{Data: three, Metadata: three})
	assert.ErrorContains(t, err, "FileStorage files's metadata keeps the 3 copies it has")
	place, err = fileStorageKind.Place(fs, tiers, Placement{Data: three, Metadata: Replication{Size: 2}})
	require.NoError(t, err, "metadata with its own two copies on ssd keeps them")
	assert.Equal(t, Placement{Data: Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 3, DeviceClass: "hdd"},
		Metadata: Replication{Size: 2, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 2, DeviceClass: "ssd"}}, place)
}

func TestMetadataReplication(t *testing.T) {
	tiers := TiersOf(pointers(mixed()))
	place := func(requested *int32, class cephv1alpha1.DiskType) Replication {
		r, err := TierReplication(requested, 0, class, tiers)
		require.NoError(t, err)
		return r
	}
	tests := []struct {
		name      string
		requested *int32
		data      cephv1alpha1.DiskType
		explicit  cephv1alpha1.DiskType
		want      cephv1alpha1.DiskType
		wantSize  int32
	}{
		{name: "no class: as the data, on every OSD", data: "", want: "", wantSize: 3},
		{name: "hdd data, three copies: no faster class has three hosts, so hdd", data: "hdd", want: "hdd", wantSize: 3},
		{name: "hdd data, two copies asked: ssd has two hosts", data: "hdd", requested: ptrTo[int32](2), want: "ssd", wantSize: 2},
		{name: "hdd data, one copy asked: nvme holds it", data: "hdd", requested: ptrTo[int32](1), want: "nvme", wantSize: 1},
		{name: "ssd data: nvme's one host is weaker, so ssd", data: "ssd", want: "ssd", wantSize: 2},
		{name: "the consumer's own choice wins", data: "hdd", explicit: "ssd", want: "ssd", wantSize: 2},
		{name: "a metadata class without data class", data: "", explicit: "hdd", want: "hdd", wantSize: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := place(tc.requested, tc.data)
			got, err := MetadataReplication(data, tc.requested, 0, tc.explicit, tiers)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.DeviceClass)
			assert.Equal(t, tc.wantSize, got.Size)
			if tc.explicit == "" {
				assert.True(t, atLeast(got, data), "metadata never weaker than its data: %+v vs %+v", got, data)
			}
		})
	}
	t.Run("an explicit class without disks is refused", func(t *testing.T) {
		_, err := MetadataReplication(place(nil, "hdd"), nil, 0, "nvme", TiersOf(pointers(mixed()[1:])))
		var noClass *NoDisksOfClassError
		assert.ErrorAs(t, err, &noClass)
	})
	t.Run("an explicit class on fewer nodes than the metadata's copies is refused", func(t *testing.T) {
		_, err := MetadataReplication(place(nil, "hdd"), nil, 3, "ssd", tiers)
		var few *TooFewNodesOfClassError
		require.ErrorAs(t, err, &few)
		assert.Equal(t, TooFewNodesOfClassError{Class: "ssd", Nodes: 2, Copies: 3, Why: CopiesHeld}, *few)
	})
	t.Run("automatic metadata with three copies never goes to a class of two nodes", func(t *testing.T) {
		data := place(nil, "ssd") // two copies on ssd's two nodes
		got, err := MetadataReplication(data, nil, 3, "", tiers)
		require.NoError(t, err)
		assert.Equal(t, cephv1alpha1.DiskType("hdd"), got.DeviceClass)
		assert.Equal(t, int32(3), got.Size)
	})
	t.Run("automatic metadata that no class holds is refused", func(t *testing.T) {
		ssdOnly := TiersOf(pointers([]cephv1alpha1.Disk{typed(available("a-ssd", "node-a", 2), "ssd"), typed(available("b-ssd", "node-b", 2), "ssd")}))
		data, err := TierReplication(nil, 2, "ssd", ssdOnly)
		require.NoError(t, err)
		_, err = MetadataReplication(data, nil, 3, "", ssdOnly)
		assert.ErrorContains(t, err, "device class ssd has disks on only 2 nodes; the pool keeps the 3 copies it has")
	})
}

// Every object store that chooses a class puts its metadata pools, and so
// the .rgw.root they share, on the same class, sized as automatic sizing
// over every node says.
func TestSharedMetadataReplication(t *testing.T) {
	three := TiersOf(pointers(append(mixed(), typed(available("c-ssd", "node-c", 2), "ssd"))))
	for _, class := range []cephv1alpha1.DiskType{"hdd", "ssd", "nvme"} {
		data, err := TierReplication(ptrTo[int32](1), 0, class, three)
		if class == "nvme" {
			require.NoError(t, err)
		}
		got, err := SharedMetadataReplication(data, three)
		require.NoError(t, err)
		assert.Equal(t, Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true, Nodes: 3, DeviceClass: "ssd"}, got,
			"%s data: the fastest class on every node, whatever the store's data", class)
	}
	data, err := TierReplication(nil, 0, "hdd", TiersOf(pointers(mixed())))
	require.NoError(t, err)
	got, err := SharedMetadataReplication(data, TiersOf(pointers(mixed())))
	require.NoError(t, err)
	assert.Equal(t, cephv1alpha1.DiskType("hdd"), got.DeviceClass, "ssd on two of three nodes would weaken them")
	none, err := TierReplication(nil, 0, "", TiersOf(pointers(mixed())))
	require.NoError(t, err)
	got, err = SharedMetadataReplication(none, TiersOf(pointers(mixed())))
	require.NoError(t, err)
	assert.Equal(t, none, got, "a store without a class keeps its metadata on every OSD")

	one := TiersOf(pointers(mixed()[:3])) // node-a alone
	data, err = TierReplication(ptrTo[int32](1), 0, "hdd", one)
	require.NoError(t, err)
	got, err = SharedMetadataReplication(data, one)
	require.NoError(t, err)
	assert.Equal(t, Replication{Size: 1, FailureDomain: "osd", Nodes: 1, DeviceClass: "nvme"}, got,
		"on one node automatic over every node is one copy, as without a class: the class holds it, it does not lower it")
}

func TestDescribeReplicationChangeOfClass(t *testing.T) {
	hdd := Replication{Size: 3, FailureDomain: "host", DeviceClass: "hdd"}
	ssd := Replication{Size: 2, FailureDomain: "host", DeviceClass: "ssd"}
	tests := []struct {
		name        string
		old         Placed
		next        Placement
		specChanged bool
		reason      string
		message     string
	}{
		{name: "a class chosen moves the data onto its OSDs", old: Placed{Size: 3, FailureDomain: "host"}, next: samePlacement(hdd), specChanged: true,
			reason:  ReasonSpecChanged,
			message: "replication changes from 3 (host) to 3 (host, hdd): Rook gives it a new CRUSH rule and Ceph moves every byte in it from every OSD to the hdd OSDs"},
		{name: "another class, on fewer nodes", old: Placed{Size: 3, FailureDomain: "host", DeviceClass: "hdd", MetadataClass: "hdd"}, next: samePlacement(ssd), specChanged: true,
			reason:  ReasonSpecChanged,
			message: "replication changes from 3 (host, hdd) to 2 (host, ssd): Ceph drops the extra copies, and Rook gives it a new CRUSH rule and Ceph moves every byte in it from the hdd OSDs to the ssd OSDs"},
		{name: "the class dropped", old: Placed{Size: 2, FailureDomain: "host", DeviceClass: "ssd", MetadataClass: "ssd"}, next: samePlacement(Replication{Size: 2, FailureDomain: "host"}), specChanged: true,
			reason:  ReasonSpecChanged,
			message: "replication changes from 2 (host, ssd) to 2 (host): Rook gives it a new CRUSH rule and Ceph moves every byte in it from the ssd OSDs to every OSD"},
		{name: "metadata moving to a faster class that appeared", old: Placed{Size: 3, FailureDomain: "host", DeviceClass: "hdd", MetadataClass: "hdd"},
			next:    Placement{Data: hdd, Metadata: Replication{Size: 3, FailureDomain: "host", DeviceClass: "ssd"}},
			reason:  ReasonNodesJoined,
			message: "replication changes from 3 (host, hdd) to 3 (host, hdd): Ceph moves its metadata from the hdd OSDs to the ssd OSDs"},
		{name: "metadata back to its data's class when the faster one shrank", old: Placed{Size: 3, FailureDomain: "host", DeviceClass: "hdd", MetadataClass: "ssd"},
			next:    samePlacement(hdd),
			reason:  ReasonNodesLeft,
			message: "Ceph moves its metadata from the ssd OSDs to the hdd OSDs"},
		{name: "unchanged, class and all", old: Placed{Size: 2, FailureDomain: "host", DeviceClass: "ssd", MetadataClass: "ssd"}, next: samePlacement(ssd)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, message := DescribeReplicationChange(tc.old, tc.next, tc.specChanged)
			assert.Equal(t, tc.reason, reason)
			if tc.message == "" {
				assert.Empty(t, message)
			} else {
				assert.Contains(t, message, tc.message)
			}
		})
	}
}

func TestCrushRulesPerPoolWithClasses(t *testing.T) {
	tests := []struct {
		placements []string
		want       int
	}{
		{[]string{"host~ssd"}, 1},                         // made with its class: stays on the rule named after it
		{[]string{"host~ssd", "host~hdd"}, 2},             // <pool>_host_hdd beside it
		{[]string{"host~ssd", "host~hdd", "host~ssd"}, 3}, // back: <pool>_host_ssd is new
		{[]string{"host", "host~ssd"}, 3},                 // <pool>, <pool>_host, <pool>_host_ssd
		{[]string{"osd~nvme", "host~nvme"}, 2},            // a domain change on the class: <pool>_host_nvme
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, CrushRulesPerPool(tc.placements), "%v", tc.placements)
	}
}

func TestPoolsOfWithClasses(t *testing.T) {
	fs := PoolsOf(ConsumerBudget{Kind: "FileStorage", Size: 2, DeviceClass: "hdd", MetadataClass: "ssd",
		FailureDomains: []string{"host~hdd"}, MetadataFailureDomains: []string{"host~ssd"}})
	assert.Equal(t, 2, fs.CrushRules, "each pool made on its class keeps the rule named after it")
	assert.Equal(t, 64, fs.byClass.of("hdd"))
	assert.Equal(t, 64, fs.byClass.of("ssd"))
	assert.Equal(t, 0, fs.byClass.of(""))
	store := PoolsOf(ConsumerBudget{Kind: "ObjectStorage", Size: 1, MetadataSize: 3, DeviceClass: "hdd", MetadataClass: "nvme"})
	assert.Equal(t, 32, store.byClass.of("hdd"))
	assert.Equal(t, 6*8*3, store.byClass.of("nvme"))
}

// PGs on a class land on that class's OSDs only: a tier of few OSDs fills
// while the others have room, and a pool on every OSD loads each tier by
// its share.
func TestCheckBudgetPerClass(t *testing.T) {
	limits := CephBudgetLimits(CephDefaultMaxPGPerOSD)
	// 3 hosts: 1 nvme OSD, 30 hdd OSDs (31 in all).
	var disks []cephv1alpha1.Disk
	disks = append(disks, typed(available("nvme", "node-a", 1), "nvme"))
	for i := range 30 {
		disks = append(disks, typed(available(fmt.Sprintf("hdd-%d", i), fmt.Sprintf("node-%d", i%3), 1), "hdd"))
	}
	tiers := TiersOf(pointers(disks))
	onNVMe := func(n int) []ConsumerBudget {
		var out []ConsumerBudget
		for i := range n {
			out = append(out, ConsumerBudget{Kind: "BlockStorage", Name: fmt.Sprintf("fast-%d", i), Size: 1, DeviceClass: "nvme", FailureDomains: []string{"osd~nvme"}})
		}
		return out
	}
	// One nvme OSD: each pool puts 32 PG copies on it; grown, 134 more.
	fits := CheckBudget(onNVMe(17), ConsumerBudget{Kind: "BlockStorage", Name: "fast-new", Size: 1, DeviceClass: "nvme"}, 31, tiers, limits)
	assert.False(t, fits.Refused(), fits.Message)
	refused := CheckBudget(onNVMe(19), ConsumerBudget{Kind: "BlockStorage", Name: "fast-new", Size: 1, DeviceClass: "nvme"}, 31, tiers, limits)
	assert.Equal(t, "placement groups per OSD", refused.Budget)
	assert.Contains(t, refused.Message, "would bring placement groups to 640 per OSD over 1 nvme OSD")
	onHDD := CheckBudget(onNVMe(19), ConsumerBudget{Kind: "BlockStorage", Name: "slow", Size: 3, DeviceClass: "hdd"}, 31, tiers, limits)
	assert.False(t, onHDD.Refused(), "the hdd OSDs have room the nvme one has not: %s", onHDD.Message)
	assert.Empty(t, onHDD.Warning, "the nvme OSD's load is the older consumers', not the newcomer's")
}

// metadataClassCase is one of testdata/metadata-class-cases.json, which the
// console's tiers.js placeMetadata decides too (internal/devconsole
// TestTiersInBrowser): the pool sheets compare it before and after an edit.
type metadataClassCase struct {
	Name string
	Kind string
	Spec struct {
		Replicas                         *int32
		DeviceClass, MetadataDeviceClass cephv1alpha1.DiskType
	}
	Held struct {
		Replicas, MetadataReplicas int32
	}
	Disks map[cephv1alpha1.DiskType][]string
	Want  *struct {
		MetadataClass    cephv1alpha1.DiskType
		MetadataReplicas int32
	}
}

// Where a FileStorage's or an ObjectStorage's metadata goes over the
// DiskPools' disks, as the console says it before a pool edit is saved.
func TestMetadataClassCases(t *testing.T) {
	raw, err := os.ReadFile("testdata/metadata-class-cases.json")
	require.NoError(t, err)
	var file struct{ Cases []metadataClassCase }
	require.NoError(t, json.Unmarshal(raw, &file))
	require.NotEmpty(t, file.Cases)
	for _, tc := range file.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			var disks []*cephv1alpha1.Disk
			for class, nodes := range tc.Disks {
				for _, node := range nodes {
					disks = append(disks, &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: string(class) + "-" + node},
						Status: cephv1alpha1.DiskStatus{NodeName: node, Type: class}})
				}
			}
			var (
				consumer consumerObject
				kind     consumerKind
			)
			switch tc.Kind {
			case "FileStorage":
				kind = fileStorageKind
				consumer = &cephv1alpha1.FileStorage{Spec: cephv1alpha1.FileStorageSpec{Replicas: tc.Spec.Replicas,
					DeviceClass: tc.Spec.DeviceClass, MetadataDeviceClass: tc.Spec.MetadataDeviceClass}}
			case "ObjectStorage":
				kind = objectStorageKind
				consumer = &cephv1alpha1.ObjectStorage{Spec: cephv1alpha1.ObjectStorageSpec{Replicas: tc.Spec.Replicas, DeviceClass: tc.Spec.DeviceClass}}
			default:
				t.Fatalf("kind %q", tc.Kind)
			}
			held := Placement{Data: Replication{Size: tc.Held.Replicas}, Metadata: Replication{Size: tc.Held.MetadataReplicas}}
			got, err := kind.Place(consumer, TiersOf(disks), held)
			if tc.Want == nil {
				assert.Error(t, err, "refused")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.Want.MetadataClass, got.Metadata.DeviceClass)
			assert.Equal(t, tc.Want.MetadataReplicas, got.Metadata.Size)
		})
	}
}
