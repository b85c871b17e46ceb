package main

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// crdManifests are the generated CRDs of our five kinds (`just generate`).
//
//go:embed crds/*.yaml
var crdManifests embed.FS

// fieldOwner is the server-side apply manager name of everything we apply.
const fieldOwner = "ceph-rook"

// ownCRD is one embedded CRD manifest and the hash of its bytes.
type ownCRD struct {
	Name string
	Hash string
	Data []byte
}

// loadOwnCRDs reads the embedded CRD manifests in a stable order.
func loadOwnCRDs() ([]ownCRD, error) {
	files, err := fs.Glob(crdManifests, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var crds []ownCRD
	for _, file := range files {
		data, err := crdManifests.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("embedded %s: %w", path.Base(file), err)
		}
		sum := sha256.Sum256(data)
		crds = append(crds, ownCRD{Name: crd.Name, Hash: hex.EncodeToString(sum[:]), Data: data})
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRD manifests embedded from crds/")
	}
	return crds, nil
}

// applyOwnCRDs server-side applies each CRD whose recorded manifest hash
// differs from the embedded one, and returns every CRD name (for the
// Established wait). A CRD already applied from the same bytes costs one
// read and no write, which keeps restarts quiet.
func applyOwnCRDs(ctx context.Context, c client.Client) ([]string, error) {
	crds, err := loadOwnCRDs()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		names = append(names, crd.Name)
		if err := applyCRD(ctx, c, crd); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func applyCRD(ctx context.Context, c client.Client, crd ownCRD) error {
	var existing apiextensionsv1.CustomResourceDefinition
	err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, &existing)
	switch {
	case err == nil && existing.Annotations[cephv1alpha1.ManifestHashAnnotation] == crd.Hash:
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("read CRD %s: %w", crd.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(crd.Data, &u.Object); err != nil {
		return fmt.Errorf("decode CRD %s: %w", crd.Name, err)
	}
	annotations := u.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[cephv1alpha1.ManifestHashAnnotation] = crd.Hash
	u.SetAnnotations(annotations)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply CRD %s: %w", crd.Name, err)
	}
	return nil
}
