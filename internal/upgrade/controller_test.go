package upgrade

import (
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
)

func TestRecordedPGRequest(t *testing.T) {
	cluster := &cephv1.CephCluster{}
	cluster.UID = "3f2b8c1e-0d4a-4b5e-9c6f-7a8b9c0d1e2f"
	own := cephjob.Name(cluster.UID, cephjob.Request{Verb: cephjob.VerbPGStates, Seq: 42})
	tests := []struct {
		name string
		job  string
		want bool
	}{
		{"the cluster's own PG-states Job", own, true},
		{"another cluster's (a restored annotation)", cephjob.Name(types.UID("00000000-0000-4000-8000-000000000001"), cephjob.Request{Verb: cephjob.VerbPGStates, Seq: 42}), false},
		{"another verb's Job of the same owner", cephjob.Name(cluster.UID, cephjob.Request{Verb: cephjob.VerbProbe, Seq: 42}), false},
		{"not a Job name at all", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cluster.Annotations = map[string]string{cephv1alpha1.UpgradePGJobAnnotation: tt.job}
			req, recorded := recordedPGRequest(cluster)
			assert.Equal(t, tt.job, recorded)
			assert.Equal(t, tt.want, req != nil)
		})
	}
}

func TestOnlyUpgradeRecordChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"ceph": map[string]any{"health": "HEALTH_OK"}}}}
		u.SetGeneration(3)
		u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "fundament-ceph-rook"})
		u.SetAnnotations(map[string]string{"other": "1"})
		return u
	}
	tests := []struct {
		name   string
		change func(*unstructured.Unstructured)
		only   bool
	}{
		{"the upgrade's record", func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			a[cephv1alpha1.UpgradeAnnotation] = `{"stage":"Waiting"}`
			u.SetAnnotations(a)
		}, true},
		{"the PG-states Job's name", func(u *unstructured.Unstructured) {
			a := u.GetAnnotations()
			a[cephv1alpha1.UpgradePGJobAnnotation] = "ceph-rook-pgs-x-1"
			u.SetAnnotations(a)
		}, true},
		{"Rook's status refresh", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "HEALTH_WARN", "status", "ceph", "health")
		}, false},
		{"a spec change", func(u *unstructured.Unstructured) { u.SetGeneration(4) }, false},
		{"a label", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"ceph.rook.io/do-not-reconcile": "true"})
		}, false},
		{"someone else's annotation", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"other": "2"}) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated := base()
			tt.change(updated)
			assert.Equal(t, tt.only, onlyUpgradeRecordChanged(base(), updated))
		})
	}
}
