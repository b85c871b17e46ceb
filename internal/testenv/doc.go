// Package testenv starts a real Kubernetes control plane for tests: etcd and
// kube-apiserver built from source by `just envtest`, Rook v1.18's real CRDs
// fetched by `just rook-artifacts`, the project's own CRDs from crds/, and
// optionally a kube-controller-manager that runs only the garbage collector
// so owner-reference cascades really happen.
//
// A test package shares one environment, started by the first test that
// asks for it, so that its pure tests start no control plane:
//
//	var controlPlane = testenv.NewShared(testenv.Options{RookCRDs: true, OurCRDs: true})
//
//	func TestMain(m *testing.M) { controlPlane.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := controlPlane.Env(t).Client
//		...
//
// Missing binaries or artefacts are a test failure naming the command that
// provides them; these tests never skip.
package testenv
