package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pool is a DiskPool created minutesAfter the epoch, listing disks.
func pool(name string, minutesAfter int, disks ...string) cephv1alpha1.DiskPool {
	return cephv1alpha1.DiskPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(minutesAfter) * time.Minute))},
		Spec:       cephv1alpha1.DiskPoolSpec{Disks: disks},
	}
}

func deleting(p cephv1alpha1.DiskPool) cephv1alpha1.DiskPool {
	now := metav1.NewTime(epoch.Add(time.Hour))
	p.DeletionTimestamp = &now
	return p
}

func TestClaimOwners(t *testing.T) {
	cases := []struct {
		name  string
		pools []cephv1alpha1.DiskPool
		want  map[string]string
	}{
		{
			name:  "an uncontested disk belongs to the pool listing it",
			pools: []cephv1alpha1.DiskPool{pool("a", 0, "d1"), pool("b", 1, "d2")},
			want:  map[string]string{"d1": "a", "d2": "b"},
		},
		{
			name:  "the older pool keeps a contested disk even when listed second",
			pools: []cephv1alpha1.DiskPool{pool("young", 5, "d1", "d2"), pool("old", 1, "d1")},
			want:  map[string]string{"d1": "old", "d2": "young"},
		},
		{
			name:  "pools of the same age break the tie on name",
			pools: []cephv1alpha1.DiskPool{pool("zeta", 0, "d1"), pool("alpha", 0, "d1")},
			want:  map[string]string{"d1": "alpha"},
		},
		{
			name:  "a pool being deleted owns nothing and frees its disks for the next pool",
			pools: []cephv1alpha1.DiskPool{deleting(pool("old", 0, "d1")), pool("young", 3, "d1")},
			want:  map[string]string{"d1": "young"},
		},
		{
			name:  "no pools, no owners",
			pools: nil,
			want:  map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ClaimOwners(tc.pools))
			// One node's disks get the same answer, and only theirs.
			only := map[string]bool{"d1": true, "unlisted": true}
			want := map[string]string{}
			for disk, owner := range tc.want {
				if only[disk] {
					want[disk] = owner
				}
			}
			assert.Equal(t, want, ClaimOwnersOf(tc.pools, only))
		})
	}
}

func TestClaimOwnersDoesNotReorderItsInput(t *testing.T) {
	pools := []cephv1alpha1.DiskPool{pool("b", 2, "d"), pool("a", 1, "d")}
	ClaimOwners(pools)
	assert.Equal(t, "b", pools[0].Name)
}

// A thousand pools contesting a thousand disks each: one pass over sorted
// pools decides them (BenchmarkClaimOwners measures it).
func TestClaimOwnersAtScale(t *testing.T) {
	owners := ClaimOwners(contestedPools(1000, 1000))
	assert.Len(t, owners, 1000)
	assert.Equal(t, "pool-0999", owners["disk-0"], "the pool created first wins")
	assert.Equal(t, map[string]string{"disk-7": "pool-0999"}, ClaimOwnersOf(contestedPools(1000, 1000), map[string]bool{"disk-7": true}))
}

// contestedPools are pools pools each listing the same disks disks, the
// last created first.
func contestedPools(pools, disks int) []cephv1alpha1.DiskPool {
	names := make([]string, disks)
	for i := range names {
		names[i] = fmt.Sprintf("disk-%d", i)
	}
	out := make([]cephv1alpha1.DiskPool, pools)
	for i := range out {
		out[i] = pool(fmt.Sprintf("pool-%04d", i), pools-i, names...)
	}
	return out
}

// BenchmarkClaimOwners: every claimed disk's owner (the union's question),
// the floor, against one node's 20 (the inventory's, once per discovery
// ConfigMap), over 20 pools listing 8,000 of 10,000 disks.
func BenchmarkClaimOwners(b *testing.B) {
	pools := make([]cephv1alpha1.DiskPool, 20)
	for i := range pools {
		var disks []string
		for d := i * 400; d < (i+1)*400; d++ {
			disks = append(disks, fmt.Sprintf("disk-%d", d))
		}
		pools[i] = pool(fmt.Sprintf("pool-%02d", i), i, disks...)
	}
	node := map[string]bool{}
	for d := 4000; d < 4020; d++ {
		node[fmt.Sprintf("disk-%d", d)] = true
	}
	b.Run("every disk", func(b *testing.B) {
		for b.Loop() {
			ClaimOwners(pools)
		}
	})
	b.Run("one node", func(b *testing.B) {
		for b.Loop() {
			ClaimOwnersOf(pools, node)
		}
	})
}

