package main

import (
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// env is the package's real control plane: etcd and kube-apiserver with the
// project's CRDs and Rook v1.18's, plus the garbage collector. Every test in
// the package, table tests included, runs with it up.
var env *testenv.Env

func TestMain(m *testing.M) {
	scheme := testenv.DefaultScheme()
	if err := cephv1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	testenv.Run(m, testenv.Options{Scheme: scheme, OurCRDs: true, RookCRDs: true, GarbageCollector: true}, &env)
}
