#!/bin/sh
# e2e stand-in that makes Debian's ceph-osd find its object classes under
# Rook. Debian builds Ceph with a relative osd_class_dir
# ("lib/x86_64-linux-gnu/rados-classes", `ceph-osd --show-config`), which
# resolves against the daemon's working directory; Rook v1.18 runs every
# daemon in /var/log/ceph (its pods' workingDir), where the path names
# nothing. The OSDs then load no class ("_load_class could not stat class
# lib/x86_64-linux-gnu/rados-classes/libcls_version.so") and every call
# that needs one fails: RGW's realm creation with "(95) Operation not
# supported". quay.io/ceph/ceph compiles in an absolute path; this passes
# the one Debian installs. The option is read at start only.
exec /usr/bin/ceph-osd --osd-class-dir=/usr/lib/x86_64-linux-gnu/rados-classes "$@"
