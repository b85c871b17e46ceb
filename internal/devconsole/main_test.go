package devconsole_test

import (
	"testing"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// env is one control plane for the package: our CRDs and Rook's (the
// CephCluster and the ObjectBucketClaim kinds the pages read).
var env *testenv.Env

func TestMain(m *testing.M) {
	scheme := testenv.DefaultScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	testenv.Run(m, testenv.Options{Scheme: scheme, OurCRDs: true, RookCRDs: true}, &env)
}
