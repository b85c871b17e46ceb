package main

import (
	"errors"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// consumerInput is everything a consumer's preconditions decide from,
// gathered once per reconcile before anything is written.
type consumerInput struct {
	// uid is the consumer's: the derived objects must be controlled by it.
	uid types.UID
	// clusterMissing is set, with why, when the CephCluster is not there.
	clusterMissing error
	// nodes is how many nodes contribute disks (the union's node count).
	nodes int
	// tiers is the union by device class; place the consumer's pools'
	// placement on them, or placeErr why there is none.
	tiers    Tiers
	place    Placement
	placeErr error
	// rookKind names the kind of rook, for messages.
	rookKind string
	// rook is the same-named Rook object, nil when there is none.
	rook client.Object
	// held is where the pools of our Rook object are now (zero when there
	// is none, or it is not ours): what a device class never lowers, and
	// what a metadata move starts from.
	held Placement
	// class is the same-named StorageClass, nil when there is none.
	class *storagev1.StorageClass
	// budget is what Ceph makes of the consumer beside the older ones: why
	// it does not fit (heeded while it has no Rook object), or what Ceph
	// warns of.
	budget BudgetVerdict
}

// precondition is one named check of a consumer's input: failing, it
// gives the reason and message of the Degraded status (in the manner of
// cert-manager's certificate policies).
type precondition struct {
	name  string
	check func(consumerInput) (reason, message string, failed bool)
}

// consumerPreconditions are checked in order; the first that fails
// decides the status, and nothing is created or patched.
var consumerPreconditions = []precondition{
	{"the CephCluster exists", cephClusterExists},
	{"some node contributes disks", disksContribute},
	{"its device classes have disks on enough nodes", classesHaveDisks},
	{"the Rook object is ours or absent", rookObjectIsOurs},
	{"the StorageClass is ours or absent", storageClassIsOurs},
	{"a new consumer fits Ceph's budgets", fitsCephBudgets},
}

// firstFailure runs the chain: the first failing check's reason and
// message, or failed false when every check passes.
func firstFailure(in consumerInput, chain []precondition) (reason, message string, failed bool) {
	for _, p := range chain {
		if reason, message, failed = p.check(in); failed {
			return reason, message, true
		}
	}
	return "", "", false
}

func cephClusterExists(in consumerInput) (string, string, bool) {
	if in.clusterMissing == nil {
		return "", "", false
	}
	return ReasonNoCephCluster, fmt.Sprintf("%v: nothing can be provisioned until it is back (the plugin does not create it again: a new cluster would not own the OSDs on the disks)", in.clusterMissing), true
}

func disksContribute(in consumerInput) (string, string, bool) {
	if in.nodes > 0 {
		return "", "", false
	}
	return ReasonNoDisks, ErrNoDisks.Error(), true
}

// classesHaveDisks refuses a consumer whose class (or metadata class) no
// DiskPool contributes disks of, or whose class's nodes cannot hold its
// copies (TooFewNodesOfClassError): nothing is written, and a pool that
// exists keeps its rule and size until the class has the disks.
func classesHaveDisks(in consumerInput) (string, string, bool) {
	if in.placeErr == nil {
		return "", "", false
	}
	if errors.As(in.placeErr, new(*TooFewNodesOfClassError)) {
		return ReasonTooFewNodesOfClass, in.placeErr.Error(), true
	}
	return ReasonNoDisksOfClass, in.placeErr.Error(), true
}

func rookObjectIsOurs(in consumerInput) (string, string, bool) {
	if in.rook == nil || IsControlledBy(in.rook, in.uid) {
		return "", "", false
	}
	return ReasonForeignObject, foreignMessage(fmt.Sprintf("%s %s/%s", in.rookKind, in.rook.GetNamespace(), in.rook.GetName())), true
}

func storageClassIsOurs(in consumerInput) (string, string, bool) {
	if in.class == nil || IsControlledBy(in.class, in.uid) {
		return "", "", false
	}
	return ReasonForeignObject, foreignMessage("StorageClass " + in.class.Name), true
}

func foreignMessage(what string) string {
	return what + " already exists and is not owned by this resource; it is left untouched: delete or rename it"
}

// fitsCephBudgets refuses a consumer whose pools Ceph would refuse (CRUSH
// rules, placement groups past the OSDs' hard limit); one whose Rook object
// exists keeps its place whatever comes after it.
func fitsCephBudgets(in consumerInput) (string, string, bool) {
	if in.rook != nil || !in.budget.Refused() {
		return "", "", false
	}
	return ReasonOverBudget, in.budget.Message, true
}
