package main

import (
	"flag"
	"os"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// env is the package's real control plane: etcd and kube-apiserver with the
// project's CRDs, Rook v1.18's and the snapshot API's, plus the garbage
// collector. Every test in
// the package, table tests included, runs with it up.
var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if isFuzzWorker() {
		os.Exit(m.Run())
	}
	testenv.Run(m, testenv.Options{Scheme: testScheme(), OurCRDs: true, RookCRDs: true, SnapshotCRDs: true, GarbageCollector: true}, &env)
}

// isFuzzWorker is true in the processes `go test -fuzz` starts to execute
// fuzz inputs. They run only the fuzz target, which needs no API server;
// a control plane per worker would cost seconds at every worker restart and
// outlive a worker the coordinator kills. The coordinator process, which
// also runs the package's ordinary tests, still starts one.
func isFuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

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
