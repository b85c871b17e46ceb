package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// TestTheCephWarningConditionFollowsTheCheck: a warning sets the condition,
// an empty one (checked, nothing to warn of: disks were added) removes it,
// and an outcome that did not check (a precondition failed first) leaves it
// as it was.
func TestTheCephWarningConditionFollowsTheCheck(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	warning, none := "BlockStorage db brings placement groups to 129 per OSD", ""
	warned := consumerStatus(cephv1alpha1.StorageStatus{}, consumerOutcome{Phase: cephv1alpha1.StorageProvisioning, CephWarning: &warning}, 1, now)
	cond := meta.FindStatusCondition(warned.Conditions, ConditionCephWarning)
	if assert.NotNil(t, cond) {
		assert.Equal(t, ReasonTooManyPGs, cond.Reason)
		assert.Equal(t, warning, cond.Message)
	}

	unchecked := consumerStatus(warned, consumerOutcome{Phase: cephv1alpha1.StorageDegraded, Reason: ReasonNoDisks}, 1, now.Add(time.Minute))
	assert.Equal(t, cond, meta.FindStatusCondition(unchecked.Conditions, ConditionCephWarning), "not checked: kept as it was")

	cleared := consumerStatus(unchecked, consumerOutcome{Phase: cephv1alpha1.StorageReady, CephWarning: &none}, 1, now.Add(2*time.Minute))
	assert.Nil(t, meta.FindStatusCondition(cleared.Conditions, ConditionCephWarning), "checked, nothing to warn of: removed")
}
