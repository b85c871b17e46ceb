// Command devconsole serves the plugin's console pages the way the Fundament
// console does, against the cluster in a kubeconfig, for local development:
//
//	go run ./cmd/devconsole --kubeconfig ~/.kube/config
//
// Run it from the repository root (or point --definition and --console-dir
// at the files); pages are read from disk on every request, so an edit is a
// browser reload away.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fundament-oss/ceph-rook/internal/devconsole"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devconsole:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)")
	listen := flag.String("listen", "127.0.0.1:8090", "listen address of the console origin (host page and kube-api-proxy); anything but loopback hands your kubeconfig's rights (within allowedResources) to everyone who can reach it")
	pluginListen := flag.String("plugin-listen", "127.0.0.1:8091", "listen address of the plugin origin (pages and SDK); must differ from --listen")
	definitionPath := flag.String("definition", "definition.yaml", "the plugin's definition.yaml")
	consoleDir := flag.String("console-dir", "console", "folder of the plugin's console pages")
	namespaces := flag.String("namespaces", "", "comma-separated namespaces given to pages (default: every namespace)")
	flag.Parse()

	rawDefinition, err := os.ReadFile(*definitionPath)
	if err != nil {
		return err
	}
	if info, err := os.Stat(*consoleDir); err != nil || !info.IsDir() {
		return fmt.Errorf("console folder %s not found (run from the repository root or set --console-dir)", *consoleDir)
	}
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = *kubeconfig
	restConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := devconsole.Start(ctx, devconsole.Options{
		Definition:  rawDefinition,
		Console:     http.Dir(*consoleDir),
		RESTConfig:  restConfig,
		ConsoleAddr: *listen,
		PluginAddr:  *pluginListen,
		Namespaces:  splitList(*namespaces),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	slog.Info("development console running", "open", srv.URL(), "pluginOrigin", srv.PluginURL())
	<-ctx.Done()
	return nil
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
