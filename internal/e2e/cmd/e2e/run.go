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
	"strconv"
	"strings"
	"syscall"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/e2e/images"
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
	// hostIP is the machine's address on the nodes' bridge (cluster.sh):
	// the API server and the e2e's chart repository answer there.
	hostIP = "10.250.0.1"
	// loopDevices are each node's disks in the plugin's loop-device mode.
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
	// nodeCount is how many nodes cluster.sh brings up (-nodes).
	nodeCount int
	// nodes are the cluster's nodes by name, sorted: the first contributes
	// disks first, the others join later.
	nodes   []string
	repoSrv *chartrepo.Server
	// loops are each node's loop devices, disks the Disks published for
	// them on that node.
	loops map[string][]string
	disks map[string][]string
	// bucketEnv is the envFrom of the object phase's bucket claim, s3Ref
	// the workload's image once built.
	bucketEnv []corev1.EnvFromSource
	s3Ref     string
	// memory samples the machine's memory in use for the whole run.
	memory *memorySampler
	// findings are what the run saw go wrong without failing it (a
	// daemon's crash), repeated at its end.
	findings []string
	// phaseStart is when the running phase began: each step prints its
	// offset, so a slow phase shows which of its steps took the time.
	phaseStart time.Time
	// upgradeAsked: -upgrade. upgrades: the run installs the plugin of the
	// release before and upgrades it (asked, on three nodes, its phases
	// include platform and upgrade).
	upgradeAsked, upgrades bool
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
	return &run{ctx: ctx, repo: testenv.RepoRoot(), cache: cache, kubectl: filepath.Join(testenv.AssetsDir(), "kubectl"),
		loops: map[string][]string{}, disks: map[string][]string{}}, nil
}

var order = []string{"cluster", "platform", "rook", "ceph", "file", "object", "retire", "join", "tiers", "upgrade", "outage", "drain", "replace", "swap", "dead", "leave"}

