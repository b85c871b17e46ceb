package payload

import (
	"bytes"
	"testing"
)

func TestObjectsFollowFromTheirIndexAlone(t *testing.T) {
	a, b := Object(3), Object(3)
	if !bytes.Equal(a, b) || len(a) != Size {
		t.Fatalf("object 3 differs between two calls or is not %d bytes", Size)
	}
	if bytes.Equal(Object(3), Object(4)) {
		t.Fatal("objects 3 and 4 are the same bytes")
	}
}

func TestCheckFindsAFlippedBit(t *testing.T) {
	got := Object(1)
	if err := Check(1, got); err != nil {
		t.Fatalf("intact object: %v", err)
	}
	got[Size/2] ^= 1
	if err := Check(1, got); err == nil {
		t.Fatal("a flipped bit passed the check")
	}
	if err := Check(1, got[:Size-1]); err == nil {
		t.Fatal("a short read passed the check")
	}
}
