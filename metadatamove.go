package main

import (
	"fmt"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A FileStorage's or ObjectStorage's metadata pools can change class
// without anyone editing the consumer: automatic metadata goes to the
// fastest class present that holds its copies (MetadataReplication,
// SharedMetadataReplication), so a DiskPool edit that adds the first nvme
// disks on enough nodes moves them there, and one that takes them away
// moves them back. Every such move copies the pools onto other OSDs, and
// is announced on the consumer when the plugin makes it (MetadataTierMove,
// EventMetadataTierMoved); the console's pool sheets say it before saving
// (tiers.js metadataMoves).

// MetadataTierMove says, for an Event, that a consumer's metadata pools
// move from the class they are on (held: their Rook object's, before the
// patch that moves them; "" is every OSD) to next, naming the pools and
// the cause: specChanged when the consumer's spec was edited, else the
// DiskPools' disks changed. "" when the class stays.
func MetadataTierMove(pools []string, held, next cephv1alpha1.DiskType, specChanged bool) string {
	if held == next {
		return ""
	}
	cause := "the DiskPools' disks changed"
	if specChanged {
		cause = "its spec changed"
	}
	subject, them, their := "metadata pool "+pools[0]+" moves", "it", "its"
	if len(pools) > 1 {
		subject, them, their = "metadata pools "+joinPools(pools)+" move", "each", "their"
	}
	return fmt.Sprintf("%s from %s to %s, as %s: Rook gives %s a new CRUSH rule and Ceph copies %s data onto %s",
		subject, classOSDs(held), classOSDs(next), cause, them, their, classOSDs(next))
}

// joinPools is "a, b and c".
func joinPools(pools []string) string {
	if len(pools) == 1 {
		return pools[0]
	}
	return strings.Join(pools[:len(pools)-1], ", ") + " and " + pools[len(pools)-1]
}
