package main

import (
	"reflect"
	"testing"
)

func TestParseLoopList(t *testing.T) {
	const dir = "/root/.cache/ceph-rook/e2e/loop"
	out := `/dev/loop3 /root/.cache/ceph-rook/e2e/loop/disk10.img
/dev/loop0 /root/.cache/ceph-rook/e2e/loop/disk0.img\x20(deleted)
/dev/loop1 /root/.cache/ceph-rook/e2e/loop/disk1.img
/dev/loop2 /var/lib/other/disk2.img
/dev/loop4 /root/.cache/ceph-rook/e2e/loop/scratch.img
/dev/loop5 /root/.cache/ceph-rook/e2e/loop/disk2.img.bak
/dev/loop6 /root/.cache/ceph-rook/e2e/loop/nested/disk4.img
/dev/loop7
`
	got := parseLoopList(out, dir)
	want := []loopDevice{{0, "/dev/loop0"}, {1, "/dev/loop1"}, {10, "/dev/loop3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseLoopList = %v, want %v (ours only, a deleted backing file included, by index)", got, want)
	}
}
