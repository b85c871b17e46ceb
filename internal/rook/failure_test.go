package rook

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestFailure(t *testing.T) {
	const store types.UID = "store-uid"
	base := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	rook := Reporter("CephObjectStore")
	event := func(uid types.UID, typ, reason, msg string, minute int) corev1.Event {
		return corev1.Event{
			InvolvedObject: corev1.ObjectReference{UID: uid},
			Type:           typ, Reason: reason, Message: msg,
			LastTimestamp:       metav1.NewTime(base.Add(time.Duration(minute) * time.Minute)),
			Source:              corev1.EventSource{Component: rook},
			ReportingController: rook,
		}
	}
	by := func(reporter string, e corev1.Event) corev1.Event {
		e.Source.Component, e.ReportingController = reporter, reporter
		return e
	}
	failed := func(msg string, minute int) corev1.Event {
		return event(store, corev1.EventTypeWarning, "ReconcileFailed", msg, minute)
	}
	succeeded := func(minute int) corev1.Event {
		return event(store, corev1.EventTypeNormal, "ReconcileSucceeded", "successfully configured", minute)
	}
	tests := []struct {
		name   string
		events []corev1.Event
		want   string
		wantOK bool
	}{
		{name: "no events", events: nil},
		{name: "one failure", events: []corev1.Event{failed("period commit refused", 1)}, want: "period commit refused", wantOK: true},
		{name: "the newest failure wins whatever the order",
			events: []corev1.Event{failed("newer", 5), failed("older", 2)}, want: "newer", wantOK: true},
		{name: "a success after the failure clears it",
			events: []corev1.Event{failed("old trouble", 1), succeeded(2)}},
		{name: "a failure after a success counts",
			events: []corev1.Event{succeeded(1), failed("new trouble", 3)}, want: "new trouble", wantOK: true},
		{name: "another object's failure is not this one's",
			events: []corev1.Event{event("other-uid", corev1.EventTypeWarning, "ReconcileFailed", "not mine", 1)}},
		{name: "a Normal event named ReconcileFailed is not a failure",
			events: []corev1.Event{event(store, corev1.EventTypeNormal, "ReconcileFailed", "odd", 1)}},
		{name: "other warnings are not reconcile failures",
			events: []corev1.Event{event(store, corev1.EventTypeWarning, "FailedScheduling", "no node", 1)}},
		{name: "an aggregated series counts from its last observation",
			events: []corev1.Event{
				succeeded(4),
				func() corev1.Event {
					e := failed("still failing", 1)
					e.Series = &corev1.EventSeries{Count: 9, LastObservedTime: metav1.NewMicroTime(base.Add(6 * time.Minute))}
					return e
				}(),
			}, want: "still failing", wantOK: true},
		{name: "a failure someone else reported is not Rook's word",
			events: []corev1.Event{by("intruder", failed("pay here to fix", 1))}},
		{name: "a success someone else reported hides no failure",
			events: []corev1.Event{failed("real trouble", 1), by("intruder", succeeded(2))}, want: "real trouble", wantOK: true},
		{name: "another Rook controller's Event is not this kind's",
			events: []corev1.Event{by(Reporter("CephBlockPool"), failed("a pool's trouble", 1))}},
		{name: "an Event from before reportingComponent: source.component",
			events: []corev1.Event{func() corev1.Event { e := failed("older recorder", 1); e.ReportingController = ""; return e }()},
			want:   "older recorder", wantOK: true},
		{name: "control and bidi characters go",
			events: []corev1.Event{failed("bad\x1b[31m\u202e thing\n", 1)}, want: "bad[31m thing", wantOK: true},
		{name: "an event with only eventTime",
			events: []corev1.Event{func() corev1.Event {
				e := failed("events.k8s.io style", 0)
				e.LastTimestamp = metav1.Time{}
				e.EventTime = metav1.NewMicroTime(base)
				return e
			}()}, want: "events.k8s.io style", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Failure(tt.events, store, rook)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RookFailure = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	t.Run("a long message is bounded", func(t *testing.T) {
		got, _ := Failure([]corev1.Event{failed(strings.Repeat("x", 5000), 1)}, store, rook)
		if len(got) > 1024 || !strings.HasSuffix(got, " …") {
			t.Errorf("RookFailure kept %d bytes: %q…", len(got), got[:40])
		}
	})
	t.Run("a kind Rook does not report on", func(t *testing.T) {
		if got, ok := Failure([]corev1.Event{by("", failed("x", 1))}, store, Reporter("Nothing")); ok {
			t.Errorf("RookFailure = %q", got)
		}
	})
}
