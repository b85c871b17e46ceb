package retirement

import (
	"testing"

	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/stretchr/testify/assert"
)

func TestSweepOSD(t *testing.T) {
	done := &cephjob.Answer{Done: true, Succeeded: true}
	failed := &cephjob.Answer{Done: true, Message: "Error ETIMEDOUT"}
	running := &cephjob.Answer{}
	tests := []struct {
		name string
		f    OrphanFacts
		want OrphanAction
	}{
		{"an OSD no retirement touched", OrphanFacts{}, OrphanNone},
		{"one a live retirement holds", OrphanFacts{Annotated: true, Stopped: true, Owned: true}, OrphanNone},
		{"stopped and left: start it first", OrphanFacts{Annotated: true, Stopped: true}, OrphanScaleUp},
		{"stopped without the annotation (an older plugin's): start it", OrphanFacts{Stopped: true}, OrphanScaleUp},
		{"running and marked out: mark it in", OrphanFacts{Annotated: true}, OrphanMarkIn},
		{"its in Job runs", OrphanFacts{Annotated: true, In: running}, OrphanNone},
		{"its in Job failed: again", OrphanFacts{Annotated: true, In: failed}, OrphanRetryIn},
		{"in again: done", OrphanFacts{Annotated: true, In: done}, OrphanDone},
		{"its purge was asked: never started again", OrphanFacts{Annotated: true, Stopped: true, Purging: true}, OrphanNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, SweepOSD(tc.f)) })
	}
}