func TestDerivedNames(t *testing.T) {
	assert.Equal(t, "ceph-fast", BlockPoolName("fast"))
	assert.Equal(t, "cephfs-shared", FilesystemName("shared"))
	assert.Equal(t, "cephobj-s3", ObjectStoreName("s3"))
	assert.Equal(t, "ceph-local-path", BlockPoolName("local-path"), "a consumer named like k3d's class cannot take it over")
}

func TestIsControlledBy(t *testing.T) {
	owner := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast", UID: types.UID("uid-1")}}
	ours := metav1.ObjectMeta{Name: "ceph-fast", OwnerReferences: []metav1.OwnerReference{controllerReference(owner, "BlockStorage")}}
	sameNameOtherUID := metav1.ObjectMeta{Name: "ceph-fast", OwnerReferences: []metav1.OwnerReference{
		controllerReference(&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast", UID: "uid-old"}}, "BlockStorage"),
	}}
	notController := metav1.ObjectMeta{Name: "ceph-fast", OwnerReferences: []metav1.OwnerReference{{Name: "fast", UID: "uid-1"}}}

	t.Run("our controller reference by UID is ours", func(t *testing.T) {
		assert.True(t, IsControlledBy(&ours, "uid-1"))
	})
	t.Run("a reference to a same-named owner with another UID is foreign", func(t *testing.T) {
		assert.False(t, IsControlledBy(&sameNameOtherUID, "uid-1"))
	})
	t.Run("an owner reference that is not the controller is foreign", func(t *testing.T) {
		assert.False(t, IsControlledBy(&notController, "uid-1"))
	})
	t.Run("an object without references is foreign", func(t *testing.T) {
		assert.False(t, IsControlledBy(&metav1.ObjectMeta{Name: "ceph-fast"}, "uid-1"))
	})
	t.Run("an owner without a UID owns nothing", func(t *testing.T) {
		assert.False(t, IsControlledBy(&metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: "", Controller: ptrTo(true)}}}, ""))
	})
}

// askingBlock is a BlockStorage created minutesAfter the epoch that asks
// for the default class.
func askingBlock(name string, minutesAfter int) *cephv1alpha1.BlockStorage {
	return &cephv1alpha1.BlockStorage{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(minutesAfter) * time.Minute))},
		Spec:       cephv1alpha1.BlockStorageSpec{Default: true},
	}
}

func TestDefaultClassHolder(t *testing.T) {
	gone := askingBlock("gone", 0)
	gone.DeletionTimestamp = &metav1.Time{Time: epoch.Add(time.Hour)}
	cases := []struct {
		name   string
		askers []*cephv1alpha1.BlockStorage
		want   string // "" when nobody holds it
	}{
		{"nobody asks", nil, ""},
		{"the only asker holds it", []*cephv1alpha1.BlockStorage{askingBlock("a", 5)}, "a"},
		{"the oldest asker holds it, whatever the list order", []*cephv1alpha1.BlockStorage{askingBlock("young", 9), askingBlock("old", 1)}, "old"},
		{"a tie on age goes to the first name", []*cephv1alpha1.BlockStorage{askingBlock("zeta", 1), askingBlock("alpha", 1)}, "alpha"},
		{"an asker being deleted holds nothing", []*cephv1alpha1.BlockStorage{gone, askingBlock("b", 3)}, "b"},
		{"only askers being deleted: nobody holds it", []*cephv1alpha1.BlockStorage{gone}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			holder, ok := DefaultClassHolder(tc.askers)
			if tc.want == "" {
				assert.False(t, ok)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tc.want, holder.Name)
		})
	}
}

// The default class and contested disks are decided by one order: a pool
// and a consumer of the same age and name rank alike.
func TestOlderFirstIsTheClaimsRuleToo(t *testing.T) {
	pools := []cephv1alpha1.DiskPool{pool("zeta", 1, "d"), pool("alpha", 1, "d"), pool("young", 2, "d")}
	assert.Equal(t, "alpha", ClaimOwners(pools)["d"])
	holder, _ := DefaultClassHolder([]*cephv1alpha1.BlockStorage{askingBlock("zeta", 1), askingBlock("alpha", 1), askingBlock("young", 2)})
	assert.Equal(t, "alpha", holder.Name)
}
