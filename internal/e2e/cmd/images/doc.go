// Command images builds (or finds in the cache) the end-to-end test's
// container image archives, the Ceph, Rook and pause images, and prints one
// line per archive: its path, a tab, and the names it carries. With
// -import, it also imports them into containerd's k8s.io namespace:
//
//	go run ./internal/e2e/cmd/images
//	go run ./internal/e2e/cmd/images -import /tmp/e2e-containerd/containerd.sock
//	go run ./internal/e2e/cmd/images -upgrade   # also the Rook the upgrade run starts from
//
// Needs root for the Ceph root filesystem (hack/e2e/ceph-rootfs.sh). See
// hack/e2e/README.md.
package main
