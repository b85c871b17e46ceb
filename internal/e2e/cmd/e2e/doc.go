// Command e2e runs ceph-rook on a real three-node cluster as production
// would, phase by phase, printing each phase and its duration, and tears
// the cluster down at the end (hack/e2e/README.md):
//
//  1. cluster: hack/e2e/cluster.sh up (kubelet, containerd, CoreDNS, ...)
//  2. platform: the plugin controller as a pod, a PluginInstallation of
//     ceph-rook pinned by its definition hash, the plugin's pod running
//     under Pod Security "restricted" and reporting running; with
//     -upgrade the plugin of the release before, with Rook v1.18.0, so
//     that the upgrade phase upgrades it
//  3. rook: the real Rook operator running, its discovery daemon probing
//     loop devices, the plugin turning them into Disks
//  4. ceph: a DiskPool of the first node's Disks making real OSDs, a
//     BlockStorage a real pool whose size and CRUSH failure domain Ceph
//     confirms
//  5. file: a FileStorage a real CephFS with an active and a standby MDS
//  6. object: an ObjectStorage a running gateway; a bucket claimed in the
//     console (Chromium) and bound by Rook; a workload that loads the
//     claim as the console says and writes and reads an object through
//     the gateway's Service
//  7. retire: a suspended DiskRetirement of a loop Disk finds the OSD Rook
//     runs on it, the one Ceph's metadata places there, and is refused
//     (with one node contributing, the consumers keep a single copy),
//     touching nothing
//  8. join: a payload written with known checksums; the other nodes' disks
//     join one node at a time, and after each every pool's size and CRUSH
//     rule and every PG's acting set, read from Ceph, follow the
//     replication rules; the payload reads back; HEALTH_OK at the end
//  9. tiers: the second disk of nodes B and C is solid-state (the kernel's
//     rotational flag), so Ceph has OSDs of classes hdd and ssd; a
//     BlockStorage on each class gets a pool whose CRUSH rule takes only
//     that class's shadow tree, sized on that class's hosts (2 for ssd, 3
//     for hdd), every PG active+clean on OSDs of the class, one rule each
//     as the plugin counts; moving the hdd one (3 copies) to ssd (2 hosts)
//     is refused with the numbers, its pool untouched; moving the ssd one
//     to hdd fits and moves its data (3 copies on hdd, the old rule left
//     and counted); both deleted, their pools gone
//  10. upgrade (with -upgrade; `just e2e-upgrade`): the current plugin
//     deployed over it: the Rook step (helm
//     upgrade to v1.18.11) once its preflight passes, every daemon rewritten
//     by the new operator; then a new CEPH_IMAGE (the same Ceph under a
//     second tag): the Ceph step, every daemon's pod restarted by Rook one
//     at a time; after each, HEALTH_OK, the payload intact, and the
//     plugin's record on the CephCluster (the console's Upgrade section)
//     and its Events say Done
//  11. outage: a node stopped for real; Ceph, the CephCluster, the plugin's
//     status and the console's overview say HEALTH_WARN; the payload reads
//     back; the node returns and Ceph is HEALTH_OK
//  12. drain: two retirements asked together (the second waits); the
//     first retires a disk for real in Ceph's order (out while up, drained,
//     stopped, purged, wiped); the purged OSD stays gone after Rook
//     prepares the node again; the second aborts by itself when another
//     OSD fails under its drain, its OSD back in and up
//  13. replace: a disk plugged in while the cluster runs replaces one, its
//     OSD up and in before the old one goes out
//  14. swap: two disks trade kernel names under running OSDs; retiring
//     the Disk at one name retires the OSD that device holds; retiring the
//     Disk at the other name, which no OSD Deployment records any more,
//     reads its label, finds its OSD by it, and is refused (the node's
//     last OSD), never marked retired as a disk without an OSD
//  15. dead: an OSD marked out by hand is still out after its retirement
//     is cancelled; a disk dies under its running OSD (its loop device
//     detached), and its retirement purges the OSD by ID once Ceph has
//     recovered its copies, HEALTH_OK, the payload intact, the OSD gone
//     for good
//  16. leave: the last node's disks leave the pool and replication follows
//     the rules back down (NodesLeft)
//
// Every consumer's CSI StorageClass names a registered CSIDriver and
// existing Secrets.
//
// -volumes runs one more phase on a cluster a -keep run left up past the
// file phase (volumes.go): PVCs from the block and file classes bound by
// real ceph-csi, the CephFS volume mounted on two nodes, snapshots,
// restores, clones and expansion read back from Ceph. It needs Rook's CSI
// images and the snapshot controller's in the nodes' containerd, which
// the project cannot build (hack/e2e/README.md, "Volumes"), so `just e2e`
// does not run it.
//
// `just e2e` runs it on three nodes (-nodes 1: the first seven phases on
// one); -keep leaves the cluster up for a look, -from continues on it and
// -down takes it down.
package main
