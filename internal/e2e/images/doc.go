// Package images builds, without a registry or a container engine, the
// container images the end-to-end test imports into containerd:
//
//   - the Ceph image (CephImage): Debian 13's Ceph 18.2.7 root filesystem
//     made by hack/e2e/ceph-rootfs.sh;
//   - the Rook images (RookImage): that root filesystem plus the `rook`
//     binary of Rook's release (RookVersions: the one the plugin installs,
//     and, for the upgrade run, the one the e2e upgrades from) at
//     /usr/local/bin/rook, built from
//     the Go module proxy, running as uid 2016 like Rook's
//     images/ceph/Dockerfile;
//   - the pause image (PauseImages): a tiny static Go program that waits for
//     a signal and reaps children.
//
// Everything is cached under <cache>/e2e (cachedir.Root() by default) and
// reused: a second Build does no work beyond hashing its inputs.
package images
