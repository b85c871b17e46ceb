package main

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// Condition types a consumer reports besides Ready.
const (
	// ConditionReplicationChanged records the last change of the pools'
	// size or failure domain, its reason what caused it (ReasonSpecChanged,
	// ReasonNodesJoined, ReasonNodesLeft).
	ConditionReplicationChanged = "ReplicationChanged"
	// ConditionDefaultClass says whether a BlockStorage that asks for the
	// cluster's default StorageClass holds it.
	ConditionDefaultClass = "DefaultClass"
	// ConditionCephWarning, True, says what Ceph warns of because of the
	// consumer's pools beside the older consumers' (reason
	// ReasonTooManyPGs; CheckBudget): Ceph makes them all the same. Absent
	// when nothing; checked at every reconcile, so disks added clear it.
	ConditionCephWarning = "CephWarning"
)

// Reasons of a consumer's Ready condition.
const (
	ReasonReady             = "Ready"
	ReasonProvisioning      = "Provisioning"
	ReasonNoDisks           = "NoDisks"
	ReasonNoDisksOfClass    = "NoDisksOfClass"
	ReasonForeignObject     = "ForeignObject"
	ReasonStorageClassDrift = "StorageClassDrift"
	ReasonReconcileError    = "ReconcileError"
	ReasonRookFailed        = "RookFailed"
	ReasonOverBudget        = "OverBudget"
)

// ReasonTooFewNodesOfClass is the Ready reason of a consumer whose device
// class's nodes cannot hold its copies one per node
// (TooFewNodesOfClassError): nothing is written, its pools stay as they are.
const ReasonTooFewNodesOfClass = "TooFewNodesOfClass"

// EventReason is the reason of an Event the core reconcilers write; the
// retirement's Events take its phase as their reason, the upgrade's are
// upgrade.EventReason.
type EventReason string

// The core's Event reasons.
const (
	// EventReplicationChanged: a consumer's pools were resized, which moves
	// data (DescribeReplicationChange says why).
	EventReplicationChanged EventReason = "ReplicationChanged"
	// EventMetadataTierMoved: the plugin moved a FileStorage's or an
	// ObjectStorage's metadata pools to another device class
	// (MetadataTierMove says which, from and to what, and why).
	EventMetadataTierMoved EventReason = "MetadataTierMoved"
	// EventTooManyPGs: the consumer's pools take Ceph over its PGs per
	// OSD, as the CephWarning condition (ReasonTooManyPGs) says.
	EventTooManyPGs EventReason = ReasonTooManyPGs
	// EventSnapshotClassRestored: someone edited the VolumeSnapshotClass
	// the plugin derives, and it was put back.
	EventSnapshotClassRestored EventReason = "SnapshotClassRestored"
	// EventMalformedDiscovery and EventUnknownNode: a discovery ConfigMap
	// the inventory could not read, or that names no Node of the cluster.
	EventMalformedDiscovery EventReason = "MalformedDiscovery"
	EventUnknownNode        EventReason = "UnknownNode"
	// EventOSDClassMismatch: the OSD on a Disk has a device class other
	// than the Disk's type (ClassMismatch says what that means).
	EventOSDClassMismatch EventReason = "OSDClassMismatch"
)

// ReasonTooManyPGs is the CephWarning condition's reason: the PGs per OSD
// pass mon_max_pg_per_osd, now or once the autoscaler grows the pools, and
// Ceph reports TOO_MANY_PGS.
const ReasonTooManyPGs = "TooManyPGs"

// Reasons of a consumer's DefaultClass condition.
const (
	ReasonDefaultClassHeld        = "Held"
	ReasonDefaultClassHeldByOlder = "HeldByOlder"
)

