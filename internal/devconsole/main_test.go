package devconsole_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// controlPlane is one control plane for the package, started by the first
// test that needs it: our CRDs and Rook's (the CephCluster and the
// ObjectBucketClaim kinds the pages read).
var controlPlane = testenv.NewShared(testenv.Options{Scheme: consoleScheme(), OurCRDs: true, RookCRDs: true})

func consoleScheme() *runtime.Scheme {
	scheme := testenv.DefaultScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return scheme
}

func TestMain(m *testing.M) { controlPlane.Main(m) }
