package pluginruntime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// instrumentationName names the runtime's tracer and meter.
const instrumentationName = "github.com/fundament-oss/ceph-rook/pluginruntime"

// Run hosts p for the life of the process and is meant to be all of main:
//
//	func main() {
//		pluginruntime.Run(&myPlugin{})
//	}
//
// It returns after a clean stop (SIGTERM or SIGINT, Shutdown done, server
// drained). Any other end — a missing or invalid FUNDAMENT_ variable, an
// invalid definition, a Shutdown that fails or overruns its deadline — is
// logged and exits the process with status 1, so a misconfigured plugin
// never runs half-configured. See RunContext for what hosting involves.
func Run(p Plugin, opts ...Option) {
	err := RunContext(context.Background(), p, opts...)
	if err == nil {
		return
	}
	o := newOptions(opts)
	slog.New(slog.NewJSONHandler(o.logOutput, nil)).Error("plugin runtime failed", "error", err.Error())
	os.Exit(1)
}

// RunContext hosts p until ctx ends or a stop signal arrives, and returns
// what went wrong, if anything. Run is RunContext plus the process exit; use
// RunContext to embed the runtime or test a plugin in-process.
//
// Hosting means:
//   - the FUNDAMENT_ and FUNP_ variables are parsed (Environment), and the
//     definition validated; either failing returns an error at once;
//   - a JSON slog logger at FUNP_LOG_LEVEL, and OpenTelemetry tracer and
//     meter providers (exporting only if OTEL_ variables say so), which
//     also become the otel globals;
//   - one HTTP server (":8080", WithAddr) with GET /livez (always 200),
//     GET /readyz (503 until Host.ReportReady, and again while stopping),
//     the Connect PluginMetadataService, and /console/ for a
//     ConsoleProvider (regular files only, under the console CSP built
//     from FUNDAMENT_CONSOLE_ORIGIN and FUNDAMENT_KUBE_API_PROXY_ORIGIN);
//     every connection and request is bounded in time and size
//     (ServerLimits, WithServerLimits);
//   - the PluginMetadataService requires a platform token when the
//     FUNDAMENT_TOKEN_ variables configure one (EnvTokenIssuer) or WithAuth
//     gives a validator; the probes and the console never do;
//   - Install (for an Installer) and Start, retried with backoff while they
//     fail transiently, and Reconcile every FUNP_RECONCILE_INTERVAL for a
//     Reconciler, each in a span;
//   - on stop, the plugin's context is cancelled, then Start is awaited,
//     Plugin.Shutdown called and the server drained, all within the
//     shutdown timeout (WithShutdownTimeout).
//
// RequestUninstall stops Start and Reconcile, runs Installer.Uninstall and
// Plugin.Shutdown, but keeps the process and its endpoints up: the platform
// deletes the plugin next, and exiting would only make Kubernetes restart
// it and install again.
func RunContext(ctx context.Context, p Plugin, opts ...Option) (err error) {
	o := newOptions(opts)
	if o.authSet && o.auth == nil {
		return errors.New("WithAuth: the validator is nil")
	}
	env, err := parseEnvironment(o.environ)
	if err != nil {
		return err
	}
	vars := environMap(o.environ)
	validator := o.auth
	if !o.authSet {
		validator, err = tokenValidatorFromEnviron(vars)
	}
	origins, originsErr := consoleOriginsFromEnviron(vars)
	if err := errors.Join(err, originsErr); err != nil {
		return err
	}
	def := p.Definition()
	if err := def.Validate(); err != nil {
		return fmt.Errorf("plugin definition: %w", err)
	}
	logger := slog.New(slog.NewJSONHandler(o.logOutput, &slog.HandlerOptions{Level: env.LogLevel})).
		With("plugin", def.Metadata.Name)
	tel, err := newTelemetry(ctx, &def, env, o)
	if err != nil {
		return err
	}
	ln := o.listener
	if ln == nil {
		if ln, err = net.Listen("tcp", o.addr); err != nil {
			return errors.Join(fmt.Errorf("listen on %s: %w", o.addr, err), tel.shutdown(ctx))
		}
	}
	if len(o.signals) > 0 {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, o.signals...)
		defer stop()
	}

	board := newStatusBoard(logger)
	r := &runtime{
		plugin: p,
		env:    env,
		opts:   o,
		logger: logger,
		tracer: tel.Tracer(instrumentationName),
		tel:    tel,
		board:  board,
		host:   &host{logger: logger, telemetry: tel, board: board},
		limits: o.limits.withDefaults(),
		auth:   validator,
		// The policy is fixed for the life of the process, so it is
		// rendered once.
		consoleCSP: origins.csp(),
	}
	logSecurity(logger, validator != nil, origins, p)
	return r.run(ctx, ln)
}