// phases runs the phases from from to until, both included. Starting past
// the cluster phase continues on the cluster an earlier -keep run left up.
func (r *run) phases(from, until string) error {
	steps := map[string]func() error{"cluster": r.cluster, "platform": r.platform, "rook": r.rook, "ceph": r.ceph, "file": r.file,
		"object": r.object, "retire": r.retire, "join": r.join, "tiers": r.tiers, "upgrade": r.upgrade, "outage": r.outage, "drain": r.drain, "replace": r.replace, "swap": r.swap, "dead": r.dead, "leave": r.leave}
	first, last := slices.Index(order, from), slices.Index(order, until)
	if first < 0 || last < first {
		return fmt.Errorf("-from %q -until %q: want two of %v, in that order", from, until, order)
	}
	between := func(phase string) bool { i := slices.Index(order, phase); return first <= i && i <= last }
	r.upgrades = r.upgradeAsked && between("platform") && between("upgrade") && r.nodeCount >= 3
	if first > 0 {
		if err := r.resume(first > slices.Index(order, "rook")); err != nil {
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

// volumesOnly runs the volumes phase on the cluster a -keep run left up.
func (r *run) volumesOnly() error {
	if err := r.resume(true); err != nil {
		return fmt.Errorf("-volumes needs the cluster of an earlier -keep run past the file phase: %w", err)
	}
	return r.phase("volumes", r.volumes)
}

func (r *run) phase(name string, fn func() error) error {
	fmt.Fprintf(os.Stderr, "e2e: === %s\n", name)
	if r.memory != nil {
		r.memory.enter(name)
	}
	start := time.Now()
	r.phaseStart = start
	err := fn()
	status := "ok"
	if err != nil {
		status = "FAILED: " + err.Error()
	}
	fmt.Fprintf(os.Stderr, "e2e: --- %s %s (%s)\n", name, status, time.Since(start).Round(100*time.Millisecond))
	return err
}

func (r *run) step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: %6s "+format+"\n", append([]any{sinceShort(r.phaseStart)}, args...)...)
}

// sinceShort is the time since start as the step lines print it: whole
// seconds, "" before the first phase.
func sinceShort(start time.Time) string {
	if start.IsZero() {
		return ""
	}
	return time.Since(start).Round(time.Second).String()
}

// sh runs a command in the repository, its output on stderr; it returns
// the command's stdout.
func (r *run) sh(name string, args ...string) (string, error) {
	return r.shEnv(nil, name, args...)
}

// shEnv is sh with env added to the environment.
func (r *run) shEnv(env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Dir = r.repo
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(out.String()), nil
}

func (r *run) cluster() error {
	env := []string{"E2E_NODES=" + strconv.Itoa(r.nodeCount)}
	if r.upgrades {
		env = append(env, "E2E_UPGRADE=1") // the image of the Rook it upgrades from
	}
	kubeconfig, err := r.shEnv(env, "hack/e2e/cluster.sh", "up")
	if err != nil {
		return err
	}
	if err := r.connect(lastLine(kubeconfig)); err != nil {
		return err
	}
	// The platform's pods (the plugin controller, the plugin, Rook's
	// operator, and so the e2e's Ceph CLI) prefer the first node, which
	// never goes down; Ceph's daemons spread over every node by their own
	// anti-affinity all the same.
	for _, node := range r.nodes[1:] {
		if _, err := r.kubectlOut("taint", "nodes", node, joinsLaterTaint+"=true:PreferNoSchedule"); err != nil {
			return err
		}
	}
	if len(r.nodes) > 1 {
		r.step("nodes %v tainted %s:PreferNoSchedule", r.nodes[1:], joinsLaterTaint)
	}
	return nil
}

// joinsLaterTaint steers pods without a placement of their own to the
// first node until the others join.
const joinsLaterTaint = "e2e.ceph.fundament.io/joins-later"

// untaintJoiners takes joinsLaterTaint off the nodes that join.
func (r *run) untaintJoiners() error {
	for _, node := range r.nodes[1:] {
		out, err := r.kubectlOut("get", "node", node, "-o", "jsonpath={.spec.taints[*].key}")
		if err != nil {
			return err
		}
		if !slices.Contains(strings.Fields(out), joinsLaterTaint) {
			continue
		}
		if _, err := r.kubectlOut("taint", "nodes", node, joinsLaterTaint+"-"); err != nil {
			return err
		}
	}
	r.step("nodes %v untainted", r.nodes[1:])
	return nil
}

// resume finds what the phases before -from found: the cluster and, past
// the rook phase, the nodes' Disks (in any state: OSDs may hold them by
// now) and the bucket claim's environment.
func (r *run) resume(pastRook bool) error {
	if err := r.connect(filepath.Join(stateDir, "admin.kubeconfig")); err != nil {
		return err
	}
	if !pastRook {
		return nil
	}
	disks, err := r.listDisks(r.ctx)
	if err != nil {
		return err
	}
	// A retired Disk (the drain phase's) is no disk of the pool any more.
	disks.Items = slices.DeleteFunc(disks.Items, func(d unstructured.Unstructured) bool {
		_, retired := d.GetAnnotations()[cephv1alpha1.RetiredAnnotation]
		return retired
	})
	for _, node := range r.nodes {
		for _, dev := range r.loops[node] {
			if name := diskAt(disks.Items, node, dev, ""); name != "" {
				r.disks[node] = append(r.disks[node], name)
			}
		}
	}
	r.bucketEnv = []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: claimName}}},
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: claimName}}},
	}
	return nil
}

// connect reaches the cluster as its administrator and finds its nodes
// and their loop devices.
func (r *run) connect(kubeconfig string) error {
	var err error
	r.restConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	scheme := testenv.DefaultScheme()
	if err := snapshotv1.AddToScheme(scheme); err != nil {
		return err
	}
	r.c, err = client.New(r.restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := r.c.List(r.ctx, &nodes); err != nil {
		return err
	}
	r.nodes = nil
	var shown []string
	for _, n := range nodes.Items {
		r.nodes = append(r.nodes, n.Name)
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				shown = append(shown, n.Name+" ("+a.Address+")")
			}
		}
	}
	slices.Sort(r.nodes)
	slices.Sort(shown)
	r.step("nodes %s Ready, CoreDNS serving", strings.Join(shown, ", "))
	return r.findLoopDevices()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (r *run) teardown() error {
	// A run stopped by a signal (CI's timeout sends SIGTERM) still takes
	// the cluster down: a machine left a node refuses the next run.
	if r.ctx.Err() != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 3*time.Minute)
		defer cancel()
		r.ctx = ctx
	}
	if r.repoSrv != nil {
		_ = r.repoSrv.Close()
	}
	_, err := r.sh("hack/e2e/cluster.sh", "down")
	return errors.Join(err, r.detachLoopDevices())
}

