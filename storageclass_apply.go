package main

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// storageClassResult is what ensureStorageClass found.
type storageClassResult struct {
	// Foreign names a same-named class the consumer does not control.
	Foreign string
	// Drift lists immutable fields that differ (StorageClassDrift).
	Drift []string
}

// ensureStorageClass creates the class, or brings the mutable fields of a
// class its owner already controls (labels, the default-class annotation,
// allowVolumeExpansion) in line. Immutable fields are never sent: the API
// server refuses them, so drift there is reported instead.
func ensureStorageClass(ctx context.Context, c client.Client, owner types.UID, want *storagev1.StorageClass) (storageClassResult, error) {
	var have storagev1.StorageClass
	err := c.Get(ctx, client.ObjectKeyFromObject(want), &have)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, want); err != nil {
			return storageClassResult{}, fmt.Errorf("create StorageClass %s: %w", want.Name, err)
		}
		return storageClassResult{}, nil
	case err != nil:
		return storageClassResult{}, fmt.Errorf("read StorageClass %s: %w", want.Name, err)
	}
	if !IsControlledBy(&have, owner) {
		return storageClassResult{Foreign: "StorageClass " + have.Name}, nil
	}
	if drift := StorageClassDrift(want, &have); len(drift) > 0 {
		return storageClassResult{Drift: drift}, nil
	}
	base := have.DeepCopy()
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
	if err := patchIfChanged(ctx, c, base, &have); err != nil {
		return storageClassResult{}, fmt.Errorf("patch StorageClass %s: %w", have.Name, err)
	}
	return storageClassResult{}, nil
}
