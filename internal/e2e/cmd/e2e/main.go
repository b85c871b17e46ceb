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

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	nodes := flag.Int("nodes", 3, "how many nodes the cluster has: 3 runs every phase; 1 is quicker and skips join, outage and leave")
	keep := flag.Bool("keep", false, "leave the cluster up at the end (-down takes it down)")
	down := flag.Bool("down", false, "only tear down the cluster (and loop devices) a -keep run left up")
	from := flag.String("from", "cluster", "the first phase to run; past cluster, on the cluster an earlier -keep run left up")
	until := flag.String("until", order[len(order)-1], "the last phase to run: "+strings.Join(order, ", "))
	upgrade := flag.Bool("upgrade", false, "install the plugin of the release before (Rook v1.18.0) and run the upgrade phase after join (three nodes); without it the upgrade phase is skipped")
	volumes := flag.Bool("volumes", false, "only run the volumes phase, on a cluster a -keep run left up past the file phase, with the CSI images imported")
	flag.Parse()
	// The run's own clients log nothing worth a line; without a logger
	// controller-runtime prints a stack trace at the first client.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := newRun(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	r.nodeCount = *nodes
	r.upgradeAsked = *upgrade
	start := time.Now()
	if *down {
		if err := r.phase("tear-down", r.teardown); err != nil {
			os.Exit(1)
		}
		return
	}
	r.memory = startMemorySampler()
	if *volumes {
		err = r.volumesOnly()
	} else {
		err = r.phases(*from, *until)
	}
	if err != nil && ctx.Err() == nil && r.c != nil {
		r.diagnose()
	}
	for _, f := range r.findings {
		fmt.Fprintln(os.Stderr, "e2e: finding:", f)
	}
	peak, during := r.memory.Peak()
	fmt.Fprintf(os.Stderr, "e2e: the machine's memory in use peaked at %.1f GiB (during %s)\n", float64(peak)/(1<<30), during)
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
