package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func fileStorage(name string, mds int32) *cephv1alpha1.FileStorage {
	return &cephv1alpha1.FileStorage{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec:       cephv1alpha1.FileStorageSpec{MetadataServers: mds},
	}
}

func TestRenderFilesystem(t *testing.T) {
	cases := []struct {
		name       string
		mds        int32
		nodes      int
		wantActive int32
		wantSize   uint
		wantSafe   bool
	}{
		{name: "one active MDS on three nodes", mds: 1, nodes: 3, wantActive: 1, wantSize: 3, wantSafe: true},
		{name: "two active MDS daemons as asked", mds: 2, nodes: 2, wantActive: 2, wantSize: 2, wantSafe: true},
		{name: "an unset MDS count (the CRD defaults it) still runs one", mds: 0, nodes: 1, wantActive: 1, wantSize: 1, wantSafe: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustReplication(t, nil, tc.nodes)
			got := RenderFilesystem(fileStorage("shared", tc.mds), "rook-ceph", samePlacement(r))
			assert.Equal(t, "cephfs-shared", got.Name)
			assert.Equal(t, "rook-ceph", got.Namespace)
			assert.Equal(t, tc.wantActive, got.Spec.MetadataServer.ActiveCount)
			assert.True(t, got.Spec.MetadataServer.ActiveStandby, "each active MDS has a standby")
			assert.True(t, got.Spec.PreserveFilesystemOnDelete, "deleting the FileStorage never deletes the data")
			require.Len(t, got.Spec.DataPools, 1)
			for _, p := range []struct {
				what string
				size uint
				safe bool
				dom  string
			}{
				{"metadata", got.Spec.MetadataPool.Replicated.Size, got.Spec.MetadataPool.Replicated.RequireSafeReplicaSize, got.Spec.MetadataPool.FailureDomain},
				{"data", got.Spec.DataPools[0].Replicated.Size, got.Spec.DataPools[0].Replicated.RequireSafeReplicaSize, got.Spec.DataPools[0].FailureDomain},
			} {
				assert.Equal(t, tc.wantSize, p.size, "%s pool size", p.what)
				assert.Equal(t, tc.wantSafe, p.safe, "%s pool requireSafeReplicaSize", p.what)
				assert.Equal(t, r.FailureDomain, p.dom, "%s pool failure domain", p.what)
			}
			assert.True(t, IsControlledBy(got, "uid-shared"))
		})
	}
}

func TestRenderFilesystemNamesItsDataPoolForTheStorageClass(t *testing.T) {
	fs := fileStorage("shared", 1)
	rendered := RenderFilesystem(fs, "rook-ceph", samePlacement(mustReplication(t, nil, 3)))
	require.Len(t, rendered.Spec.DataPools, 1)
	require.NotEmpty(t, rendered.Spec.DataPools[0].Name, "an unnamed data pool gets a name Rook picks")
	rookPoolName := rendered.Name + "-" + rendered.Spec.DataPools[0].Name
	assert.Equal(t, "cephfs-shared-data", rookPoolName)
	assert.Equal(t, rookPoolName, RenderCephFSStorageClass(fs, testConfig()).Parameters["pool"])
}

// rookDaemonLetters is the letter id Rook gives the daemon at index: a..z,
// then aa, ab, ... (k8sutil.IndexToName in Rook v1.18).
func rookDaemonLetters(index int) string {
	id := ""
	for {
		id = string(rune('a'+index%26)) + id
		if index < 26 {
			return id
		}
		index = index/26 - 1
	}
}

// TestLongestFileStorageNameFitsRooksMDSLabels: Rook labels each MDS pod
// with its daemon id, <filesystem>-<letters> (ceph_daemon_id, mds,
// app.kubernetes.io/instance; file/mds/mds.go and controller
// CephDaemonAppLabels), and a label value holds at most 63 characters. The
// longest name the CRD accepts, with the most MDS daemons it allows (50
// active, each with a standby), must still fit.
func TestLongestFileStorageNameFitsRooksMDSLabels(t *testing.T) {
	assert.Equal(t, []string{"a", "z", "aa", "cv"}, []string{rookDaemonLetters(0), rookDaemonLetters(25), rookDaemonLetters(26), rookDaemonLetters(99)})
	fs := RenderFilesystem(fileStorage(strings.Repeat("f", 53), 50), "rook-ceph", samePlacement(mustReplication(t, nil, 3)))
	daemons := int(fs.Spec.MetadataServer.ActiveCount)
	if fs.Spec.MetadataServer.ActiveStandby {
		daemons *= 2
	}
	require.Equal(t, 100, daemons)
	longest := fs.Name + "-" + rookDaemonLetters(daemons-1)
	assert.LessOrEqual(t, len(longest), 63, "MDS daemon id %s", longest)
}
