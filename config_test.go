package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/internal/retirement"
)

func environ(vars map[string]string) func(string) string {
	return func(key string) string { return vars[key] }
}

// testConfig is the default configuration, as the renderer tests use it.
func testConfig() Config {
	cfg, err := LoadConfig(environ(nil))
	if err != nil {
		panic(err)
	}
	return cfg
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := LoadConfig(environ(nil))
	require.NoError(t, err)
	assert.Equal(t, Config{
		OperatorNamespace:   "rook-ceph",
		ClusterNamespace:    "rook-ceph",
		CephImage:           "quay.io/ceph/ceph:v19.2.3",
		MonCount:            3,
		MgrCount:            2,
		Metrics:             true,
		CephFSMounter:       "kernel",
		S3Region:            "nl-1",
		ChartRepository:     "https://charts.rook.io/release",
		ChartDigest:         publishedChartDigest,
		CephMaxPGPerOSD:     250,
		CephClusterMaxBytes: 1400000,
		KubeAPIQPS:          1000,
		KubeAPIBurst:        2000,
		LeaderElection:      true,
		RetirementTiming:    retirement.Timing{Stall: 30 * time.Minute},
	}, cfg)
}

func TestLoadConfigReadsEveryKey(t *testing.T) {
	cfg, err := LoadConfig(environ(map[string]string{
		"FUNP_OPERATOR_NAMESPACE":            "rook-operator",
		"FUNP_CLUSTER_NAMESPACE":             "rook-operator",
		"FUNP_CEPH_IMAGE":                    "registry.local/ceph:v19",
		"FUNP_MON_COUNT":                     "1",
		"FUNP_MGR_COUNT":                     "1",
		"FUNP_ALLOW_MULTIPLE_PER_NODE":       "true",
		"FUNP_DEV_LOOP_DEVICES":              "true",
		"FUNP_METRICS":                       "false",
		"FUNP_CEPHFS_MOUNTER":                "fuse",
		"FUNP_S3_REGION":                     "eu-west-1",
		"FUNP_CHART_REPOSITORY":              "http://charts.local/rook",
		"FUNP_DEV_INSECURE_CHART_REPOSITORY": "true",
		"FUNP_CHART_DIGEST":                  "sha256:" + strings.Repeat("ab", 32),
		"FUNP_CEPH_MAX_PG_PER_OSD":           "300",
		"FUNP_CEPHCLUSTER_MAX_BYTES":         "3000000",
		"FUNP_KUBE_API_QPS":                  "50",
		"FUNP_KUBE_API_BURST":                "75",
		"FUNP_LEADER_ELECTION":               "false",
		"FUNP_RETIREMENT_STALL":              "2h30m",
	}))
	require.NoError(t, err)
	assert.Equal(t, Config{
		OperatorNamespace:    "rook-operator",
		ClusterNamespace:     "rook-operator",
		CephImage:            "registry.local/ceph:v19",
		MonCount:             1,
		MgrCount:             1,
		AllowMultiplePerNode: true,
		DevLoopDevices:       true,
		CephFSMounter:        "fuse",
		S3Region:             "eu-west-1",
		ChartRepository:      "http://charts.local/rook",
		ChartDigest:          "sha256:" + strings.Repeat("ab", 32),
		CephMaxPGPerOSD:      300,
		CephClusterMaxBytes:  3000000,
		KubeAPIQPS:           50,
		KubeAPIBurst:         75,
		RetirementTiming:     retirement.Timing{Stall: 150 * time.Minute},
	}, cfg)
}

func TestLoadConfigPutsTheClusterInTheOperatorNamespace(t *testing.T) {
	cfg, err := LoadConfig(environ(map[string]string{"FUNP_OPERATOR_NAMESPACE": "storage"}))
	require.NoError(t, err)
	assert.Equal(t, "storage", cfg.ClusterNamespace, "an unset cluster namespace follows the operator's")
}

// TestLoadConfigRefusesClusterNamespaceOtherThanOperatorNamespace: Rook's
// operator chart creates the CephCluster's service accounts and RBAC only
// in its release namespace, so a cluster elsewhere could never start.
func TestLoadConfigRefusesClusterNamespaceOtherThanOperatorNamespace(t *testing.T) {
	cases := map[string]map[string]string{
		"a cluster namespace beside the default operator namespace": {"FUNP_CLUSTER_NAMESPACE": "ceph"},
		"a cluster namespace beside a chosen operator namespace":    {"FUNP_OPERATOR_NAMESPACE": "storage", "FUNP_CLUSTER_NAMESPACE": "rook-ceph"},
	}
	for name, vars := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(environ(vars))
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("FUNP_CLUSTER_NAMESPACE=%q: the CephCluster must be in the operator namespace", vars["FUNP_CLUSTER_NAMESPACE"]))
			assert.Contains(t, err.Error(), "service accounts and RBAC (rook-ceph-osd, rook-ceph-mgr, ...) only there")
		})
	}
}