// runtime is one hosted plugin.
type runtime struct {
	plugin Plugin
	env    Environment
	opts   options
	logger *slog.Logger
	tracer trace.Tracer
	tel    *telemetry
	board  *statusBoard
	host   *host
	limits ServerLimits
	// auth, when set, guards the PluginMetadataService (WithAuth, or the
	// FUNDAMENT_TOKEN_ variables).
	auth       *auth.Validator
	consoleCSP string

	// ctx ends when the runtime stops; work is Start and Reconcile, which
	// also end when an uninstall begins.
	ctx        context.Context
	cancelWork context.CancelFunc
	work       sync.WaitGroup
	// uninstalling is the uninstall goroutine, at most one; mu orders its
	// start against stop's wait for it.
	mu                 sync.Mutex
	stopping           bool
	uninstallRequested bool
	uninstalling       sync.WaitGroup

	shutdownOnce sync.Once
	shutdownErr  error
}

func (r *runtime) run(ctx context.Context, ln net.Listener) error {
	r.ctx = ctx
	workCtx, cancelWork := context.WithCancel(withEnvironment(ctx, r.env))
	r.cancelWork = cancelWork
	defer cancelWork()

	// Work starts before the server so that an early RequestUninstall
	// always finds it to stop.
	r.work.Go(func() { r.superviseStart(workCtx) })
	if rec, ok := r.plugin.(Reconciler); ok {
		r.work.Go(func() { r.reconcileLoop(workCtx, rec) })
	}

	srv := newHTTPServer(r.routes(), r.limits, r.logger)
	r.logger.Info("plugin runtime started",
		"addr", ln.Addr().String(),
		"clusterID", r.env.ClusterID,
		"installID", r.env.InstallID,
		"organizationID", r.env.OrganizationID,
		"reconcileInterval", r.env.ReconcileInterval.String())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
		r.logger.Info("stopping plugin", "cause", context.Cause(ctx).Error())
	case err := <-served:
		serveErr = fmt.Errorf("HTTP server: %w", err)
		r.logger.Error("HTTP server failed; stopping plugin", "error", err)
	}
	return errors.Join(serveErr, r.stop(ctx, srv))
}

// stop ends everything within the shutdown timeout. Readiness goes first so
// the Service stops sending traffic while the plugin winds down.
func (r *runtime) stop(ctx context.Context, srv *http.Server) error {
	r.mu.Lock()
	r.stopping = true
	r.mu.Unlock()
	r.board.setReady(false)
	r.cancelWork()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.shutdownTimeout)
	defer cancel()

	var errs []error
	if !waitFor(ctx, &r.work) {
		errs = append(errs, fmt.Errorf("start and reconcile did not return within the shutdown timeout of %s", r.opts.shutdownTimeout))
	}
	if !waitFor(ctx, &r.uninstalling) {
		errs = append(errs, fmt.Errorf("uninstall did not return within the shutdown timeout of %s", r.opts.shutdownTimeout))
	}
	errs = append(errs, r.shutdownPlugin(ctx))
	if err := srv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("drain HTTP server: %w", err))
	}
	if err := r.tel.shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush telemetry: %w", err))
	}
	err := errors.Join(errs...)
	if err != nil {
		r.logger.Error("plugin stopped with errors", "error", err)
	} else {
		r.logger.Info("plugin stopped")
	}
	return err
}

