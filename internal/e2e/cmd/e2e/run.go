package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// Names the e2e cluster's manifests use.
const (
	stateDir         = "/tmp/ceph-rook-e2e"
	pluginImage      = "ceph-rook.e2e/ceph-rook:e2e"
	controllerImage  = "ceph-rook.e2e/plugin-controller:e2e"
	platformNS       = "fundament-system"
	organization     = "system"
	installationName = organization + "--ceph-rook"
	// The plugin's user, as both Dockerfiles and the rendered pod say.
	pluginUser = "65532:65532"
	// loopDevices are the node's disks in the plugin's loop-device mode.
	loopDevices = 2
	loopSize    = 6 << 30
)

type run struct {
	ctx     context.Context
	repo    string
	cache   string
	kubectl string
	c       client.Client
	// restConfig reaches the API server as the cluster's administrator.
	restConfig *rest.Config
	nodeIP     string
	repoSrv    *chartrepo.Server
	loops      []string
	disks      []string
}

func newRun(ctx context.Context) (*run, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("needs root: it runs a kubelet, containerd and iptables")
	}
	cache := os.Getenv("CEPH_ROOK_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		cache = filepath.Join(home, ".cache", "ceph-rook")
	}
	return &run{ctx: ctx, repo: testenv.RepoRoot(), cache: cache, kubectl: filepath.Join(testenv.AssetsDir(), "kubectl")}, nil
}

var order = []string{"cluster", "platform", "rook", "ceph", "file", "object", "retire"}

// phases runs the phases from from to until, both included. Starting past
// the cluster phase continues on the cluster an earlier -keep run left up.
func (r *run) phases(from, until string) error {
	steps := map[string]func() error{"cluster": r.cluster, "platform": r.platform, "rook": r.rook, "ceph": r.ceph, "file": r.file, "object": r.object, "retire": r.retire}
	first, last := slices.Index(order, from), slices.Index(order, until)
	if first < 0 || last < first {
		return fmt.Errorf("-from %q -until %q: want two of %v, in that order", from, until, order)
	}
	if first > 0 {
		if err := r.connect(filepath.Join(stateDir, "admin.kubeconfig")); err != nil {
			return fmt.Errorf("-from %s needs the cluster of an earlier -keep run: %w", from, err)
		}
	}
	for _, name := range order[first : last+1] {
		if err := r.phase(name, steps[name]); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) phase(name string, fn func() error) error {
	fmt.Fprintf(os.Stderr, "e2e: === %s\n", name)
	start := time.Now()
	err := fn()
	status := "ok"
	if err != nil {
		status = "FAILED: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "e2e: --- %s %s (%s)\n", name, status, time.Since(start).Round(100*time.Millisecond))
	return err
}

func (r *run) step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e:     "+format+"\n", args...)
}

// sh runs a command in the repository, its output on stderr; it returns
// the command's stdout.
func (r *run) sh(name string, args ...string) (string, error) {
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Dir = r.repo
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out.String()), nil
}

func (r *run) cluster() error {
	kubeconfig, err := r.sh("hack/e2e/cluster.sh", "up")
	if err != nil {
		return err
	}
	return r.connect(lastLine(kubeconfig))
}

// connect reaches the cluster as its administrator and finds the node's
// address and loop devices.
func (r *run) connect(kubeconfig string) error {
	var err error
	r.restConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	r.c, err = client.New(r.restConfig, client.Options{Scheme: testenv.DefaultScheme()})
	if err != nil {
		return err
	}
	var node corev1.NodeList
	if err := r.c.List(r.ctx, &node); err != nil {
		return err
	}
	for _, a := range node.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			r.nodeIP = a.Address
		}
	}
	r.step("node %s (%s) Ready, CoreDNS serving", node.Items[0].Name, r.nodeIP)
	r.loops, err = r.attachedLoopDevices()
	return err
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (r *run) teardown() error {
	if r.repoSrv != nil {
		_ = r.repoSrv.Close()
	}
	_, err := r.sh("hack/e2e/cluster.sh", "down")
	// Found again rather than remembered, so a run that continued an
	// earlier -keep run detaches that run's devices too.
	loops, loopErr := r.attachedLoopDevices()
	for _, dev := range loops {
		if _, detachErr := r.sh("losetup", "-d", dev); loopErr == nil {
			loopErr = detachErr
		}
	}
	if loopErr == nil {
		loopErr = os.RemoveAll(r.loopDir())
	}
	return errors.Join(err, loopErr)
}

