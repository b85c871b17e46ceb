package pluginruntime

import (
	"context"
	"net/http"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// PluginDefinition is the plugin's definition.yaml; see package definition
// for parsing and validation.
type PluginDefinition = definition.PluginDefinition

// Plugin is what a plugin binary implements; Run hosts it.
type Plugin interface {
	// Definition returns the plugin's static metadata, usually parsed from
	// an embedded definition.yaml with definition.MustParseDefinition.
	Definition() PluginDefinition
	// Start does the plugin's work and blocks until ctx is cancelled. It is
	// called on every container start, restarts included, so it must be
	// idempotent: upgrade-or-install rather than install, check before
	// creating. Call host.ReportReady once the plugin serves its purpose.
	//
	// An error classified with pluginerrors.NewPermanent fails the plugin;
	// any other error degrades it and Start is called again after a
	// backoff. Returning nil before ctx ends is allowed: the plugin keeps
	// serving its endpoints (and reconciling) until it is stopped.
	Start(ctx context.Context, host Host) error
	// Shutdown releases what Start acquired. Its context carries the
	// shutdown deadline (WithShutdownTimeout).
	Shutdown(ctx context.Context) error
}

// Reconciler is implemented by plugins that check and repair their state
// periodically, every FUNP_RECONCILE_INTERVAL (default 5m). A successful
// Reconcile while degraded is the runtime's evidence that the problem is
// resolved, and the plugin returns to running; errors are classified as
// for Start. Reconcile is not called while the plugin is failed or
// uninstalling.
type Reconciler interface {
	Reconcile(ctx context.Context, host Host) error
}

// Installer is implemented by plugins with a structured install lifecycle.
// Install runs before every Start attempt and must be idempotent.
// Uninstall runs when the platform calls RequestUninstall, after Start has
// been stopped. Upgrade is not called by this runtime: without state of
// its own it cannot tell an upgrade from a restart, so Install must handle
// both.
type Installer interface {
	Install(ctx context.Context, host Host) error
	Uninstall(ctx context.Context, host Host) error
	Upgrade(ctx context.Context, host Host) error
}

// ConsoleProvider is implemented by plugins that ship console pages; they
// are served under /console/. Package console turns an embed.FS into the
// file system.
type ConsoleProvider interface {
	ConsoleAssets() http.FileSystem
}
