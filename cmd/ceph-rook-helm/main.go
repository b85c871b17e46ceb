// Command ceph-rook-helm installs or upgrades one Helm release for the
// ceph-rook plugin, which runs it as a child process so that the
// long-running plugin does not link the Helm SDK (see package
// pluginruntime/helpers/helm/helmexec for the protocol).
//
//	ceph-rook-helm --kubeconfig=FILE [--kube-api-qps=N --kube-api-burst=N] < request.json > response.json
//
// It reads one JSON request on stdin and writes one JSON response on
// stdout; it logs JSON to stderr at FUNP_LOG_LEVEL (default info) and
// exits 1 when the release could not be installed. SIGTERM or SIGINT
// cancel the install.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

// envLogLevel is the runtime's log level variable (pluginruntime.EnvLogLevel),
// which the plugin's environment passes on to this process.
const envLogLevel = "FUNP_LOG_LEVEL"

func main() {
	kubeconfig := flag.String(helmexec.FlagKubeconfig, "", "kubeconfig of the API server to install into (required)")
	qps := flag.Float64(helmexec.FlagKubeAPIQPS, 0, "client QPS limit (0: client-go's default)")
	burst := flag.Int(helmexec.FlagKubeAPIBurst, 0, "client burst limit (0: client-go's default)")
	flag.Parse()

	logger, err := newLogger(os.Getenv(envLogLevel))
	if err == nil {
		err = run(*kubeconfig, float32(*qps), *burst, logger)
	}
	if err != nil {
		os.Exit(1)
	}
}

func run(kubeconfig string, qps float32, burst int, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if kubeconfig == "" {
		return fail(logger, fmt.Errorf("--%s is required", helmexec.FlagKubeconfig))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fail(logger, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err))
	}
	if qps > 0 {
		cfg.QPS = qps
	}
	if burst > 0 {
		cfg.Burst = burst
	}
	// The Rook chart's values hold nothing secret, and the plugin's
	// ClusterRole grants no Secrets.
	c, err := helm.New(cfg, helm.WithLogger(logger), helm.WithConfigMapStorage())
	if err != nil {
		return fail(logger, err)
	}
	if err := c.ServeRequest(ctx, os.Stdin, os.Stdout); err != nil {
		logger.Error("helm release failed", "error", err.Error())
		return err
	}
	return nil
}

func fail(logger *slog.Logger, err error) error {
	logger.Error("helm helper failed", "error", err.Error())
	return helm.WriteFailure(os.Stdout, err)
}

// newLogger logs JSON to stderr at level, as the plugin runtime's logger
// does, so the helper's lines read like the plugin's in the container log.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			err = fmt.Errorf("%s=%q is not a log level (debug, info, warn, error)", envLogLevel, level)
			return nil, helm.WriteFailure(os.Stdout, err)
		}
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})).
		With("plugin", "ceph-rook", "process", "ceph-rook-helm"), nil
}
