package main

import (
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// controlPlane is the package's real control plane: etcd and kube-apiserver
// with the project's CRDs, Rook v1.18's and the snapshot API's, plus the
// garbage collector. The first test that needs it starts it; the table
// tests of pure functions (and the fuzz workers `go test -fuzz` starts)
// run without one.
var controlPlane = testenv.NewShared(testenv.Options{Scheme: testScheme(), OurCRDs: true, RookCRDs: true, SnapshotCRDs: true, GarbageCollector: true})

func TestMain(m *testing.M) { controlPlane.Main(m) }

// testScheme is the test clients' scheme: the plugin's kinds and Rook's,
// and the snapshot API's.
func testScheme() *runtime.Scheme {
	scheme := testenv.DefaultScheme()
	for _, add := range []func(*runtime.Scheme) error{cephv1alpha1.AddToScheme, snapshotv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return scheme
}
