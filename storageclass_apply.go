package main

import (
	"context"
	"fmt"

	"github.com/fundament-oss/ceph-rook/internal/patch"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ensureStorageClass creates the class when there is none (have is nil),
// or brings the mutable fields of the class the consumer controls (the
// preconditions checked that) in line: labels, the default-class
// annotation, allowVolumeExpansion. Immutable fields are never sent: the
// API server refuses them, so drift there is returned instead
// (StorageClassDrift), and nothing is written. have is not modified.
func ensureStorageClass(ctx context.Context, c client.Client, have, want *storagev1.StorageClass) ([]string, error) {
	if have == nil {
		if err := c.Create(ctx, want); err != nil {
			return nil, fmt.Errorf("create StorageClass %s: %w", want.Name, err)
		}
		return nil, nil
	}
	if drift := StorageClassDrift(want, have); len(drift) > 0 {
		return drift, nil
	}
	base := have
	have = have.DeepCopy()
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		have.Labels[k] = v
	}
	if want.Annotations[DefaultClassAnnotation] == "true" {
		if have.Annotations == nil {
			have.Annotations = map[string]string{}
		}
		have.Annotations[DefaultClassAnnotation] = "true"
	} else {
		delete(have.Annotations, DefaultClassAnnotation)
	}
	have.AllowVolumeExpansion = want.AllowVolumeExpansion
	if err := patch.IfChanged(ctx, c, base, have); err != nil {
		return nil, fmt.Errorf("patch StorageClass %s: %w", have.Name, err)
	}
	return nil, nil
}
