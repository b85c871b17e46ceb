package helmexec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

func TestValidDigest(t *testing.T) {
	tests := []struct {
		digest string
		valid  bool
	}{
		{"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", true},
		{"", false},
		{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},        // no algorithm
		{"sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", false}, // index.yaml writes lower case
		{"sha256:e3b0c442", false}, // truncated
		{"sha512:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", false},
		{"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n", false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.valid, helmexec.ValidDigest(tc.digest), "%q", tc.digest)
	}
}

func TestVerifyDigest(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "demo-0.1.0.tgz")
	require.NoError(t, os.WriteFile(archive, nil, 0o644))
	const emptyDigest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" // sha256 of no bytes

	digest, err := helmexec.ArchiveDigest(archive)
	require.NoError(t, err)
	assert.Equal(t, emptyDigest, digest)
	assert.NoError(t, helmexec.VerifyDigest(archive, emptyDigest))

	require.NoError(t, os.WriteFile(archive, []byte("swapped"), 0o644))
	err = helmexec.VerifyDigest(archive, emptyDigest)
	require.Error(t, err, "a swapped archive is refused")
	assert.Contains(t, err.Error(), "not the pinned "+emptyDigest)

	err = helmexec.VerifyDigest(archive, "sha256:nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the pinned digest "sha256:nope" is not sha256:<64 lower-case hex digits>`)

	_, err = helmexec.ArchiveDigest(filepath.Join(t.TempDir(), "missing.tgz"))
	assert.Error(t, err)
}
