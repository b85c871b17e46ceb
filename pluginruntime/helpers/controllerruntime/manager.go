// Package controllerruntime scaffolds a controller-runtime manager that fits
// inside the plugin runtime: it logs through the runtime's JSON logger, it
// leaves :8080 and the health probes to the runtime, and it serves its
// Prometheus metrics on a port of its own.
//
//	func (p *plugin) Start(ctx context.Context, host pluginruntime.Host) error {
//		mgr, err := controllerruntime.NewManager(ctrl.GetConfigOrDie(), host, manager.Options{Scheme: scheme})
//		if err != nil {
//			return pluginerrors.NewPermanent(err)
//		}
//		if err := (&PoolReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
//			return pluginerrors.NewPermanent(err)
//		}
//		host.ReportReady()
//		return mgr.Start(ctx)
//	}
package controllerruntime

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// DefaultMetricsAddr is where the manager serves Prometheus metrics unless
// the options say otherwise. controller-runtime's own default, :8080, is
// the runtime's port.
const DefaultMetricsAddr = ":8081"

// NewManager returns a manager for config with opts, adjusted for a plugin:
//
//   - Logger defaults to host's logger (as logr), which also becomes
//     controller-runtime's and klog's global logger, so client-go's
//     messages are JSON lines with the plugin's attributes too;
//   - Metrics.BindAddress defaults to DefaultMetricsAddr ("0" disables),
//     and the metrics include the API client's request and rate-limiter
//     latencies by verb (clientmetrics.go);
//   - HealthProbeBindAddress defaults to "0": the runtime's /livez and
//     /readyz are the plugin's probes.
//
// A leader's graceful stop is logged as what it is, not as an error (see
// shutdownSink).
//
// Everything else is the caller's, leader election included (a plugin runs
// one replica, so it is off unless asked for).
func NewManager(config *rest.Config, host pluginruntime.Host, opts manager.Options) (manager.Manager, error) {
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.FromSlogHandler(host.Logger().Handler())
	}
	opts.Logger = opts.Logger.WithSink(shutdownSink{opts.Logger.GetSink()})
	ctrllog.SetLogger(opts.Logger)
	klog.SetLogger(opts.Logger)
	if opts.Metrics.BindAddress == "" {
		opts.Metrics.BindAddress = DefaultMetricsAddr
	}
	exportClientLatencies()
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	mgr, err := manager.New(config, opts)
	if err != nil {
		return nil, fmt.Errorf("controller-runtime manager: %w", err)
	}
	return mgr, nil
}

// Messages of controller-runtime's manager (pkg/manager/internal.go) on a
// graceful stop of a leader: once its runnables stopped, it cancels leader
// election itself, whose OnStoppedLeading callback reports "leader
// election lost" on the error channel, which the stop sequence logs as an
// error — on every ordinary shutdown of a leader, the lease released as
// asked (LeaderElectionReleaseOnCancel).
const (
	stopSequenceMessage = "error received after stop sequence was engaged"
	leaderLostError     = "leader election lost"
)

// shutdownSink logs that one message at info level, as the lease released
// on shutdown; everything else passes through.
type shutdownSink struct{ logr.LogSink }

func (s shutdownSink) Error(err error, msg string, keysAndValues ...any) {
	if msg == stopSequenceMessage && err != nil && err.Error() == leaderLostError {
		s.LogSink.Info(0, "stopped leading: the leader lease was released on shutdown", keysAndValues...)
		return
	}
	s.LogSink.Error(err, msg, keysAndValues...)
}

func (s shutdownSink) WithValues(keysAndValues ...any) logr.LogSink {
	return shutdownSink{s.LogSink.WithValues(keysAndValues...)}
}

func (s shutdownSink) WithName(name string) logr.LogSink {
	return shutdownSink{s.LogSink.WithName(name)}
}
