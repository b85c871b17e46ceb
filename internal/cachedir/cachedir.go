package cachedir

import (
	"os"
	"path/filepath"
)

const (
	// KubernetesVersion is the control plane the tests run against.
	KubernetesVersion = "v1.37.2"
	// EtcdVersion is the etcd the control plane stores into.
	EtcdVersion = "v3.7.3"
	// RookVersion is the Rook release whose chart and CRDs the plugin installs.
	RookVersion = "v1.18.11"
	// PreviousRookVersion is the release the end-to-end test installs
	// first and upgrades from (its upgrade phase): its chart and its
	// operator image are built here as RookVersion's are.
	PreviousRookVersion = "v1.18.0"
	// AxeCoreVersion is the axe-core release the console's browser tests
	// check every page and sheet with (hack/axe fetches it).
	AxeCoreVersion = "4.10.3"
)

// Root is the project's cache folder: $CEPH_ROOK_CACHE, else
// $XDG_CACHE_HOME/ceph-rook, else ~/.cache/ceph-rook.
func Root() string {
	if dir := os.Getenv("CEPH_ROOK_CACHE"); dir != "" {
		return dir
	}
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return filepath.Join(dir, "ceph-rook")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "ceph-rook-cache")
	}
	return filepath.Join(home, ".cache", "ceph-rook")
}

// EnvtestAssets is the folder holding etcd, kube-apiserver,
// kube-controller-manager and kubectl (what KUBEBUILDER_ASSETS points at).
func EnvtestAssets() string {
	return filepath.Join(Root(), "envtest", "k8s-"+KubernetesVersion+"-etcd-"+EtcdVersion)
}

// RookDir holds Rook's offline-installable chart archive and its CRDs.
func RookDir() string { return RookDirOf(RookVersion) }

// RookDirOf is RookDir for a Rook release.
func RookDirOf(version string) string {
	return filepath.Join(Root(), "rook", version)
}

// RookChartArchive is the packaged rook-ceph chart (rook-ceph-<version>.tgz).
func RookChartArchive() string { return RookChartArchiveOf(RookVersion) }

// RookChartArchiveOf is RookChartArchive for a Rook release.
func RookChartArchiveOf(version string) string {
	return filepath.Join(RookDirOf(version), "rook-ceph-"+version+".tgz")
}

// RookOSDPurgeJob is Rook's deploy/examples/osd-purge.yaml, the OSD
// removal Job a DiskRetirement runs in that shape.
func RookOSDPurgeJob() string {
	return filepath.Join(RookDir(), "osd-purge.yaml")
}

// RookCRDs is Rook's deploy/examples/crds.yaml.
func RookCRDs() string {
	return filepath.Join(RookDir(), "crds.yaml")
}

// AxeCoreDir holds axe-core's browser bundle and its licence.
func AxeCoreDir() string {
	return filepath.Join(Root(), "axe-core", AxeCoreVersion)
}

// AxeCoreScript is axe-core's minified browser bundle (axe.min.js).
func AxeCoreScript() string {
	return filepath.Join(AxeCoreDir(), "axe.min.js")
}
