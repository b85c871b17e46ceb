package pluginruntime

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
)

// Phase is where a plugin is in its lifecycle. The platform's controller
// reads it through GetStatus and shows it on the PluginInstallation.
type Phase string

// The phases of a plugin.
const (
	// PhaseInstalling: the plugin is setting up (e.g. installing a chart).
	PhaseInstalling Phase = "installing"
	// PhaseRunning: the plugin is healthy and operational.
	PhaseRunning Phase = "running"
	// PhaseDegraded: a transient error; the runtime is retrying.
	PhaseDegraded Phase = "degraded"
	// PhaseFailed: a permanent error; a human has to intervene.
	PhaseFailed Phase = "failed"
	// PhaseUninstalling: the plugin is cleaning up before its removal.
	PhaseUninstalling Phase = "uninstalling"
)

// PluginStatus is what the plugin reports to the platform.
type PluginStatus struct {
	Phase   Phase
	Message string
}

// transitions is the lifecycle as data: for each phase, the phases it may
// move to. Staying in a phase (to change the message) is always allowed.
// Failed is left only by uninstalling: recovering from a permanent error
// takes a restart, which starts over in installing.
var transitions = map[Phase][]Phase{
	PhaseInstalling:   {PhaseRunning, PhaseDegraded, PhaseFailed, PhaseUninstalling},
	PhaseRunning:      {PhaseDegraded, PhaseFailed, PhaseUninstalling},
	PhaseDegraded:     {PhaseRunning, PhaseFailed, PhaseUninstalling},
	PhaseFailed:       {PhaseUninstalling},
	PhaseUninstalling: {PhaseFailed},
}

// checkTransition returns why from → to is not allowed, or nil.
func checkTransition(from, to Phase) error {
	if _, known := transitions[to]; !known {
		return fmt.Errorf("unknown phase %q", to)
	}
	if from == to || slices.Contains(transitions[from], to) {
		return nil
	}
	return fmt.Errorf("illegal phase transition %s → %s", from, to)
}

// statusBoard holds the plugin's status and readiness, shared by the host,
// the lifecycle goroutines and the metadata service.
type statusBoard struct {
	logger *slog.Logger

	mu     sync.Mutex
	status PluginStatus
	ready  bool
}

func newStatusBoard(logger *slog.Logger) *statusBoard {
	return &statusBoard{logger: logger, status: PluginStatus{Phase: PhaseInstalling}}
}

// set moves to status if the lifecycle allows it; a refusal is logged and
// returned.
func (b *statusBoard) set(status PluginStatus) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.setLocked(status)
}

func (b *statusBoard) setLocked(status PluginStatus) error {
	from := b.status.Phase
	if err := checkTransition(from, status.Phase); err != nil {
		b.logger.Warn("status change refused", "error", err, "from", from, "to", status.Phase, "message", status.Message)
		return err
	}
	if from != status.Phase {
		b.logger.Info("phase changed", "from", from, "to", status.Phase, "message", status.Message)
	}
	b.status = status
	return nil
}

// setIf moves to status only while the phase is one of from, and reports
// whether it did. The runtime uses it to recover (degraded → running)
// without overriding a phase that changed meanwhile.
func (b *statusBoard) setIf(status PluginStatus, from ...Phase) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !slices.Contains(from, b.status.Phase) {
		return false
	}
	return b.setLocked(status) == nil
}

func (b *statusBoard) get() PluginStatus {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// markReady flips readiness and ends installing or degraded: the plugin
// says it serves its purpose.
func (b *statusBoard) markReady() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.ready {
		b.logger.Info("plugin reported ready")
	}
	b.ready = true
	if b.status.Phase == PhaseInstalling || b.status.Phase == PhaseDegraded {
		_ = b.setLocked(PluginStatus{Phase: PhaseRunning})
	}
}

func (b *statusBoard) setReady(ready bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ready = ready
}

func (b *statusBoard) isReady() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ready
}
