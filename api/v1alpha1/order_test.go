package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOlderFirst(t *testing.T) {
	at := func(name string, minute int) *DiskPool {
		p := &DiskPool{}
		p.Name, p.CreationTimestamp = name, metav1.NewTime(time.Date(2026, 12, 7, 0, minute, 0, 0, time.UTC))
		return p
	}
	tests := []struct {
		name string
		a, b *DiskPool
		want int
	}{
		{"the older first", at("b", 1), at("a", 2), -1},
		{"the younger after", at("a", 2), at("b", 1), 1},
		{"a tie goes by name", at("a", 1), at("b", 1), -1},
		{"the same object ties", at("a", 1), at("a", 1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OlderFirst(tt.a, tt.b); got != tt.want {
				t.Errorf("OlderFirst = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestStorageDevice(t *testing.T) {
	if got := (DiskStatus{Path: "/dev/sdb", StablePath: "/dev/disk/by-id/wwn-0x1"}).StorageDevice(); got != "/dev/disk/by-id/wwn-0x1" {
		t.Errorf("a stable path names the device: got %q", got)
	}
	if got := (DiskStatus{Path: "/dev/loop3"}).StorageDevice(); got != "/dev/loop3" {
		t.Errorf("without one, the kernel path does: got %q", got)
	}
}
