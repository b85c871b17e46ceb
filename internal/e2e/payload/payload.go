package payload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
)

// Size is the size of every object: 1 MiB, several stripes of RADOS's
// 4 MiB objects would be no more telling.
const Size = 1 << 20

// Objects is how many objects each of rados and S3 writes.
const Objects = 8

// Name is object i's name, in a RADOS pool and in a bucket.
func Name(i int) string { return fmt.Sprintf("e2e-payload-%02d", i) }

// Object is object i's bytes: a ChaCha8 stream seeded by i.
func Object(i int) []byte {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(i)+1)
	b := make([]byte, Size)
	_, _ = rand.NewChaCha8(seed).Read(b) // never fails
	return b
}

// Sum is the SHA-256 of b in hex.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Check compares what was read back as object i with what was written.
func Check(i int, got []byte) error {
	want := Object(i)
	if g, w := Sum(got), Sum(want); g != w {
		return fmt.Errorf("%s: read %d bytes with SHA-256 %s, wrote %d bytes with SHA-256 %s", Name(i), len(got), g, len(want), w)
	}
	return nil
}
