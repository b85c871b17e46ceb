package pluginruntime

import "log/slog"

// Host is the runtime as the plugin sees it, passed to Start, Reconcile and
// the Installer methods. It is safe for concurrent use.
type Host interface {
	// Logger is the runtime's JSON logger, at FUNP_LOG_LEVEL, carrying the
	// plugin's name and installation ids.
	Logger() *slog.Logger
	// Telemetry gives tracers and meters that export with the runtime's.
	Telemetry() TelemetryService
	// ReportStatus sets the phase and message GetStatus returns. A change
	// the lifecycle forbids (failed → running, say) is refused and logged;
	// the runtime's own transitions follow the same rules.
	ReportStatus(status PluginStatus)
	// ReportReady makes /readyz succeed and moves an installing or degraded
	// plugin to running.
	ReportReady()
}

type host struct {
	logger    *slog.Logger
	telemetry *telemetry
	board     *statusBoard
}

func (h *host) Logger() *slog.Logger             { return h.logger }
func (h *host) Telemetry() TelemetryService      { return h.telemetry }
func (h *host) ReportStatus(status PluginStatus) { _ = h.board.set(status) }
func (h *host) ReportReady()                     { h.board.markReady() }
