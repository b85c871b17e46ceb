package main

import (
	"flag"
	"os"
	"runtime/debug"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

func main() {
	// GOMEMLIMIT, when set, is already in force; otherwise the limit
	// follows the container's (memlimit.go).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit(containerMemoryLimit()))
	}
	addr := flag.String("addr", ":8080", "listen address of the HTTP server (probes, metadata API, console)")
	metricsAddr := flag.String("metrics-addr", ":8081", `listen address of the controllers' Prometheus metrics ("0": off)`)
	pprofAddr := flag.String("pprof-addr", "", "listen address of Go's pprof profiles (empty: off)")
	flag.Parse()
	pluginruntime.Run(NewPlugin().WithMetricsAddr(*metricsAddr).WithPprofAddr(*pprofAddr), pluginruntime.WithAddr(*addr))
}