// detachLoopDevices detaches the loop devices of the e2e's disk files and
// removes the files once none is attached. Found again rather than
// remembered, so a run that continued an earlier -keep run (or followed
// one that was stopped halfway) detaches that run's devices too. A device
// still open (an OSD a failed tear-down left running) is only marked to
// detach when closed, so it is listed again and its file kept.
func (r *run) detachLoopDevices() error {
	loops, err := r.attachedLoopDevices()
	if err != nil {
		return err
	}
	for _, dev := range loops {
		if _, detachErr := r.sh("losetup", "-d", dev.device); err == nil {
			err = detachErr
		}
	}
	if err != nil {
		return err
	}
	if left, err := r.attachedLoopDevices(); err != nil || len(left) > 0 {
		return errors.Join(err, fmt.Errorf("loop devices still attached (open): %v; their files are kept in %s", left, r.loopDir()))
	}
	return os.RemoveAll(r.loopDir())
}

func (r *run) loopDir() string { return filepath.Join(r.cache, "e2e", "loop") }

// loopDevice is a loop device backed by the e2e disk file of that index.
type loopDevice struct {
	index  int
	device string
}

// attachedLoopDevices are the loop devices backed by the e2e disk files,
// read from the kernel's list rather than found from the files: a run
// stopped halfway may have removed a file its device still holds.
func (r *run) attachedLoopDevices() ([]loopDevice, error) {
	out, err := r.sh("losetup", "--list", "--noheadings", "--raw", "--output", "NAME,BACK-FILE")
	if err != nil {
		return nil, err
	}
	return parseLoopList(out, r.loopDir()), nil
}

// parseLoopList picks from `losetup --list --raw --output NAME,BACK-FILE`
// the devices backed by dir's disk<N>.img, deleted or not (--raw escapes
// the space before "(deleted)" as \x20).
func parseLoopList(out, dir string) []loopDevice {
	var devices []loopDevice
	for _, line := range strings.Split(out, "\n") {
		device, file, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		file = strings.TrimSuffix(file, `\x20(deleted)`)
		if filepath.Dir(file) != dir {
			continue
		}
		number, isDisk := strings.CutPrefix(filepath.Base(file), "disk")
		number, isImage := strings.CutSuffix(number, ".img")
		index, err := strconv.Atoi(number)
		if !isDisk || !isImage || err != nil {
			continue // not one of ours
		}
		devices = append(devices, loopDevice{index, device})
	}
	slices.SortFunc(devices, func(a, b loopDevice) int { return a.index - b.index })
	return devices
}

// findLoopDevices gives each node the loop devices of its disk files:
// disk files 2i and 2i+1 are the i-th node's, any later one (the replace
// phase's new disk) the last node's (every node sees every loop device:
// they share the machine's /dev).
func (r *run) findLoopDevices() error {
	devices, err := r.attachedLoopDevices()
	if err != nil {
		return err
	}
	clear(r.loops)
	if len(r.nodes) == 0 {
		return nil
	}
	for _, d := range devices {
		node := r.nodes[min(d.index/loopDevices, len(r.nodes)-1)]
		r.loops[node] = append(r.loops[node], d.device)
	}
	return nil
}

