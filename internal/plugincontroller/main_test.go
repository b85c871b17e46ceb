package plugincontroller

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// controlPlane is the control plane every envtest in this package shares,
// started by the first test that needs it: a real API server with the
// PluginInstallation CRD and the garbage collector.
var controlPlane = testenv.NewShared(testenv.Options{
	Scheme:           pluginScheme(),
	ExtraCRDPaths:    []string{filepath.Join(testenv.RepoRoot(), "internal", "plugincontroller", "crds")},
	GarbageCollector: true,
})

func pluginScheme() *runtime.Scheme {
	scheme := testenv.DefaultScheme()
	if err := pluginsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return scheme
}

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	controlPlane.Main(m)
}
