package plugincontroller

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// env is the control plane every envtest in this package shares: a real
// API server with the PluginInstallation CRD and the garbage collector.
var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	scheme := testenv.DefaultScheme()
	if err := pluginsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	testenv.Run(m, testenv.Options{
		Scheme:           scheme,
		ExtraCRDPaths:    []string{filepath.Join(testenv.RepoRoot(), "internal", "plugincontroller", "crds")},
		GarbageCollector: true,
	}, &env)
}
