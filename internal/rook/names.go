package rook

// What Rook v1.18's operator and chart put on the objects the plugin reads
// (the chart's library "labels" template, pkg/operator/k8sutil
// AddRookVersionLabelToDeployment, pkg/operator/ceph/controller label.go,
// pkg/operator/ceph/cluster/osd labels.go and mon).
const (
	// OperatorDeployment runs the operator; every Ceph Job runs its image.
	OperatorDeployment = "rook-ceph-operator"
	// ChartName is the operator chart in the chart repository.
	ChartName = "rook-ceph"
	// HelmChartLabel is "rook-ceph-v1.18.11" on the operator Deployment:
	// the chart release that made it.
	HelmChartLabel = "helm.sh/chart"
	// AppLabel is the label key Rook puts an object's app in (OSDApp,
	// MonApp); the plugin's Ceph Jobs carry theirs under it too.
	AppLabel = "app"
	// OSDApp is the app label of an OSD's Deployment and pods.
	OSDApp = "rook-ceph-osd"
	// OSDPrepareApp is the app label of Rook's OSD prepare Jobs and their
	// pods (pkg/operator/ceph/cluster/osd: prepareAppName), one per node
	// and orchestration.
	OSDPrepareApp = "rook-ceph-osd-prepare"
	// OSDIDLabel carries an OSD's ID on its Deployment (OsdIdLabelKey).
	OSDIDLabel = "ceph-osd-id"
	// MonApp is the app label of a mon's pods.
	MonApp = "rook-ceph-mon"
	// ClusterLabel names the cluster's namespace on every daemon
	// Deployment Rook makes for it.
	ClusterLabel = "rook_cluster"
	// VersionLabel and CephVersionLabel are the Rook and Ceph versions a
	// daemon Deployment was last made with.
	VersionLabel     = "rook-version"
	CephVersionLabel = "ceph-version"
)

// CRUSH failure domains, as a CephBlockPool's spec.failureDomain takes
// them: the plugin spreads copies over hosts when it has enough, else
// over OSDs.
const (
	FailureDomainHost = "host"
	FailureDomainOSD  = "osd"
)
