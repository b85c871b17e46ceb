// Command bench is `just bench`: ceph-rook at scale against a real API
// server, with a floor measured in the same run (see internal/bench).
//
//	go run ./cmd/bench                               # 1k, 2.5k, 5k and 10k disks, 3 samples each
//	go run ./cmd/bench -sizes 25 -idle 5s -samples 1 # a quick look
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/fundament-oss/ceph-rook/internal/bench"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the benchmark's own watches need no logging
	root, _ := os.Getwd()
	o := bench.Options{RepoRoot: root, Out: os.Stdout}
	sizes := flag.String("sizes", "50,125,250,500", "node counts to measure, smallest first")
	flag.IntVar(&o.DevicesPerNode, "devices", 20, "devices per node")
	flag.IntVar(&o.Pools, "pools", 20, "DiskPools (covering ~80% of the disks, overlapping)")
	// 50, 20 and 5: two CRUSH rules a pool (budget.go, CrushRulesPerPool)
	// make 100 + 80 + 70, with .mgr and .rgw.root 253 of the 256 rules a
	// Ceph cluster holds; more would be refused, as Ceph would refuse
	// their pools.
	flag.IntVar(&o.Block, "block", 50, "BlockStorages")
	flag.IntVar(&o.File, "file", 20, "FileStorages")
	flag.IntVar(&o.Object, "object", 5, "ObjectStorages")
	flag.IntVar(&o.Edits, "edits", 50, "DiskPool edits timed")
	flag.IntVar(&o.Hostile, "hostile", 8, "nodes whose discovery reports are replaced, last, by 1 MiB of empty entries, to measure the plugin's memory as it refuses them (0: skipped)")
	flag.DurationVar(&o.Idle, "idle", 60*time.Second, "idle time after convergence in which no write may happen")
	flag.IntVar(&o.FloorWorkers, "floor-workers", 8, "parallel workers of the floor client")
	flag.IntVar(&o.Samples, "samples", 3, "samples of discovery convergence and its floors per size, interleaved")
	flag.IntVar(&o.LimitWorkers, "limit-workers", 0, "workers of the write-limit floor (0: found by a sweep at the first size)")
	qps := flag.Int("qps", 0, "FUNP_KUBE_API_QPS for the plugin (0: its default)")
	burst := flag.Int("burst", 0, "FUNP_KUBE_API_BURST for the plugin (0: its default)")
	flag.StringVar(&o.Profiles, "profiles", "", "folder for the plugin's pprof profiles (heap after convergence and at the end, CPU during the edits); empty: not profiled")
	flag.StringVar(&o.RepoRoot, "plugin-from", root, "source tree the plugin is built from, to measure another version with this benchmark (git archive COMMIT | tar -x -C DIR)")
	results := flag.String("results", "results/bench", "folder for results.json, results.txt and chart.png")
	flag.Func("plugin-env", "KEY=VALUE in the plugin's environment (repeatable), e.g. KUBE_FEATURE_WatchListClient=false", func(kv string) error {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", kv)
		}
		o.PluginEnv = append(o.PluginEnv, kv)
		return nil
	})
	flag.Parse()
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench: bad size %q\n", s)
			os.Exit(2)
		}
		o.Sizes = append(o.Sizes, n)
	}
	if *qps > 0 {
		o.PluginEnv = append(o.PluginEnv, fmt.Sprintf("FUNP_KUBE_API_QPS=%d", *qps))
	}
	if *burst > 0 {
		o.PluginEnv = append(o.PluginEnv, fmt.Sprintf("FUNP_KUBE_API_BURST=%d", *burst))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	report, err := bench.Measure(ctx, o)
	fmt.Println()
	report.WriteTable(os.Stdout)
	if saveErr := report.Save(*results); saveErr != nil {
		fmt.Fprintln(os.Stderr, "bench: save results:", saveErr)
	} else {
		fmt.Printf("\nresults: %s/{results.json,results.txt,chart.png}\n", *results)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if !report.Pass() {
		fmt.Println("some targets were missed")
		os.Exit(1)
	}
}
