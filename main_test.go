package main

import (
	"flag"
	"os"
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// env is the package's real control plane: etcd and kube-apiserver with the
// project's CRDs and Rook v1.18's, plus the garbage collector. Every test in
// the package, table tests included, runs with it up.
var env *testenv.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if isFuzzWorker() {
		os.Exit(m.Run())
	}
	scheme := testenv.DefaultScheme()
	if err := cephv1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	testenv.Run(m, testenv.Options{Scheme: scheme, OurCRDs: true, RookCRDs: true, GarbageCollector: true}, &env)
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