func (r *run) loopDir() string { return filepath.Join(r.cache, "e2e", "loop") }

// attachedLoopDevices are the loop devices backed by the e2e disk files.
func (r *run) attachedLoopDevices() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(r.loopDir(), "disk*.img"))
	if err != nil {
		return nil, err
	}
	var devices []string
	for _, file := range files {
		// losetup -j prints "/dev/loop0: [2049]:131 (/path/disk0.img)".
		out, err := r.sh("losetup", "-j", file)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(out, "\n") {
			if dev, _, ok := strings.Cut(line, ":"); ok {
				devices = append(devices, dev)
			}
		}
	}
	return devices, nil
}

// platform installs ceph-rook the way Fundament does.
func (r *run) platform() error {
	// The node's disks exist before Rook's discovery first looks.
	if err := r.attachLoopDevices(); err != nil {
		return err
	}
	bin := filepath.Join(r.cache, "e2e", "plugin-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := pluginproc.Build(r.ctx, r.repo, filepath.Join(bin, "ceph-rook")); err != nil {
		return err
	}
	if err := pluginproc.BuildPackage(r.ctx, r.repo, "./cmd/plugin-controller", filepath.Join(bin, "plugin-controller")); err != nil {
		return err
	}
	r.step("built ceph-rook, ceph-rook-helm and plugin-controller as the Dockerfiles do")
	pluginRef, err := r.image(pluginImage, "/app/ceph-rook",
		bin+"/ceph-rook:/app/ceph-rook:0755", bin+"/ceph-rook-helm:/app/ceph-rook-helm:0755", r.repo+"/definition.yaml:/app/definition.yaml")
	if err != nil {
		return err
	}
	if _, err := r.image(controllerImage, "/plugin-controller", bin+"/plugin-controller:/plugin-controller:0755"); err != nil {
		return err
	}
	r.step("plugin image %s", pluginRef)

	raw, err := publishedDefinition(filepath.Join(r.repo, "definition.yaml"), pluginRef)
	if err != nil {
		return err
	}
	def, err := definition.ParseDefinition(raw, definition.RequireImage())
	if err != nil {
		return err
	}
	version := def.Metadata.PublishedVersion()

	r.repoSrv, err = chartrepo.Serve(net.JoinHostPort(r.nodeIP, "0"), cachedir.RookChartArchive())
	if err != nil {
		return err
	}
	r.step("Rook's chart served at %s", r.repoSrv.URL)
	manifests, err := platformManifests(raw, version, definition.Hash(raw), r.repoSrv)
	if err != nil {
		return err
	}
	if err := r.apply(manifests); err != nil {
		return err
	}
	r.step("plugin controller deployed; PluginInstallation %s pins %s %s", installationName, version, definition.Hash(raw))
	status, err := r.waitInstallation("running", 10*time.Minute)
	if err != nil {
		return err
	}
	r.step("PluginInstallation: phase %v, ready %v, %q", status["phase"], status["ready"], status["message"])
	return nil
}

// image writes and imports an image of files, returning its digest
// reference (what a published definition pins).
func (r *run) image(name, entrypoint string, files ...string) (string, error) {
	args := []string{"run", "./internal/e2e/cmd/binimage", "-name", name, "-user", pluginUser, "-entrypoint", entrypoint}
	for _, f := range files {
		args = append(args, "-file", f)
	}
	archive, err := r.sh("go", args...)
	if err != nil {
		return "", err
	}
	sock := filepath.Join(stateDir, "containerd", "containerd.sock")
	if _, err := r.sh("ctr", "--address", sock, "-n", "k8s.io", "images", "import", archive); err != nil {
		return "", err
	}
	out, err := r.sh("ctr", "--address", sock, "-n", "k8s.io", "images", "ls", "name=="+name)
	if err != nil {
		return "", err
	}
	for _, field := range strings.Fields(lastLine(out)) {
		if !strings.HasPrefix(field, "sha256:") {
			continue
		}
		// A registry serves every image by digest too; containerd's CRI
		// finds a local image by digest only under a name that says it.
		repo, _, _ := strings.Cut(name, ":")
		ref := repo + "@" + field
		if _, err := r.sh("ctr", "--address", sock, "-n", "k8s.io", "images", "tag", "--force", name, ref); err != nil {
			return "", err
		}
		return ref, nil
	}
	return "", fmt.Errorf("no digest for %s in %q", name, out)
}

