package pluginruntime

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"connectrpc.com/connect"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
)

// Option changes how Run hosts a plugin. The defaults are what the platform
// expects in a container; options exist for tests and special deployments.
type Option func(*options)

type options struct {
	addr            string
	listener        net.Listener
	signals         []os.Signal
	environ         []string
	logOutput       io.Writer
	shutdownTimeout time.Duration
	retryInitial    time.Duration
	retryMax        time.Duration
	tracerOptions   []sdktrace.TracerProviderOption
	meterOptions    []sdkmetric.Option
	metadataOptions []connect.HandlerOption
	// auth, when authSet, guards the PluginMetadataService; authSet with a
	// nil auth is a mistake RunContext reports.
	auth    *auth.Validator
	authSet bool
	// limits are as given; run fills in the defaults.
	limits ServerLimits
}

// DefaultShutdownTimeout bounds Shutdown and the HTTP server's drain. The
// plugin's Pod should allow a little more (terminationGracePeriodSeconds)
// so that the runtime, not SIGKILL, ends the process.
const DefaultShutdownTimeout = 30 * time.Second

func newOptions(opts []Option) options {
	o := options{
		addr:            ":8080",
		signals:         []os.Signal{syscall.SIGTERM, os.Interrupt},
		logOutput:       os.Stderr,
		shutdownTimeout: DefaultShutdownTimeout,
		retryInitial:    time.Second,
		retryMax:        2 * time.Minute,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.environ == nil {
		o.environ = os.Environ()
	}
	return o
}

// WithAddr sets the HTTP server's listen address (default ":8080", the
// port the platform's Service targets).
func WithAddr(addr string) Option {
	return func(o *options) { o.addr = addr }
}

// WithListener serves on l instead of listening on an address; tests pass a
// listener on port 0. Run closes it.
func WithListener(l net.Listener) Option {
	return func(o *options) { o.listener = l }
}

// WithSignals replaces the signals that stop the plugin (default SIGTERM and
// SIGINT). With none, only the context passed to RunContext stops it.
func WithSignals(signals ...os.Signal) Option {
	return func(o *options) { o.signals = signals }
}

// WithEnviron replaces the process environment as the source of the
// FUNDAMENT_ and FUNP_ variables; entries are KEY=value as in os.Environ.
// OpenTelemetry's OTEL_ variables are always read from the process.
func WithEnviron(environ []string) Option {
	return func(o *options) { o.environ = environ }
}

// WithLogOutput sends the JSON log to w instead of standard error.
func WithLogOutput(w io.Writer) Option {
	return func(o *options) { o.logOutput = w }
}

// WithShutdownTimeout bounds how long stopping may take: waiting for Start to
// return, Plugin.Shutdown, and draining the HTTP server share this deadline
// (default DefaultShutdownTimeout).
func WithShutdownTimeout(d time.Duration) Option {
	return func(o *options) { o.shutdownTimeout = d }
}

// WithRetryBackoff sets the delay before the first retry of a transiently
// failed Start or Uninstall, and the cap the doubling delay grows to
// (default 1s and 2m).
func WithRetryBackoff(initial, max time.Duration) Option {
	return func(o *options) { o.retryInitial, o.retryMax = initial, max }
}

// WithTracerProviderOptions adds options to the tracer provider, after the
// runtime's own (resource, exporters configured by OTEL_ variables). Tests
// inject an in-memory exporter this way:
//
//	spans := tracetest.NewInMemoryExporter()
//	pluginruntime.RunContext(ctx, p, pluginruntime.WithTracerProviderOptions(sdktrace.WithSyncer(spans)))
func WithTracerProviderOptions(opts ...sdktrace.TracerProviderOption) Option {
	return func(o *options) { o.tracerOptions = append(o.tracerOptions, opts...) }
}

// WithMeterProviderOptions adds options to the meter provider, for example
// sdkmetric.WithReader(sdkmetric.NewManualReader()) in a test.
func WithMeterProviderOptions(opts ...sdkmetric.Option) Option {
	return func(o *options) { o.meterOptions = append(o.meterOptions, opts...) }
}

// WithMetadataHandlerOptions adds Connect handler options to the
// PluginMetadataService, for example an interceptor that requires the
// platform's token:
//
//	pluginruntime.Run(p, pluginruntime.WithMetadataHandlerOptions(connect.WithInterceptors(validator.Interceptor())))
func WithMetadataHandlerOptions(opts ...connect.HandlerOption) Option {
	return func(o *options) { o.metadataOptions = append(o.metadataOptions, opts...) }
}

// WithAuth requires a valid platform token (see package auth) on every call
// to the PluginMetadataService: GetStatus and RequestUninstall answer
// Unauthenticated, and do nothing, without an "Authorization: Bearer" token
// that v accepts, refused before their body is read. The probes and the
// console are not affected. WithAuth takes precedence over the
// FUNDAMENT_TOKEN_ variables, which configure the same check without code
// (EnvTokenIssuer).
//
//	v, err := auth.NewValidator(auth.Config{Issuer: issuer, Audience: "plugin-ceph-rook", Keys: auth.StaticKeys(key)})
//	if err != nil { ... }
//	pluginruntime.Run(p, pluginruntime.WithAuth(v))
//
// A nil v is an error RunContext returns, never a silently open API.
func WithAuth(v *auth.Validator) Option {
	return func(o *options) { o.auth, o.authSet = v, true }
}

// WithServerLimits replaces the HTTP server's timeouts and size caps (see
// ServerLimits; zero fields keep their defaults). Tests shorten the
// timeouts this way:
//
//	pluginruntime.RunContext(ctx, p, pluginruntime.WithServerLimits(pluginruntime.ServerLimits{IdleTimeout: 100 * time.Millisecond}))
func WithServerLimits(l ServerLimits) Option {
	return func(o *options) { o.limits = l }
}
