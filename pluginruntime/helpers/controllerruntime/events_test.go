package controllerruntime_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
)

func TestBoundNote(t *testing.T) {
	tests := []struct {
		name, note string
		wantLen    int
	}{
		{"short: untouched", "osd.3 is out", len("osd.3 is out")},
		{"exactly the limit: untouched", strings.Repeat("a", controllerruntime.NoteLimit), controllerruntime.NoteLimit},
		{"one over: cut and marked", strings.Repeat("a", controllerruntime.NoteLimit+1), controllerruntime.NoteLimit},
		{"cut on a character boundary", "a" + strings.Repeat("é", controllerruntime.NoteLimit), controllerruntime.NoteLimit - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := controllerruntime.BoundNote(tc.note)
			assert.Len(t, got, tc.wantLen)
			assert.True(t, utf8.ValidString(got))
			if len(tc.note) > controllerruntime.NoteLimit {
				assert.True(t, strings.HasSuffix(got, " …"))
			} else {
				assert.Equal(t, tc.note, got)
			}
		})
	}
}

// The API server refuses an Event note over 1 KiB, and the recorder then
// drops the Event; through BoundedRecorder it arrives, cut.
func TestBoundedRecorderEventsArrive(t *testing.T) {
	env := controlPlane.Env(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := controllerruntime.NewManager(env.Config, host{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, manager.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
	})
	require.NoError(t, err)
	started := make(chan error, 1)
	go func() { started <- mgr.Start(ctx) }()

	ns := "events-" + rand.String(5)
	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "regarding"}}
	require.NoError(t, env.Client.Create(ctx, cm))

	long := strings.Repeat("manual step. ", 320) // 4 KiB, as a retirement's steps can be
	refused := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "unbounded-"},
		EventTime:  metav1.NowMicro(), ReportingController: "bounded-test", ReportingInstance: "bounded-test-1",
		Action: "Test", Reason: "Unbounded", Type: corev1.EventTypeWarning, Note: long,
		Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: cm.Name},
	}
	err = env.Client.Create(ctx, refused)
	require.True(t, apierrors.IsInvalid(err), "the API server refuses a note over 1 KiB: %v", err)

	controllerruntime.BoundedRecorder(mgr.GetEventRecorder("bounded-test")).Eventf(cm, nil, corev1.EventTypeWarning, "Bounded", "Test", "%s", long)
	var got []eventsv1.Event
	require.Eventually(t, func() bool {
		var list eventsv1.EventList
		if env.Client.List(ctx, &list, client.InNamespace(ns)) != nil {
			return false
		}
		got = list.Items
		return len(got) == 1
	}, 30*time.Second, 100*time.Millisecond, "the bounded Event arrives")
	assert.Equal(t, "Bounded", got[0].Reason)
	note := got[0].Note
	assert.LessOrEqual(t, len(note), controllerruntime.NoteLimit)
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(note, " …")), "the note is the message's beginning")
	cancel()
	<-started
}
