package pluginruntime

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"
)

// The environment variables the platform's controller sets.
const (
	EnvClusterID         = "FUNDAMENT_CLUSTER_ID"
	EnvInstallID         = "FUNDAMENT_INSTALL_ID"
	EnvOrganizationID    = "FUNDAMENT_ORGANIZATION_ID"
	EnvLogLevel          = "FUNP_LOG_LEVEL"
	EnvReconcileInterval = "FUNP_RECONCILE_INTERVAL"

	// ConfigPrefix prefixes every key of PluginInstallation.spec.config.
	ConfigPrefix = "FUNP_"
)

// DefaultReconcileInterval is used when FUNP_RECONCILE_INTERVAL is unset.
const DefaultReconcileInterval = 5 * time.Minute

// Environment is the configuration the platform gives a plugin.
type Environment struct {
	ClusterID      string
	InstallID      string
	OrganizationID string
	LogLevel       slog.Level
	// ReconcileInterval is the period of Reconciler.Reconcile.
	ReconcileInterval time.Duration
	// Config holds every FUNP_ variable keyed without the prefix:
	// spec.config {LOG_LEVEL: debug} arrives as Config["LOG_LEVEL"] == "debug".
	Config map[string]string
}

// parseEnvironment reads the platform's variables from environ (KEY=value
// pairs, as os.Environ returns them). Every problem is reported at once,
// naming the variable, so one look at the log fixes the installation.
func parseEnvironment(environ []string) (Environment, error) {
	vars := environMap(environ)
	env := Environment{
		ClusterID:         vars[EnvClusterID],
		InstallID:         vars[EnvInstallID],
		OrganizationID:    vars[EnvOrganizationID],
		LogLevel:          slog.LevelInfo,
		ReconcileInterval: DefaultReconcileInterval,
		Config:            map[string]string{},
	}
	var problems []string
	for _, name := range []string{EnvClusterID, EnvInstallID, EnvOrganizationID} {
		if vars[name] == "" {
			problems = append(problems, fmt.Sprintf("%s is required but not set", name))
		}
	}
	if v := vars[EnvLogLevel]; v != "" {
		if err := env.LogLevel.UnmarshalText([]byte(v)); err != nil {
			problems = append(problems, fmt.Sprintf("%s=%q is not a log level (debug, info, warn, error)", EnvLogLevel, v))
		}
	}
	if v := vars[EnvReconcileInterval]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("%s=%q is not a positive duration (e.g. 30s, 5m)", EnvReconcileInterval, v))
		}
		env.ReconcileInterval = d
	}
	for k, v := range vars {
		if key, ok := strings.CutPrefix(k, ConfigPrefix); ok && key != "" {
			env.Config[key] = v
		}
	}
	if len(problems) > 0 {
		return Environment{}, fmt.Errorf("invalid plugin environment: %s", strings.Join(problems, "; "))
	}
	return env, nil
}

// environMap turns KEY=value pairs into a map; a later pair wins, as in a
// process environment.
func environMap(environ []string) map[string]string {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

type environmentKey struct{}

// EnvironmentFrom returns the environment of the plugin whose Start,
// Reconcile, Install or Uninstall received ctx.
//
//	func (p *plugin) Start(ctx context.Context, host pluginruntime.Host) error {
//		replicas := pluginruntime.EnvironmentFrom(ctx).Config["REPLICAS"]
//		...
//	}
func EnvironmentFrom(ctx context.Context) Environment {
	env, _ := ctx.Value(environmentKey{}).(Environment)
	env.Config = maps.Clone(env.Config)
	return env
}

func withEnvironment(ctx context.Context, env Environment) context.Context {
	return context.WithValue(ctx, environmentKey{}, env)
}