// shutdownPlugin calls Plugin.Shutdown once, whether uninstall or stop comes
// first, and stops waiting for it when ctx ends.
func (r *runtime) shutdownPlugin(ctx context.Context) error {
	r.shutdownOnce.Do(func() {
		done := make(chan error, 1)
		go func() {
			done <- r.call(ctx, "Shutdown", nil, func(ctx context.Context) error { return r.plugin.Shutdown(ctx) })
		}()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			select {
			case err = <-done: // returned just in time
			default:
				r.shutdownErr = fmt.Errorf("plugin shutdown did not return within the shutdown timeout of %s", r.opts.shutdownTimeout)
				return
			}
		}
		if err != nil {
			r.shutdownErr = fmt.Errorf("plugin shutdown: %w", err)
		}
	})
	return r.shutdownErr
}

// superviseStart runs Install and Start until Start returns without error
// or fails permanently, or the runtime stops.
func (r *runtime) superviseStart(ctx context.Context) {
	inst, isInstaller := r.plugin.(Installer)
	bo := newBackoff(r.opts.retryInitial, r.opts.retryMax)
	for attempt := 1; ; attempt++ {
		began := time.Now()
		attrs := []attribute.KeyValue{attribute.Int("pluginruntime.attempt", attempt)}
		var err error
		if isInstaller {
			err = r.call(ctx, "Install", attrs, func(ctx context.Context) error { return inst.Install(ctx, r.host) })
			if err != nil {
				err = fmt.Errorf("install: %w", err)
			}
		}
		if err == nil {
			err = r.call(ctx, "Start", attrs, func(ctx context.Context) error { return r.plugin.Start(ctx, r.host) })
			if err != nil {
				err = fmt.Errorf("start: %w", err)
			}
		}
		if ctx.Err() != nil {
			return // stopping; whatever Start returned is a consequence
		}
		if err == nil {
			if !r.board.isReady() {
				r.logger.Warn("Start returned without calling ReportReady; the plugin stays unready")
			}
			r.logger.Info("Start returned; the plugin keeps serving until it is stopped")
			return
		}
		if !r.degradeOrFail(err) {
			return
		}
		if time.Since(began) >= r.opts.retryMax {
			bo.reset() // it ran well for a while: this is a new problem
		}
		delay := bo.delay()
		r.logger.Warn("start failed; retrying", "error", err.Error(), "attempt", attempt, "retryIn", delay.String())
		if !sleep(ctx, delay) {
			return
		}
	}
}

// degradeOrFail records a failure in the phase and reports whether it is
// worth retrying: permanent errors fail the plugin, others degrade it.
func (r *runtime) degradeOrFail(err error) (retry bool) {
	if pluginerrors.IsPermanent(err) {
		r.logger.Error("permanent error; the plugin needs human intervention", "error", err.Error())
		_ = r.board.set(PluginStatus{Phase: PhaseFailed, Message: err.Error()})
		return false
	}
	_ = r.board.set(PluginStatus{Phase: PhaseDegraded, Message: err.Error()})
	return true
}

func (r *runtime) reconcileLoop(ctx context.Context, rec Reconciler) {
	ticker := time.NewTicker(r.env.ReconcileInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			r.reconcileOnce(ctx, rec)
		}
	}
}

func (r *runtime) reconcileOnce(ctx context.Context, rec Reconciler) {
	if phase := r.board.get().Phase; phase == PhaseFailed || phase == PhaseUninstalling {
		r.logger.Debug("reconcile skipped", "phase", phase)
		return
	}
	err := r.call(ctx, "Reconcile", nil, func(ctx context.Context) error { return rec.Reconcile(ctx, r.host) })
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.logger.Warn("reconcile failed", "error", err.Error())
		r.degradeOrFail(fmt.Errorf("reconcile: %w", err))
	case r.board.isReady():
		r.board.setIf(PluginStatus{Phase: PhaseRunning}, PhaseDegraded)
	}
}

