// Command ceph-rook is the Fundament plugin that gives a cluster block,
// shared file and S3 object storage by installing and driving Rook-Ceph.
//
// The platform runs it as a Deployment; locally `just run` runs it against
// an embedded control plane. It finds the API server in-cluster or through
// $KUBECONFIG, and is configured by the FUNDAMENT_ and FUNP_ variables the
// plugin controller injects (see config.go and definition.yaml).
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
