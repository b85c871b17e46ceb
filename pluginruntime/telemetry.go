package pluginruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// TelemetryService gives a plugin OpenTelemetry tracing and metrics wired to
// the runtime's exporters and resource (service name and version from the
// definition, the installation's ids).
type TelemetryService interface {
	Tracer(name string, opts ...trace.TracerOption) trace.Tracer
	Meter(name string, opts ...metric.MeterOption) metric.Meter
	// TracerProvider and MeterProvider are for instrumentation libraries
	// that take a provider rather than a tracer or meter.
	TracerProvider() trace.TracerProvider
	MeterProvider() metric.MeterProvider
}

type telemetry struct {
	tracerProvider *sdktrace.TracerProvider
	meterProvider  *sdkmetric.MeterProvider
}

func (t *telemetry) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return t.tracerProvider.Tracer(name, opts...)
}

func (t *telemetry) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return t.meterProvider.Meter(name, opts...)
}

func (t *telemetry) TracerProvider() trace.TracerProvider { return t.tracerProvider }
func (t *telemetry) MeterProvider() metric.MeterProvider  { return t.meterProvider }

// newTelemetry builds the providers. Nothing is exported unless the standard
// OTEL_ variables ask for it (OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER
// "otlp", or an OTEL_EXPORTER_OTLP_*ENDPOINT), or an option adds an
// exporter. OTLP goes over HTTP/protobuf, the OpenTelemetry default; the
// exporters read their endpoint, headers and TLS from the same variables.
func newTelemetry(ctx context.Context, def *PluginDefinition, env Environment, o options) (*telemetry, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(
			semconv.ServiceName(def.Metadata.Name),
			semconv.ServiceVersion(def.Metadata.Version),
			attribute.String("fundament.cluster.id", env.ClusterID),
			attribute.String("fundament.install.id", env.InstallID),
			attribute.String("fundament.organization.id", env.OrganizationID),
		),
		// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
		// override the defaults above.
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}

	traceOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if exporterWanted("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		traceOpts = append(traceOpts, sdktrace.WithBatcher(exp))
	}
	meterOpts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if exporterWanted("OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		meterOpts = append(meterOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	for _, name := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		if v := os.Getenv(name); v != "" && v != "otlp" && v != "none" {
			return nil, fmt.Errorf("%s=%q is not supported (otlp or none)", name, v)
		}
	}

	t := &telemetry{
		tracerProvider: sdktrace.NewTracerProvider(append(traceOpts, o.tracerOptions...)...),
		meterProvider:  sdkmetric.NewMeterProvider(append(meterOpts, o.meterOptions...)...),
	}
	// A plugin binary hosts one plugin, so the runtime's providers are the
	// process's: instrumentation libraries that use the globals report
	// through the same exporters.
	otel.SetTracerProvider(t.tracerProvider)
	otel.SetMeterProvider(t.meterProvider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

// exporterWanted applies the OpenTelemetry variables' rules for one signal:
// an explicit OTEL_<SIGNAL>_EXPORTER decides; otherwise an OTLP endpoint
// (general or per signal) means OTLP.
func exporterWanted(exporterVar, signalEndpointVar string) bool {
	switch os.Getenv(exporterVar) {
	case "otlp":
		return true
	case "":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv(signalEndpointVar) != ""
	default:
		return false
	}
}

// shutdown flushes what is buffered; it is bounded by ctx, and by a short
// deadline of its own when ctx has already expired.
func (t *telemetry) shutdown(ctx context.Context) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	return errors.Join(t.tracerProvider.Shutdown(ctx), t.meterProvider.Shutdown(ctx))
}
