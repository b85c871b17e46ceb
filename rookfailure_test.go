package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestRookFailure(t *testing.T) {
	const store types.UID = "store-uid"
	base := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	event := func(uid types.UID, typ, reason, msg string, minute int) corev1.Event {
		return corev1.Event{
			InvolvedObject: corev1.ObjectReference{UID: uid},
			Type:           typ, Reason: reason, Message: msg,
			LastTimestamp: metav1.NewTime(base.Add(time.Duration(minute) * time.Minute)),
		}
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
			got, ok := RookFailure(tt.events, store)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("RookFailure = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