// platform installs ceph-rook the way Fundament does: the plugin of the
// release before (Rook cachedir.PreviousRookVersion) when the run goes on
// to upgrade it, else the current one.
func (r *run) platform() error {
	// The node's disks exist before Rook's discovery first looks.
	if err := r.attachLoopDevices(); err != nil {
		return err
	}
	bin := filepath.Join(r.cache, "e2e", "plugin-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	if err := pluginproc.BuildPackage(r.ctx, r.repo, "./cmd/plugin-controller", filepath.Join(bin, "plugin-controller")); err != nil {
		return err
	}
	if _, err := r.image(controllerImage, "/plugin-controller", bin+"/plugin-controller:/plugin-controller:0755"); err != nil {
		return err
	}
	rook := cachedir.RookVersion
	if r.upgrades {
		rook = cachedir.PreviousRookVersion
	}
	if err := r.deployPlugin(rook, images.CephImage); err != nil {
		return err
	}
	status, err := r.waitInstallation("running", 10*time.Minute)
	if err != nil {
		return err
	}
	r.step("PluginInstallation: phase %v, ready %v, %q", status["phase"], status["ready"], status["message"])
	return nil
}

// deployPlugin builds the plugin that installs the given Rook release (by
// its RookChartVersion: the current source, linked with the release
// before's version to stand for the plugin that shipped it), publishes its
// definition with the image pinned, and applies the platform's manifests:
// the first time an installation, later an upgrade of it, as a new plugin
// release or a changed configuration (cephImage) reaches a cluster.
func (r *run) deployPlugin(rook, cephImage string) error {
	bin := filepath.Join(r.cache, "e2e", "plugin-bin")
	var set []string
	if rook != cachedir.RookVersion {
		set = append(set, "main.RookChartVersion="+rook)
	}
	if err := pluginproc.Build(r.ctx, r.repo, filepath.Join(bin, "ceph-rook"), set...); err != nil {
		return err
	}
	r.step("built ceph-rook (Rook %s), ceph-rook-helm and plugin-controller static and stripped, as the Dockerfiles do", rook)
	pluginRef, err := r.image(pluginImage, "/app/ceph-rook",
		bin+"/ceph-rook:/app/ceph-rook:0755", bin+"/ceph-rook-helm:/app/ceph-rook-helm:0755", r.repo+"/definition.yaml:/app/definition.yaml")
	if err != nil {
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
	if err := r.serveCharts(); err != nil {
		return err
	}
	chart := chartSource{URL: r.repoSrv.URL, Digest: r.repoSrv.Digests[filepath.Base(cachedir.RookChartArchiveOf(rook))]}
	manifests, err := platformManifests(raw, version, definition.Hash(raw), chart, pluginConfig(len(r.nodes), cephImage))
	if err != nil {
		return err
	}
	if err := r.apply(manifests); err != nil {
		return err
	}
	r.step("PluginInstallation %s pins %s %s (Rook %s, Ceph image %s)", installationName, version, definition.Hash(raw), rook, cephImage)
	return nil
}

// serveCharts serves both Rook charts (the release before's, which the
// upgrade starts from, and the current one) from the machine's address on
// the nodes' bridge, once per run.
func (r *run) serveCharts() error {
	if r.repoSrv != nil {
		return nil
	}
	var err error
	r.repoSrv, err = chartrepo.Serve(net.JoinHostPort(hostIP, "0"), cachedir.RookChartArchiveOf(cachedir.PreviousRookVersion), cachedir.RookChartArchive())
	if err != nil {
		return err
	}
	r.step("Rook's charts %s and %s served at %s", cachedir.PreviousRookVersion, cachedir.RookVersion, r.repoSrv.URL)
	return nil
}

// image writes an image of files and imports it into every node's
// containerd, returning its digest reference (what a published definition
// pins).
func (r *run) image(name, entrypoint string, files ...string) (string, error) {
	args := []string{"run", "./internal/e2e/cmd/binimage", "-name", name, "-user", pluginUser, "-entrypoint", entrypoint}
	for _, f := range files {
		args = append(args, "-file", f)
	}
	archive, err := r.sh("go", args...)
	if err != nil {
		return "", err
	}
	var ref string
	for _, node := range r.nodes {
		if !runtimeUp(node) {
			// A node that is down (-from outage) gets it when it is
			// back and a run imports images again.
			r.step("node %s's containerd is down: %s not imported there", node, name)
			continue
		}
		if ref, err = r.importImage(node, name, archive); err != nil {
			return "", err
		}
	}
	if ref == "" {
		return "", fmt.Errorf("no node's containerd is up to import %s", name)
	}
	return ref, nil
}

// runtimeUp reports whether the node's containerd accepts connections.
func runtimeUp(node string) bool {
	conn, err := net.DialTimeout("unix", containerdSocket(node), time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// containerdSocket is a node's containerd (cluster.sh).
func containerdSocket(node string) string {
	return filepath.Join(stateDir, "nodes", node, "containerd", "containerd.sock")
}

// importImage imports the image archive into the node's containerd under
// name and under its digest.
func (r *run) importImage(node, name, archive string) (string, error) {
	sock := containerdSocket(node)
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
	return r.until(time.Minute, func(ctx context.Context) error {
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
	var status map[string]any
	err := r.until(timeout, func(ctx context.Context) error {
		var err error
		if status, err = r.installationStatus(ctx); err != nil {
			return err
		}
		if status["phase"] != phase {
			return fmt.Errorf("status %v", status)
		}
		return nil
	})
	return status, err
}

// installationStatus is the plugin's PluginInstallation's status.
func (r *run) installationStatus(ctx context.Context) (map[string]any, error) {
	inst := &unstructured.Unstructured{}
	inst.SetAPIVersion("plugins.fundament.io/v1")
	inst.SetKind("PluginInstallation")
	if err := r.c.Get(ctx, client.ObjectKey{Name: installationName}, inst); err != nil {
		return nil, err
	}
	status, _, _ := unstructured.NestedMap(inst.Object, "status")
	return status, nil
}

// attachLoopDevices gives every node loopDevices empty disks of loopSize,
// sparse files under the cache.
func (r *run) attachLoopDevices() error {
	attached, err := r.attachedLoopDevices()
	if err != nil {
		return err
	}
	if len(attached) > 0 {
		return fmt.Errorf("loop devices %v still hold an earlier run's disks: detach them (losetup -d) first", attached)
	}
	dir := r.loopDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range loopDevices * len(r.nodes) {
		if _, err := r.newLoopDevice(i); err != nil {
			return err
		}
	}
	if err := r.findLoopDevices(); err != nil {
		return err
	}
	for _, node := range r.nodes {
		for _, dev := range r.loops[node] {
			if err := giveDevice(node, dev); err != nil {
				return err
			}
		}
		r.step("node %s: loop devices %v (%d GiB each, sparse), in its /dev alone", node, r.loops[node], loopSize>>30)
	}
	return nil
}

// newLoopDevice attaches an empty sparse disk file of loopSize, the one of
// that index, to a free loop device, and returns the device.
func (r *run) newLoopDevice(index int) (string, error) {
	file := filepath.Join(r.loopDir(), fmt.Sprintf("disk%d.img", index))
	f, err := os.Create(file) // empty, even if an earlier run left it
	if err != nil {
		return "", err
	}
	err = f.Truncate(loopSize)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", err
	}
	out, err := r.sh("losetup", "--find", "--show", file)
	dev := strings.TrimSpace(out)
	if err != nil || !r.solidStateLoop(index) {
		return dev, err
	}
	// Before Rook's discovery sees it: discovery reports the flag, the
	// plugin makes it the Disk's type and the device's class.
	rotational := filepath.Join("/sys/block", filepath.Base(dev), "queue", "rotational")
	if err := os.WriteFile(rotational, []byte("0"), 0o644); err != nil {
		return dev, fmt.Errorf("mark %s solid-state: %w", dev, err)
	}
	return dev, nil
}

// solidStateLoop says whether the disk file of that index is attached as
// a solid-state device (the kernel's rotational flag off), which discovery
// reports and the plugin makes class ssd: the second disk of every node
// but the first, so the tiers phase finds hdd on three hosts and ssd on
// two. Node A's disks, which the swap phase detaches and attaches again
// (the flag does not survive that), stay rotational, as does the replace
// phase's new disk.
func (r *run) solidStateLoop(index int) bool {
	node, disk := index/loopDevices, index%loopDevices
	return node >= 1 && node < len(r.nodes) && disk == loopDevices-1
}

// giveDevice makes the block device dev appear in the node's own /dev
// (cluster.sh node_devices), which no other node sees.
func giveDevice(node, dev string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dev, &st); err != nil {
		return err
	}
	path := filepath.Join(stateDir, "nodes", node, "dev", filepath.Base(dev))
	if err := syscall.Mknod(path, syscall.S_IFBLK|0o660, int(st.Rdev)); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("mknod %s: %w", path, err)
	}
	return os.Chown(path, int(st.Uid), int(st.Gid))
}

// rook waits for the real operator and for the plugin to publish each
// node's loop devices, as that node's discovery daemon probed them, as
// Available Disks of that node.
func (r *run) rook() error {
	if err := r.disableDaemonProbes(); err != nil {
		return err
	}
	if _, err := r.kubectlOut("-n", "rook-ceph", "rollout", "status", "deployment/rook-ceph-operator", "--timeout=5m"); err != nil {
		return err
	}
	r.step("Rook's operator is running")
	return r.until(5*time.Minute, func(ctx context.Context) error {
		disks, err := r.listDisks(ctx)
		if err != nil {
			return err
		}
		found := map[string][]string{}
		var missing []string
		for _, node := range r.nodes {
			for _, dev := range r.loops[node] {
				name := diskAt(disks.Items, node, dev, "Available")
				if name == "" {
					missing = append(missing, node+":"+dev)
					continue
				}
				found[node] = append(found[node], name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("no Available Disk yet for %v", missing)
		}
		for _, node := range r.nodes {
			r.disks[node] = found[node]
			r.step("node %s: Disks %v", node, found[node])
		}
		return nil
	})
}

// listDisks lists the plugin's Disks.
func (r *run) listDisks(ctx context.Context) (*unstructured.UnstructuredList, error) {
	var disks unstructured.UnstructuredList
	disks.SetAPIVersion("ceph.fundament.io/v1alpha1")
	disks.SetKind("DiskList")
	return &disks, r.c.List(ctx, &disks)
}

// diskAt is the name of the Disk at path on node, in state unless that is
// empty, or "".
func diskAt(disks []unstructured.Unstructured, node, path, state string) string {
	for _, d := range disks {
		n, _, _ := unstructured.NestedString(d.Object, "status", "nodeName")
		p, _, _ := unstructured.NestedString(d.Object, "status", "path")
		s, _, _ := unstructured.NestedString(d.Object, "status", "state")
		if n == node && p == path && (state == "" || s == state) {
			return d.GetName()
		}
	}
	return ""
}

func (r *run) kubectlOut(args ...string) (string, error) {
	return r.sh(r.kubectl, r.kubectlArgs(args...)...)
}

// kubectlArgs are args for kubectl as the cluster's administrator.
func (r *run) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", filepath.Join(stateDir, "admin.kubeconfig")}, args...)
}

// diagnose prints what a failed run needs to be understood before the
// tear-down takes it away: Rook's objects with the generation Rook last
// reconciled, Ceph's health, and the end of the operator's log.
func (r *run) diagnose() {
	r.step("diagnosis:")
	for _, args := range [][]string{
		{"-n", "rook-ceph", "get", "cephcluster,cephblockpool,cephfilesystem,cephobjectstore", "-o",
			"custom-columns=KIND:.kind,NAME:.metadata.name,GENERATION:.metadata.generation,OBSERVED:.status.observedGeneration,PHASE:.status.phase"},
		{"get", "pods", "-A", "-o", "wide"},
		{"-n", "rook-ceph", "logs", "deploy/rook-ceph-operator", "--tail=80"},
	} {
		out, err := r.kubectlOut(args...)
		r.step("kubectl %s (%v):\n%s", strings.Join(args, " "), err, indent(out))
	}
	if health, err := r.cephCLI(r.ctx, "health", "detail"); err == nil {
		r.step("ceph health detail:\n%s", indent(health))
	}
}
