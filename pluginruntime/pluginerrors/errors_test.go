package pluginerrors_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

func TestClassification(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		name      string
		err       error
		class     pluginerrors.Class
		transient bool
		permanent bool
	}{
		{name: "nil is unclassified", err: nil, class: pluginerrors.Unclassified},
		{name: "plain error is unclassified", err: cause, class: pluginerrors.Unclassified},
		{name: "transient is transient", err: pluginerrors.NewTransient(cause), class: pluginerrors.Transient, transient: true},
		{name: "permanent is permanent", err: pluginerrors.NewPermanent(cause), class: pluginerrors.Permanent, permanent: true},
		{
			name:      "classification survives wrapping with %w",
			err:       fmt.Errorf("install chart: %w", pluginerrors.NewTransient(cause)),
			class:     pluginerrors.Transient,
			transient: true,
		},
		{
			name:      "outermost classification wins",
			err:       pluginerrors.NewPermanent(fmt.Errorf("gave up: %w", pluginerrors.NewTransient(cause))),
			class:     pluginerrors.Permanent,
			permanent: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.class, pluginerrors.ClassOf(tc.err))
			assert.Equal(t, tc.transient, pluginerrors.IsTransient(tc.err))
			assert.Equal(t, tc.permanent, pluginerrors.IsPermanent(tc.err))
		})
	}
}

func TestWrappersKeepTheCause(t *testing.T) {
	for _, wrap := range []func(error) error{pluginerrors.NewTransient, pluginerrors.NewPermanent} {
		err := wrap(fmt.Errorf("wait for CRD: %w", context.DeadlineExceeded))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, "wait for CRD: context deadline exceeded", err.Error())
	}
}

func TestNilStaysNil(t *testing.T) {
	assert.NoError(t, pluginerrors.NewTransient(nil))
	assert.NoError(t, pluginerrors.NewPermanent(nil))
}