func TestLoadConfigRejects(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		want string
	}{
		{name: "a namespace that is not a DNS label", vars: map[string]string{"FUNP_CLUSTER_NAMESPACE": "Rook_Ceph"}, want: `FUNP_CLUSTER_NAMESPACE="Rook_Ceph": not a namespace name`},
		{name: "an even monitor count, which cannot keep a quorum", vars: map[string]string{"FUNP_MON_COUNT": "2"}, want: `FUNP_MON_COUNT="2": must be odd`},
		{name: "more monitors than Rook allows", vars: map[string]string{"FUNP_MON_COUNT": "11"}, want: `FUNP_MON_COUNT="11": must be a whole number from 1 to 9`},
		{name: "a manager count that is not a number", vars: map[string]string{"FUNP_MGR_COUNT": "two"}, want: `FUNP_MGR_COUNT="two": must be a whole number from 1 to 5`},
		{name: "zero managers", vars: map[string]string{"FUNP_MGR_COUNT": "0"}, want: `FUNP_MGR_COUNT="0"`},
		{name: "a boolean that is not one", vars: map[string]string{"FUNP_DEV_LOOP_DEVICES": "yes please"}, want: `FUNP_DEV_LOOP_DEVICES="yes please": must be true or false`},
		{name: "an unknown CephFS mounter", vars: map[string]string{"FUNP_CEPHFS_MOUNTER": "nfs"}, want: `FUNP_CEPHFS_MOUNTER="nfs": must be one of [kernel fuse]`},
		{name: "a zero API rate limit", vars: map[string]string{"FUNP_KUBE_API_QPS": "0"}, want: `FUNP_KUBE_API_QPS="0": must be a whole number from 1 to 10000`},
		{name: "a retirement stall limit that is no duration", vars: map[string]string{"FUNP_RETIREMENT_STALL": "30"}, want: `FUNP_RETIREMENT_STALL="30": must be a duration from 5m0s to 24h0m0s`},
		{name: "a retirement stall limit too short for a backfill slot", vars: map[string]string{"FUNP_RETIREMENT_STALL": "1m"}, want: `FUNP_RETIREMENT_STALL="1m": must be a duration`},
		{name: "leader election that is not a boolean", vars: map[string]string{"FUNP_LEADER_ELECTION": "maybe"}, want: `FUNP_LEADER_ELECTION="maybe": must be true or false`},
		{name: "a chart repository over plain http", vars: map[string]string{"FUNP_CHART_REPOSITORY": "http://charts.rook.io/release"}, want: `FUNP_CHART_REPOSITORY="http://charts.rook.io/release": must be https (set FUNP_DEV_INSECURE_CHART_REPOSITORY=true for a development repository served over http)`},
		{name: "a chart digest without its algorithm", vars: map[string]string{"FUNP_CHART_DIGEST": strings.Repeat("ab", 32)}, want: `FUNP_CHART_DIGEST="` + strings.Repeat("ab", 32) + `": must be sha256: and 64 lower-case hex digits`},
		{name: "a truncated chart digest", vars: map[string]string{"FUNP_CHART_DIGEST": "sha256:abab"}, want: `FUNP_CHART_DIGEST="sha256:abab": must be sha256:`},
		{name: "a PG limit that is no number", vars: map[string]string{"FUNP_CEPH_MAX_PG_PER_OSD": "lots"}, want: `FUNP_CEPH_MAX_PG_PER_OSD="lots": must be a whole number from 1 to 100000`},
		{name: "a chart repository that is not a URL", vars: map[string]string{"FUNP_CHART_REPOSITORY": "charts.rook.io/release"}, want: `FUNP_CHART_REPOSITORY="charts.rook.io/release": must be an http(s) URL`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(environ(tc.vars))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadConfigReportsEveryInvalidKeyAtOnce(t *testing.T) {
	_, err := LoadConfig(environ(map[string]string{"FUNP_MON_COUNT": "4", "FUNP_S3_REGION": "", "FUNP_CEPHFS_MOUNTER": "x", "FUNP_OPERATOR_NAMESPACE": "-"}))
	require.Error(t, err)
	for _, key := range []string{"FUNP_MON_COUNT", "FUNP_CEPHFS_MOUNTER", "FUNP_OPERATOR_NAMESPACE"} {
		assert.Contains(t, err.Error(), key)
	}
}

func TestRookChartVersionIsPinned(t *testing.T) {
	assert.Equal(t, "v1.18.11", RookChartVersion)
}
