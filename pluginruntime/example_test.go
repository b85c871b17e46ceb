package pluginruntime_test

import (
	"context"
	"fmt"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// examplePlugin installs something once and then waits to be stopped.
type examplePlugin struct {
	def *definition.PluginDefinition
}

func (p *examplePlugin) Definition() pluginruntime.PluginDefinition { return *p.def }

func (p *examplePlugin) Start(ctx context.Context, host pluginruntime.Host) error {
	ctx, span := host.Telemetry().Tracer("example").Start(ctx, "install")
	err := install(ctx)
	span.End()
	if err != nil {
		// Degraded, and Start is called again after a backoff.
		return pluginerrors.NewTransient(fmt.Errorf("install: %w", err))
	}
	host.ReportReady()
	<-ctx.Done()
	return nil
}

func (p *examplePlugin) Shutdown(context.Context) error { return nil }

func install(context.Context) error { return nil }

// A plugin's main is one call. The runtime reads FUNDAMENT_CLUSTER_ID and the
// other variables the platform sets, serves :8080, and exits non-zero if it
// cannot run.
func Example() {
	def := definition.MustParseDefinition([]byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata:
  name: example
`))
	pluginruntime.Run(&examplePlugin{def: def})
}