// apply creates or updates manifests with kubectl, as an installer would,
// again until every kind is known (a CRD in the same manifests is served
// only once it is established).
func (r *run) apply(manifests string) error {
	return testenv.Eventually(r.ctx, time.Minute, func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, r.kubectl, r.kubectlArgs("apply", "-f", "-")...)
		cmd.Stdin = strings.NewReader(manifests)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl apply: %w: %s", err, out)
		}
		return nil
	})
}

// waitInstallation waits for the installation's status.phase.
func (r *run) waitInstallation(phase string, timeout time.Duration) (map[string]any, error) {
	inst := &unstructured.Unstructured{}
	inst.SetAPIVersion("plugins.fundament.io/v1")
	inst.SetKind("PluginInstallation")
	var status map[string]any
	err := testenv.Eventually(r.ctx, timeout, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKey{Name: installationName}, inst); err != nil {
			return err
		}
		status, _, _ = unstructured.NestedMap(inst.Object, "status")
		if status["phase"] != phase {
			return fmt.Errorf("status %v", status)
		}
		return nil
	})
	return status, err
}

// attachLoopDevices gives the node loopDevices empty disks of loopSize,
// sparse files under the cache.
func (r *run) attachLoopDevices() error {
	if len(r.loops) > 0 {
		return fmt.Errorf("loop devices %v still hold an earlier run's disks: detach them (losetup -d) first", r.loops)
	}
	dir := r.loopDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range loopDevices {
		file := filepath.Join(dir, fmt.Sprintf("disk%d.img", i))
		f, err := os.Create(file) // empty, even if an earlier run left it
		if err != nil {
			return err
		}
		err = f.Truncate(loopSize)
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return err
		}
		dev, err := r.sh("losetup", "--find", "--show", file)
		if err != nil {
			return err
		}
		r.loops = append(r.loops, dev)
	}
	r.step("loop devices %v (%d GiB each, sparse)", r.loops, loopSize>>30)
	return nil
}

// rook waits for the real operator and for the plugin to publish the loop
// devices its discovery daemon probed as Available Disks.
func (r *run) rook() error {
	if _, err := r.kubectlOut("-n", "rook-ceph", "rollout", "status", "deployment/rook-ceph-operator", "--timeout=5m"); err != nil {
		return err
	}
	r.step("Rook's operator is running")
	want := map[string]bool{}
	for _, dev := range r.loops {
		want[dev] = true
	}
	var disks unstructured.UnstructuredList
	disks.SetAPIVersion("ceph.fundament.io/v1alpha1")
	disks.SetKind("DiskList")
	err := testenv.Eventually(r.ctx, 5*time.Minute, func(ctx context.Context) error {
		if err := r.c.List(ctx, &disks); err != nil {
			return err
		}
		var seen []string
		for _, d := range disks.Items {
			path, _, _ := unstructured.NestedString(d.Object, "status", "path")
			state, _, _ := unstructured.NestedString(d.Object, "status", "state")
			if want[path] && state == "Available" {
				seen = append(seen, d.GetName()+"="+path)
				r.disks = append(r.disks, d.GetName())
			}
		}
		if len(seen) < len(want) {
			r.disks = nil
			return fmt.Errorf("Available loop Disks %v of %v", seen, r.loops)
		}
		r.step("Disks: %v", seen)
		return nil
	})
	return err
}

func (r *run) kubectlOut(args ...string) (string, error) {
	return r.sh(r.kubectl, r.kubectlArgs(args...)...)
}

// kubectlArgs are args for kubectl as the cluster's administrator.
func (r *run) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", filepath.Join(stateDir, "admin.kubeconfig")}, args...)
}