// requestUninstall begins an uninstall in the background; the platform
// follows it through GetStatus. Repeated requests are accepted and change
// nothing, so the controller may retry freely.
func (r *runtime) requestUninstall() error {
	inst, ok := r.plugin.(Installer)
	if !ok {
		return errNoInstaller
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopping || r.ctx.Err() != nil:
		return errStopping
	case r.uninstallRequested:
		return nil
	}
	if err := r.board.set(PluginStatus{Phase: PhaseUninstalling, Message: "uninstall requested"}); err != nil {
		return err
	}
	r.uninstallRequested = true
	r.uninstalling.Go(func() { r.uninstall(inst) })
	return nil
}

var (
	errNoInstaller = errors.New("this plugin does not implement pluginruntime.Installer, so it cannot uninstall")
	errStopping    = errors.New("the plugin is stopping")
)

func (r *runtime) uninstall(inst Installer) {
	r.cancelWork()
	if !waitFor(r.ctx, &r.work) {
		return
	}
	ctx := withEnvironment(r.ctx, r.env)
	bo := newBackoff(r.opts.retryInitial, r.opts.retryMax)
	for attempt := 1; ; attempt++ {
		attrs := []attribute.KeyValue{attribute.Int("pluginruntime.attempt", attempt)}
		err := r.call(ctx, "Uninstall", attrs, func(ctx context.Context) error { return inst.Uninstall(ctx, r.host) })
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			r.host.ReportStatus(PluginStatus{Phase: PhaseUninstalling, Message: "uninstalled; waiting to be removed"})
			break
		}
		if pluginerrors.IsPermanent(err) {
			r.logger.Error("uninstall failed permanently", "error", err.Error())
			r.host.ReportStatus(PluginStatus{Phase: PhaseFailed, Message: "uninstall: " + err.Error()})
			break
		}
		delay := bo.delay()
		r.logger.Warn("uninstall failed; retrying", "error", err.Error(), "attempt", attempt, "retryIn", delay.String())
		r.host.ReportStatus(PluginStatus{Phase: PhaseUninstalling, Message: "uninstall failed, retrying: " + err.Error()})
		if !sleep(ctx, delay) {
			return
		}
	}
	// The deadline is Shutdown's own; a stop arriving meanwhile must not cut
	// it short (stop waits for this goroutine anyway).
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), r.opts.shutdownTimeout)
	defer cancel()
	if err := r.shutdownPlugin(shutdownCtx); err != nil {
		r.logger.Error("plugin shutdown after uninstall failed", "error", err.Error())
	}
}

// call runs one plugin method in a span named pluginruntime.<name>. A panic
// becomes an error: one bad reconcile must not take the metadata API and
// the retry loop down with it.
func (r *runtime) call(ctx context.Context, name string, attrs []attribute.KeyValue, fn func(context.Context) error) (err error) {
	ctx, span := r.tracer.Start(ctx, "pluginruntime."+name, trace.WithAttributes(attrs...))
	defer func() {
		if p := recover(); p != nil {
			r.logger.Error("plugin panicked", "method", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%s panicked: %v", name, p)
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			span.SetAttributes(attribute.String("pluginruntime.error_class", pluginerrors.ClassOf(err).String()))
		}
		span.End()
	}()
	return fn(ctx)
}

// waitFor waits for wg or ctx, and reports whether wg finished.
func waitFor(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// logSecurity says at start what the platform's environment left open, so
// an unguarded installation shows in the first lines of its log.
func logSecurity(logger *slog.Logger, guarded bool, origins consoleOrigins, p Plugin) {
	if guarded {
		logger.Info("the metadata API requires a platform token")
	} else {
		logger.Warn("the metadata API answers without a token: set " + strings.Join(tokenVariables, ", ") + " to require one")
	}
	if _, ok := p.(ConsoleProvider); !ok {
		return
	}
	var open []string
	if origins.console == "" {
		open = append(open, EnvConsoleOrigin+" unset: any site may frame the console pages")
	}
	if origins.kubeAPIProxy == "" {
		open = append(open, EnvKubeAPIProxyOrigin+" unset: the pages may connect to any origin")
	}
	if len(open) > 0 {
		logger.Warn("console CSP left partly open", "reasons", open)
	}
}
