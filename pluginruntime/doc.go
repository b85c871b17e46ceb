// Package pluginruntime hosts a Fundament plugin: it does the process-level
// work every plugin needs — configuration from the platform's environment,
// a JSON logger, OpenTelemetry, health probes, the metadata API the
// platform's controller polls, lifecycle phases with retries, and graceful
// shutdown — so that a plugin implements only its own logic.
//
// A plugin implements Plugin, and optionally Reconciler, Installer and
// ConsoleProvider, and hands itself to Run:
//
//	//go:embed definition.yaml
//	var definitionYAML []byte
//
//	type plugin struct{ def *definition.PluginDefinition }
//
//	func (p *plugin) Definition() pluginruntime.PluginDefinition { return *p.def }
//
//	func (p *plugin) Start(ctx context.Context, host pluginruntime.Host) error {
//		if err := installOperator(ctx); err != nil {
//			return pluginerrors.NewTransient(fmt.Errorf("install operator: %w", err))
//		}
//		host.ReportReady()
//		<-ctx.Done()
//		return nil
//	}
//
//	func (p *plugin) Shutdown(ctx context.Context) error { return nil }
//
//	func main() {
//		pluginruntime.Run(&plugin{def: definition.MustParseDefinition(definitionYAML)})
//	}
//
// # Phases
//
// A plugin starts installing and moves through running, degraded, failed
// and uninstalling as the platform's lifecycle allows; GetStatus reports the
// phase. The runtime moves it on the plugin's errors — a transient one
// (pluginerrors.NewTransient, or any unclassified error) degrades it and is
// retried with backoff, a permanent one (pluginerrors.NewPermanent) fails
// it — and on Host.ReportReady. Host.ReportStatus sets it directly. A
// change the lifecycle forbids, such as failed → running, is refused and
// logged: leaving failed takes a restart.
//
// # Helpers
//
// The sub-packages are conveniences a plugin may use: helpers/helm
// (install charts with the Helm SDK), helpers/helm/helmexec (run that
// install in a helper process, so the plugin does not link Helm),
// helpers/crd (wait for CRDs),
// helpers/controllerruntime (a manager logging through the runtime),
// console (serve embedded console pages), auth (JWT checks for Connect
// APIs) and definition (parse and hash definition.yaml).
package pluginruntime