// consumerOutcome is what one reconcile of a consumer concluded.
type consumerOutcome struct {
	Phase   cephv1alpha1.StoragePhase
	Reason  string
	Message string
	// Replication is set once the consumer has been sized: its data
	// pool's, device class included.
	Replication *Replication
	// Metadata is the replication of the metadata pools of a kind that
	// has them, once placed: their device class and copies.
	Metadata *Replication
	// StorageClassName is set once the class is known to be ours.
	StorageClassName string
	// ReplicationChange, when not empty, describes a change of the pools'
	// size or failure domain (DescribeReplicationChange), and
	// ReplicationChangeReason what caused it.
	ReplicationChange       string
	ReplicationChangeReason string
	// CephWarning is what Ceph warns of because of the consumer's pools
	// (BudgetVerdict.Warning), "" for nothing; nil when not checked (a
	// precondition failed first): the condition keeps its state.
	CephWarning *string
	// Capacity and CephBudget are set once the Rook object is written.
	Capacity   *cephv1alpha1.ConsumerCapacity
	CephBudget *cephv1alpha1.CephBudgetUse
	// SnapshotClass is nil for a kind without one, and when the reconcile
	// did not get that far: the condition keeps its state.
	SnapshotClass *snapshotClassOutcome
	// DefaultClass is nil unless the consumer asks for the default class;
	// then it says whether it holds it and, if not, why.
	DefaultClass *defaultClassOutcome
}

type defaultClassOutcome struct {
	Held    bool
	Message string
}

// consumerStatus is the status an outcome yields for the spec at
// generation. Fields the outcome does not decide keep their previous value,
// and conditions keep their lastTransitionTime unless their status flips,
// so the same outcome twice yields the same status and costs no write.
func consumerStatus(prev cephv1alpha1.StorageStatus, out consumerOutcome, generation int64, now time.Time) cephv1alpha1.StorageStatus {
	next := *prev.DeepCopy()
	next.Phase = out.Phase
	next.Message = message.Bound(out.Message)
	next.ObservedGeneration = generation
	if out.StorageClassName != "" {
		next.StorageClassName = out.StorageClassName
	}
	if out.Replication != nil {
		next.Replicas = out.Replication.Size
		next.FailureDomain = out.Replication.FailureDomain
		next.DeviceClass = out.Replication.DeviceClass
	}
	if out.Metadata != nil {
		next.MetadataDeviceClass = out.Metadata.DeviceClass
		next.MetadataReplicas = out.Metadata.Size
	}
	if out.Capacity != nil {
		next.Capacity = out.Capacity
	}
	if out.CephBudget != nil {
		next.CephBudget = out.CephBudget
	}
	ready := metav1.Condition{
		Type:               cephv1alpha1.ConditionReady,
		Status:             metav1.ConditionFalse,
		Reason:             out.Reason,
		Message:            next.Message,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	}
	if out.Phase == cephv1alpha1.StorageReady {
		ready.Status = metav1.ConditionTrue
	}
	if ready.Message == "" {
		ready.Message = string(out.Phase)
	}
	meta.SetStatusCondition(&next.Conditions, ready)
	if out.ReplicationChange != "" {
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{
			Type:               ConditionReplicationChanged,
			Status:             metav1.ConditionTrue,
			Reason:             out.ReplicationChangeReason,
			Message:            message.Bound(out.ReplicationChange),
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	switch {
	case out.CephWarning == nil:
	case *out.CephWarning == "":
		meta.RemoveStatusCondition(&next.Conditions, ConditionCephWarning)
	default:
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{
			Type:               ConditionCephWarning,
			Status:             metav1.ConditionTrue,
			Reason:             ReasonTooManyPGs,
			Message:            message.Bound(*out.CephWarning),
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	if s := out.SnapshotClass; s != nil {
		next.SnapshotClassName = s.Name
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{
			Type:               ConditionSnapshotClass,
			Status:             s.Status,
			Reason:             s.Reason,
			Message:            message.Bound(s.Message),
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		})
	}
	if out.DefaultClass != nil {
		cond := metav1.Condition{
			Type:               ConditionDefaultClass,
			Status:             metav1.ConditionTrue,
			Reason:             ReasonDefaultClassHeld,
			Message:            "the StorageClass is the cluster default",
			ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(now),
		}
		if !out.DefaultClass.Held {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonDefaultClassHeldByOlder, message.Bound(out.DefaultClass.Message)
		}
		meta.SetStatusCondition(&next.Conditions, cond)
	} else {
		meta.RemoveStatusCondition(&next.Conditions, ConditionDefaultClass)
	}
	return next
}
