// Command binimage writes (or finds in the cache) an image archive made of
// files alone, no base layer: static binaries and their data, as the plugin,
// the plugin controller and CoreDNS ship. It prints the archive's path.
//
//	binimage -name ceph-rook.e2e/ceph-rook:e2e -user 65532:65532 \
//	    -entrypoint /app/ceph-rook -file ceph-rook:/app/ceph-rook:0755 ...
package main
