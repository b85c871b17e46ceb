package main

import (
	"fmt"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestConsumerPreconditions(t *testing.T) {
	const uid = types.UID("consumer-uid")
	ours := []metav1.OwnerReference{{UID: uid, Controller: ptrTo(true)}}
	theirs := []metav1.OwnerReference{{UID: "someone-else", Controller: ptrTo(true)}}
	pool := func(owners []metav1.OwnerReference) *cephv1.CephBlockPool {
		return &cephv1.CephBlockPool{ObjectMeta: metav1.ObjectMeta{Namespace: "rook-ceph", Name: "ceph-fast", OwnerReferences: owners}}
	}
	class := func(owners []metav1.OwnerReference) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "ceph-fast", OwnerReferences: owners}}
	}
	ready := consumerInput{uid: uid, nodes: 2, rookKind: "CephBlockPool"}
	with := func(edit func(*consumerInput)) consumerInput {
		in := ready
		edit(&in)
		return in
	}
	cases := []struct {
		name       string
		in         consumerInput
		wantReason string // "" when every check passes
		wantIn     string
	}{
		{"nothing in the way: every check passes", ready, "", ""},
		{"derived objects that are ours pass", with(func(in *consumerInput) { in.rook, in.class = pool(ours), class(ours) }), "", ""},
		{"a class without disks is refused before anything is written", with(func(in *consumerInput) {
			in.placeErr = &NoDisksOfClassError{Class: "nvme", Tiers: tiersWith(Tier{Nodes: 2, OSDs: 2}, Tier{Class: "hdd", Nodes: 2, OSDs: 2})}
		}), ReasonNoDisksOfClass, "no DiskPool contributes disks of class nvme (classes with disks: hdd (2 nodes))"},
		{"a class on too few nodes for the copies is refused before anything is written", with(func(in *consumerInput) {
			in.rook = pool(ours)
			in.placeErr = &TooFewNodesOfClassError{Class: "nvme", Nodes: 1, Copies: 3, Why: CopiesAsked, Pools: "BlockStorage fast"}
		}), ReasonTooFewNodesOfClass, "device class nvme has disks on only 1 node; BlockStorage fast keeps 3 copies (replicas: 3)"},
		{"a missing CephCluster comes first", with(func(in *consumerInput) {
			in.clusterMissing, in.nodes, in.rook = fmt.Errorf("CephCluster rook-ceph/rook-ceph not found"), 0, pool(theirs)
		}), ReasonNoCephCluster, "not found: nothing can be provisioned"},
		{"no contributing node", with(func(in *consumerInput) { in.nodes = 0 }), ReasonNoDisks, ErrNoDisks.Error()},
		{"no node comes before a foreign object", with(func(in *consumerInput) { in.nodes, in.class = 0, class(theirs) }), ReasonNoDisks, ""},
		{"a Rook object someone else controls", with(func(in *consumerInput) { in.rook = pool(theirs) }), ReasonForeignObject, "CephBlockPool rook-ceph/ceph-fast already exists and is not owned by this resource"},
		{"a Rook object with no controller is foreign too", with(func(in *consumerInput) { in.rook = pool(nil) }), ReasonForeignObject, "CephBlockPool rook-ceph/ceph-fast"},
		{"a StorageClass someone else controls", with(func(in *consumerInput) { in.rook, in.class = pool(ours), class(theirs) }), ReasonForeignObject, "StorageClass ceph-fast already exists"},
		{"a new consumer over Ceph's budgets", with(func(in *consumerInput) {
			in.budget = BudgetVerdict{Budget: "CRUSH rules", Message: "BlockStorage fast needs 1 CRUSH rules; 256 of Ceph's 256 are used"}
		}), ReasonOverBudget, "256 of Ceph's 256 are used"},
		{"one whose Rook object exists keeps its place", with(func(in *consumerInput) {
			in.rook, in.budget = pool(ours), BudgetVerdict{Budget: "CRUSH rules", Message: "full"}
		}), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason, message, failed := firstFailure(tc.in, consumerPreconditions)
			assert.Equal(t, tc.wantReason != "", failed, "failed")
			assert.Equal(t, tc.wantReason, reason)
			assert.Contains(t, message, tc.wantIn)
		})
	}
}

// Every reason a precondition gives is one of the declared constants.
func TestPreconditionReasonsAreConstants(t *testing.T) {
	declared := map[string]bool{ReasonNoCephCluster: true, ReasonNoDisks: true, ReasonNoDisksOfClass: true, ReasonTooFewNodesOfClass: true, ReasonForeignObject: true, ReasonOverBudget: true}
	overBudget := BudgetVerdict{Budget: "CRUSH rules", Message: "no room"}
	for _, p := range consumerPreconditions {
		// Every input that can fail some check; the budget applies to a
		// consumer without a Rook object.
		withRook := consumerInput{uid: "u", clusterMissing: fmt.Errorf("gone"), rook: &cephv1.CephBlockPool{}, class: &storagev1.StorageClass{}, budget: overBudget,
			placeErr: &NoDisksOfClassError{Class: "nvme"}}
		withoutRook := withRook
		withoutRook.rook = nil
		reason, _, failed := p.check(withRook)
		if !failed {
			reason, _, failed = p.check(withoutRook)
		}
		assert.True(t, failed, p.name)
		assert.True(t, declared[reason], "%s gives %q", p.name, reason)
	}
}
