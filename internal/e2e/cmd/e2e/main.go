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
//
// `just e2e` runs it; -keep leaves the cluster up for a look.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	keep := flag.Bool("keep", false, "leave the cluster up at the end (hack/e2e/cluster.sh down stops it)")
	until := flag.String("until", "ceph", "the last phase to run: cluster, platform, rook or ceph")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newRun(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	start := time.Now()
	err = r.phases(*until)
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
