// Command localrun is `just run`: ceph-rook on a laptop with no cluster
// (see internal/localrun). Run it from the repository root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fundament-oss/ceph-rook/internal/localrun"
)

func main() {
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "just run:", err)
		os.Exit(1)
	}
	o := localrun.DefaultOptions(root)
	flag.StringVar(&o.DataDir, "data", o.DataDir, "folder for the local cluster's state, kubeconfig and plugin log")
	flag.BoolVar(&o.Fresh, "fresh", false, "start from an empty cluster (deletes the data folder first)")
	flag.StringVar(&o.PluginAddr, "plugin-addr", o.PluginAddr, "the plugin's HTTP server (probes, metadata API, console assets)")
	flag.StringVar(&o.ConsoleAddr, "console-addr", o.ConsoleAddr, "the development console host")
	flag.StringVar(&o.PluginOriginAddr, "plugin-origin-addr", o.PluginOriginAddr, "the console's plugin-page origin")
	flag.StringVar(&o.SimulatorAddr, "simulator-addr", o.SimulatorAddr, "the simulation's control API")
	flag.Parse()
	if _, err := os.Stat("definition.yaml"); err != nil {
		fmt.Fprintln(os.Stderr, "just run: run from the repository root (definition.yaml not found)")
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := localrun.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "just run:", err)
		os.Exit(1)
	}
}
