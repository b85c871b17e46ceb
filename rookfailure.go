package main

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons Rook gives its reconcile Events (pkg/operator/ceph/reporting,
// ReportReconcileResult): a Warning "ReconcileFailed" with the error after
// every failed reconcile, a Normal "ReconcileSucceeded" after a good one.
// They are the only place Rook v1.18.0 says why: a failing CephBlockPool,
// CephFilesystem or CephObjectStore shows phase "Failure", and
// "Progressing" while it retries.
const (
	rookReconcileFailed    = "ReconcileFailed"
	rookReconcileSucceeded = "ReconcileSucceeded"
)

// RookFailure is why Rook last failed to reconcile the object uid, read
// from Rook's Events about it: the message of the newest ReconcileFailed
// Event, unless a ReconcileSucceeded came after it. ok is false when no
// Event says (they expire after an hour, and Rook may not have written
// one yet).
func RookFailure(events []corev1.Event, uid types.UID) (message string, ok bool) {
	var failed, succeeded time.Time
	for i := range events {
		e := &events[i]
		if e.InvolvedObject.UID != uid {
			continue
		}
		at := eventLastSeen(e)
		switch {
		case e.Type == corev1.EventTypeWarning && e.Reason == rookReconcileFailed && !at.Before(failed):
			failed, message = at, e.Message
		case e.Reason == rookReconcileSucceeded && at.After(succeeded):
			succeeded = at
		}
	}
	if message == "" || succeeded.After(failed) {
		return "", false
	}
	return message, true
}

// eventLastSeen is when an Event last happened: Rook's recorder aggregates
// repeats into one Event whose lastTimestamp moves (core/v1), and the
// newer API keeps it in the series or eventTime.
func eventLastSeen(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
