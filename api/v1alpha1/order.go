package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OlderFirst is the one order of precedence between objects competing for
// something: the older (creationTimestamp) first, ties broken by name. It
// decides which pool owns a contested disk and which consumer holds the
// default StorageClass.
func OlderFirst[O metav1.Object](a, b O) int {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		if ta.Before(&tb) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.GetName(), b.GetName())
}

// StorageDevice is the name a disk gets in the CephCluster's device list:
// its /dev/disk/by-id/ path, which Rook documents as the form that does not
// change after reboots, else its kernel path (loop devices and some
// virtual disks have nothing better).
func (s DiskStatus) StorageDevice() string {
	if s.StablePath != "" {
		return s.StablePath
	}
	return s.Path
}
