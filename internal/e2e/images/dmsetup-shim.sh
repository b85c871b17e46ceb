#!/bin/sh
# e2e stand-in for one question only. The e2e machines' kernel has no
# device-mapper, and Rook v1.18 runs `dmsetup version` before every OSD
# provision and gives up when it fails (pkg/daemon/ceph/osd/daemon.go,
# Provision), although raw-mode OSDs on loop devices never use it. Every
# other dmsetup call goes to the real binary and fails as it would.
if [ "$1" = version ] && [ "$#" -eq 1 ]; then
	echo "Library version:   (e2e) the kernel has no device-mapper"
	exit 0
fi
exec /usr/sbin/dmsetup "$@"
