package rook

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fundament-oss/ceph-rook/internal/message"
	crhelper "github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
)

// Reasons Rook gives its reconcile Events (pkg/operator/ceph/reporting,
// ReportReconcileResult): a Warning "ReconcileFailed" with the error after
// every failed reconcile, a Normal "ReconcileSucceeded" after a good one.
// They are the only place Rook v1.18 says why: a failing CephBlockPool,
// CephFilesystem or CephObjectStore shows phase "Failure", and
// "Progressing" while it retries.
const (
	reconcileFailed    = "ReconcileFailed"
	reconcileSucceeded = "ReconcileSucceeded"
)

// Reporter is the component Rook's controller for a kind reports its
// Events as: each controller's recorder is named "rook-" + its
// controllerName (pkg/operator/ceph/pool, file and object, controller.go,
// mgr.GetEventRecorderFor), which client-go's recorder writes to both
// source.component and reportingComponent (seen so on the e2e cluster).
func Reporter(rookKind string) string { return reporters[rookKind] }

var reporters = map[string]string{
	"CephBlockPool":   "rook-ceph-block-pool-controller",
	"CephFilesystem":  "rook-ceph-file-controller",
	"CephObjectStore": "rook-ceph-object-controller",
}

// Failure is why Rook last failed to reconcile the object uid, read
// from the Events reporter (Reporter) wrote about it: the message of
// the newest ReconcileFailed Event, unless a ReconcileSucceeded came after
// it. ok is false when no Event says (they expire after an hour, and Rook
// may not have written one yet). Events from anyone else are not Rook's
// word (anyone who may create Events in the namespace could otherwise put
// text into a consumer's status, or hide a failure behind a success), and
// the message is cleaned and bounded as discovery's text is before it
// reaches a status and the console.
func Failure(events []corev1.Event, uid types.UID, reporter string) (why string, ok bool) {
	if reporter == "" {
		return "", false // not a kind Rook reports on
	}
	var failed, succeeded time.Time
	for i := range events {
		e := &events[i]
		if e.InvolvedObject.UID != uid || eventReporter(e) != reporter {
			continue
		}
		at := eventLastSeen(e)
		switch {
		case e.Type == corev1.EventTypeWarning && e.Reason == reconcileFailed && !at.Before(failed):
			failed, why = at, e.Message
		case e.Reason == reconcileSucceeded && at.After(succeeded):
			succeeded = at
		}
	}
	why = crhelper.BoundNote(strings.TrimSpace(message.Printable(why)))
	if why == "" || succeeded.After(failed) {
		return "", false
	}
	return why, true
}

// eventReporter is the component that reported e: reportingComponent,
// else (an Event written before that field) source.component.
func eventReporter(e *corev1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.Source.Component
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
