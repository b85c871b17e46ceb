package helmexec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
)

// digestFormat is how a chart repository's index.yaml writes an archive's
// digest, with the algorithm named.
var digestFormat = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidDigest reports whether digest is "sha256:" and 64 lower-case hex
// digits, the form Chart.Digest takes. It lives here, beside the protocol,
// so that a plugin can check its configuration without linking Helm.
func ValidDigest(digest string) bool { return digestFormat.MatchString(digest) }

// ArchiveDigest is the digest of the chart archive at path, in the form
// Chart.Digest takes.
func ArchiveDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("chart archive: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read chart archive %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyDigest refuses the archive at path unless its digest is want.
func VerifyDigest(path, want string) error {
	if !ValidDigest(want) {
		return fmt.Errorf("the pinned digest %q is not sha256:<64 lower-case hex digits>", want)
	}
	have, err := ArchiveDigest(path)
	if err != nil {
		return err
	}
	if have != want {
		return fmt.Errorf("the archive's digest is %s, not the pinned %s: refusing to install a chart that is not the one pinned", have, want)
	}
	return nil
}
