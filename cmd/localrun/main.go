// Command localrun runs ceph-rook on a laptop with no cluster: it starts the
// same embedded control plane the tests use (etcd, kube-apiserver and the
// garbage collector), keeps its state in a local data folder so the next run
// resumes, builds the plugin binary and runs it against that API server.
// Ctrl-C stops every process it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

func main() {
	dataDir := flag.String("data", ".data", "folder for the local cluster's state and kubeconfig")
	fresh := flag.Bool("fresh", false, "start from an empty cluster (deletes the data folder first)")
	port := flag.Int("port", 8080, "port of the plugin's HTTP server (health, metadata API, console)")
	flag.Parse()
	if err := run(*dataDir, *fresh, *port); err != nil {
		fmt.Fprintln(os.Stderr, "just run:", err)
		os.Exit(1)
	}
}

func run(dataDir string, fresh bool, port int) error {
	if err := portFree(port); err != nil {
		return err
	}
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if fresh {
		if err := os.RemoveAll(dataDir); err != nil {
			return fmt.Errorf("remove %s: %w", dataDir, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Println("starting the local control plane (etcd, kube-apiserver, garbage collector)…")
	env, err := testenv.Start(testenv.Options{OurCRDs: true, RookCRDs: true, GarbageCollector: true, DataDir: dataDir})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("stopping the local control plane…")
		_ = env.Stop()
	}()
	kubeconfig := filepath.Join(dataDir, "kubeconfig")
	if err := copyFile(env.Kubeconfig, kubeconfig); err != nil {
		return err
	}

	binary := filepath.Join(dataDir, "bin", "ceph-rook")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the plugin: %w", err)
	}

	plugin := exec.Command(binary, "--addr=127.0.0.1:"+strconv.Itoa(port))
	plugin.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"FUNDAMENT_CLUSTER_ID=local",
		"FUNDAMENT_INSTALL_ID=local",
		"FUNDAMENT_ORGANIZATION_ID=local",
	)
	plugin.Stdout, plugin.Stderr = os.Stdout, os.Stderr
	if err := plugin.Start(); err != nil {
		return fmt.Errorf("start the plugin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- plugin.Wait() }()

	fmt.Printf(`
ceph-rook is running against a local API server.
  kubeconfig:  export KUBECONFIG=%s
  try:         kubectl get disks,diskpools,blockstorages,filestorages,objectstorages
  plugin:      http://localhost:%d/readyz
Ctrl-C stops everything.
`, kubeconfig, port)

	select {
	case <-ctx.Done():
		_ = plugin.Process.Signal(syscall.SIGTERM)
		<-exited
		return nil
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("the plugin exited: %w", err)
		}
		return errors.New("the plugin exited")
	}
}

// portFree turns "address already in use" into a message before anything starts.
func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return fmt.Errorf("port %d is already in use (choose another with --port): %w", port, err)
	}
	return l.Close()
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}
