package patch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// TestStatus: the patch sets every field of the status, zero values
// as null (removed), and numbers exactly as they are, past float64's 2^53.
func TestStatus(t *testing.T) {
	cases := map[string]struct {
		status cephv1alpha1.StorageStatus
		want   string
		// exact is text the patch must hold as it is: JSONEq compares
		// numbers as float64, which is the rounding at stake.
		exact []string
	}{
		"zero values are removed": {
			status: cephv1alpha1.StorageStatus{Phase: cephv1alpha1.StorageReady},
			want:   `{"status":{"capacity":null,"cephBudget":null,"conditions":null,"deviceClass":null,"failureDomain":null,"message":null,"metadataDeviceClass":null,"metadataReplicas":null,"observedGeneration":null,"phase":"Ready","replicas":null,"snapshotClassName":null,"storageClassName":null}}`,
		},
		"a byte count over 2^53 is sent as it is": {
			status: cephv1alpha1.StorageStatus{Phase: cephv1alpha1.StorageReady, Capacity: &cephv1alpha1.ConsumerCapacity{RawBytes: 20053964545155069, UsableBytes: 9007199254740993}},
			want:   `{"status":{"capacity":{"rawBytes":20053964545155069,"usableBytes":9007199254740993},"cephBudget":null,"conditions":null,"deviceClass":null,"failureDomain":null,"message":null,"metadataDeviceClass":null,"metadataReplicas":null,"observedGeneration":null,"phase":"Ready","replicas":null,"snapshotClassName":null,"storageClassName":null}}`,
			exact:  []string{`"rawBytes":20053964545155069`, `"usableBytes":9007199254740993`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := Status(tc.status).Data(&cephv1alpha1.BlockStorage{})
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(data))
			for _, text := range tc.exact {
				assert.Contains(t, string(data), text)
			}
		})
	}
}
