// Command e2e runs ceph-rook on a real one-node cluster as production
// would, phase by phase, printing each phase and its duration, and tears
// the cluster down at the end (hack/e2e/README.md):
//
//  1. cluster: hack/e2e/cluster.sh up (kubelet, containerd, CoreDNS, ...)
//  2. platform: the plugin controller as a pod, a PluginInstallation of
//     ceph-rook pinned by its definition hash, the plugin's pod running
//     under Pod Security "restricted" and reporting running
//  3. rook: the real Rook operator running, its discovery daemon probing
//     loop devices, the plugin turning them into Disks
//  4. ceph: a DiskPool of those Disks making real OSDs, a BlockStorage a
//     real pool whose size and CRUSH failure domain Ceph confirms
//  5. file: a FileStorage a real CephFS with an active and a standby MDS
//  6. object: an ObjectStorage a running gateway; a bucket claimed in the
//     console (Chromium) and bound by Rook; a workload that loads the
//     claim as the console says and writes and reads an object through
//     the gateway's Service
//  7. retire: a suspended DiskRetirement of a loop Disk finds the OSD Rook
//     runs on it, the one Ceph's metadata places there, and is refused
//     (the one-node consumers keep a single copy), touching nothing
//
// Every consumer's CSI StorageClass names a registered CSIDriver and
// existing Secrets (volumes cannot be mounted here: no rbd kernel module,
// no CSI images).
//
// `just e2e` runs it; -keep leaves the cluster up for a look, -from
// continues on it and -down takes it down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	keep := flag.Bool("keep", false, "leave the cluster up at the end (-down takes it down)")
	down := flag.Bool("down", false, "only tear down the cluster (and loop devices) a -keep run left up")
	from := flag.String("from", "cluster", "the first phase to run; past cluster, on the cluster an earlier -keep run left up")
	until := flag.String("until", "retire", "the last phase to run: "+strings.Join(order, ", "))
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newRun(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	start := time.Now()
	if *down {
		if err := r.phase("tear-down", r.teardown); err != nil {
			os.Exit(1)
		}
		return
	}
	err = r.phases(*from, *until)
	if !*keep || err != nil && ctx.Err() != nil {
		if derr := r.phase("tear-down", r.teardown); err == nil {
			err = derr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAILED after %s: %v\n", time.Since(start).Round(time.Second), err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "e2e: PASSED in %s\n", time.Since(start).Round(time.Second))
}
