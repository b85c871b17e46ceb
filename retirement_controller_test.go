package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// rookPlayer plays Rook's and Ceph's part of a retirement against the real
// API server with the simulation `just run` uses (simulate.OSDs and its
// Ceph, which do what Rook's and Ceph's source do), and watches what must
// never happen: an OSD stopped while Ceph still maps PGs to it, a device
// leaving the CephCluster while Ceph still has its OSD, two OSDs taken
// out by retirements at once.
type rookPlayer struct {
	h    *harness
	osds *simulate.OSDs
	ceph *simulate.Ceph

	mu    sync.Mutex
	verbs []string // every Ceph Job answered, "verb osd.N"
	// pauseAfter, when set, pauses Ceph once it has answered that verb.
	pauseAfter cephjob.Verb
	// violations are what must never happen.
	violations []string
}

func playRook(h *harness) *rookPlayer {
	p := &rookPlayer{h: h}
	p.ceph = &simulate.Ceph{Client: h.c, Namespace: h.cfg.ClusterNamespace, Ran: func(job *batchv1.Job) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.pauseAfter != "" && job.Labels[cephjob.VerbLabel] == string(p.pauseAfter) {
			p.ceph.Paused.Store(true)
		}
		for _, e := range job.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "OSD_ID" {
				p.verbs = append(p.verbs, job.Labels[cephjob.VerbLabel]+" osd."+e.Value)
			}
		}
	}}
	p.osds = &simulate.OSDs{Client: h.c, Namespace: h.cfg.ClusterNamespace, Ceph: p.ceph}
	h.createRookOperator()
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := p.step(ctx); err != nil && ctx.Err() == nil {
				h.t.Logf("rook player: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	h.t.Cleanup(func() { cancel(); <-done })
	return p
}

// createRookOperator is the operator Deployment, whose image the Ceph Jobs
// run.
func (h *harness) createRookOperator() {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: rook.OperatorDeployment, Namespace: h.cfg.OperatorNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "rook-ceph-operator"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "rook-ceph-operator"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "rook-ceph-operator", Image: "docker.io/rook/ceph:v1.18.0"}}},
			},
		},
	}
	require.NoError(h.t, h.c.Create(h.ctx, d))
}

func (p *rookPlayer) step(ctx context.Context) error {
	if err := p.osds.Step(ctx); err != nil {
		return err
	}
	return p.watch(ctx)
}

// watch records what must never happen.
func (p *rookPlayer) watch(ctx context.Context) error {
	var deployments appsv1.DeploymentList
	if err := p.h.c.List(ctx, &deployments, client.InNamespace(p.h.cfg.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp}); err != nil {
		return err
	}
	out := 0
	for _, d := range deployments.Items {
		id, _ := strconv.Atoi(d.Labels[rook.OSDIDLabel])
		exists, _, in, pgs := p.ceph.OSD(id)
		if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 && exists && pgs > 0 {
			p.violate("osd.%d is stopped while Ceph maps %d PGs to it", id, pgs)
		}
		if exists && !in && p.ceph.Booted(id) {
			out++
		}
	}
	if out > 1 {
		p.violate("%d OSDs are out at once", out)
	}
	listed, err := simulate.ListedDevices(ctx, p.h.c, p.h.cfg.ClusterNamespace)
	if err != nil {
		return err
	}
	var rets cephv1alpha1.DiskRetirementList
	if err := p.h.c.List(ctx, &rets); err != nil {
		return err
	}
	for _, r := range rets.Items {
		s := r.Status
		if s.OSDID == nil || s.Device == "" {
			continue
		}
		if exists, _, _, _ := p.ceph.OSD(int(*s.OSDID)); exists && !slices.Contains(listed, simulate.ListedDevice{Node: s.Node, Device: s.Device}) {
			p.violate("%s left the CephCluster while Ceph still has osd.%d", s.Device, *s.OSDID)
		}
	}
	return nil
}

func (p *rookPlayer) violate(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v := fmt.Sprintf(format, args...); !slices.Contains(p.violations, v) {
		p.violations = append(p.violations, v)
	}
}

// check fails the test on any violation seen.
func (p *rookPlayer) check() {
	p.h.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Empty(p.h.t, p.violations)
}

// ran is the Ceph Jobs answered so far.
func (p *rookPlayer) ran() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.verbs)
}

// retirementCluster is three nodes of three disks each: two HDDs (sdb,
// sdc) in pool "main", each an OSD, and an SSD (sdd), available. Every host
// keeps an OSD when one disk goes, as Ceph's .mgr (three copies on three
// hosts) needs. It returns the Disks by node then kernel path.
func retirementCluster(t *testing.T) (*harness, *rookPlayer, map[string]map[string]cephv1alpha1.Disk) {
	return retirementClusterWith(newHarness(t))
}

// retirementClusterWith is retirementCluster on h, started here (its
// configuration set before).
func retirementClusterWith(h *harness) (*harness, *rookPlayer, map[string]map[string]cephv1alpha1.Disk) {
	h.start()
	disks := map[string]map[string]cephv1alpha1.Disk{}
	var pool []string
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("ret-%d", i)
		h.publishDiscovery(node, hdd("sdb", fmt.Sprintf("0x5%03db", i)), hdd("sdc", fmt.Sprintf("0x5%03dc", i)), ssd("sdd", fmt.Sprintf("0x5%03dd", i)))
		disks[node] = h.waitDisks(node, 3)
		pool = append(pool, disks[node]["/dev/sdb"].Name, disks[node]["/dev/sdc"].Name)
	}
	h.createPool("main", pool...)
	p := playRook(h)
	h.eventually("every HDD is an OSD, booted (up and in, in CRUSH)", func() error {
		osds := h.osdDeployments()
		if n := len(osds); n != 6 {
			return fmt.Errorf("%d OSDs", n)
		}
		for _, d := range osds {
			if id, _ := strconv.Atoi(d.Labels[rook.OSDIDLabel]); !p.ceph.Booted(id) {
				return fmt.Errorf("osd.%d has not booted", id)
			}
		}
		return nil
	})
	return h, p, disks
}

func (h *harness) osdDeployments() []appsv1.Deployment {
	var osds appsv1.DeploymentList
	require.NoError(h.t, h.c.List(h.ctx, &osds, client.InNamespace(h.cfg.ClusterNamespace), client.MatchingLabels{rook.AppLabel: rook.OSDApp}))
	return osds.Items
}

func (h *harness) retire(name, disk, replacement string) *cephv1alpha1.DiskRetirement {
	h.t.Helper()
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: disk, Replacement: replacement}}
	require.NoError(h.t, h.c.Create(h.ctx, r))
	h.t.Cleanup(func() {
		_ = h.c.Delete(context.Background(), r)
		var left cephv1alpha1.DiskRetirement
		if h.c.Get(context.Background(), client.ObjectKeyFromObject(r), &left) == nil && len(left.Finalizers) > 0 {
			left.Finalizers = nil
			_ = h.c.Update(context.Background(), &left)
		}
	})
	return r
}

// waitRetirement waits for the retirement's phase and returns it.
func (h *harness) waitRetirement(name string, want cephv1alpha1.DiskRetirementPhase) *cephv1alpha1.DiskRetirement {
	h.t.Helper()
	return h.waitRetirementSaying(name, want, "")
}

// waitRetirementSaying is waitRetirement for a phase whose message
// contains text.
func (h *harness) waitRetirementSaying(name string, want cephv1alpha1.DiskRetirementPhase, text string) *cephv1alpha1.DiskRetirement {
	h.t.Helper()
	var r cephv1alpha1.DiskRetirement
	h.eventually(fmt.Sprintf("DiskRetirement %s %s saying %q", name, want, text), func() error {
		if err := h.c.Get(h.ctx, client.ObjectKey{Name: name}, &r); err != nil {
			return err
		}
		if r.Status.Phase != want || !strings.Contains(r.Status.Message, text) {
			return fmt.Errorf("phase %q: %s", r.Status.Phase, r.Status.Message)
		}
		return nil
	})
	return &r
}

func (h *harness) osdDeployment(id int32) (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: fmt.Sprintf("rook-ceph-osd-%d", id)}, &d)
	return &d, err
}

func (h *harness) listed(node, device string) bool {
	return slices.Contains(h.clusterDevices()[node], device)
}

// cephJobs are the Ceph Jobs that exist.
func (h *harness) cephJobs() []batchv1.Job {
	var jobs batchv1.JobList
	require.NoError(h.t, h.c.List(h.ctx, &jobs, client.InNamespace(h.cfg.ClusterNamespace), client.MatchingLabels{"app": cephjob.App}))
	return slices.DeleteFunc(jobs.Items, func(j batchv1.Job) bool { return !j.DeletionTimestamp.IsZero() })
}

// watchRetirementCluster runs the reliability suite's "nothing lost"
// watcher over the cluster's HDDs: none may leave the CephCluster unless a
// DiskRetirement purged its OSD.
func watchRetirementCluster(h *harness, disks map[string]map[string]cephv1alpha1.Disk) *nothingLost {
	h.t.Helper()
	inv := watchNothingLost(h.t, h.env.Config, h.cfg.ClusterNamespace)
	var ids []DeviceID
	for _, node := range disks {
		for _, path := range []string{"/dev/sdb", "/dev/sdc"} {
			d := node[path]
			ids = append(ids, DeviceIDOf(&d))
		}
	}
	inv.protect(ids...)
	inv.waitWatching()
	h.touchCephCluster() // a revision the watcher sees the devices in
	h.eventually("the watcher has seen every device listed", func() error {
		inv.mu.Lock()
		defer inv.mu.Unlock()
		for _, id := range ids {
			if !inv.seen[id] {
				return fmt.Errorf("not seen: %v", id)
			}
		}
		return nil
	})
	return inv
}

// touchCephCluster writes the CephCluster's status, as Rook's status
// reporter does, so that watchers see a new revision.
func (h *harness) touchCephCluster() {
	h.t.Helper()
	cc := newCephClusterObject()
	require.NoError(h.t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: CephClusterName}, cc))
	patch := client.MergeFrom(cc.DeepCopy())
	cc.Object["status"] = map[string]any{"ceph": map[string]any{"health": "HEALTH_OK", "lastChecked": time.Now().UTC().Format(time.RFC3339Nano)}}
	require.NoError(h.t, h.c.Status().Patch(h.ctx, cc, patch))
}

func TestRetiringADiskFollowsCephsOrder(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	// Two copies on different hosts: the three hosts left still hold them.
	h.createBlockStorage("db", new(int32(2)))
	disk := disks["ret-1"]["/dev/sdb"]
	device := disk.Status.StorageDevice()

	h.retire("retire-sdb", disk.Name, "")
	r := h.waitRetirement("retire-sdb", cephv1alpha1.RetirementRetired)

	require.NotNil(t, r.Status.OSDID)
	id := *r.Status.OSDID
	assert.Equal(t, "main", r.Status.Pool)
	assert.Equal(t, "ret-1", r.Status.Node)
	assert.Equal(t, device, r.Status.Device)
	names := map[string]bool{}
	for _, c := range r.Status.Preflight {
		names[c.Name] = true
		assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
	}
	assert.Equal(t, map[string]bool{retirement.CheckHosts: true, retirement.CheckCopies: true, retirement.CheckPools: true, retirement.CheckCapacity: true, retirement.CheckPGsPerOSD: true, cephv1alpha1.CheckHealth: true}, names)
	assert.Contains(t, r.Status.Message, fmt.Sprintf("osd.%d is purged from Ceph, %s of node ret-1 is wiped", id, device))
	assert.NotContains(t, r.Status.ManualSteps, "sgdisk", "the plugin wiped the device")
	assert.False(t, r.Status.OSDStopped)
	assert.Equal(t, int32(0), *r.Status.PGsLeft)

	// Ceph's order: checks, label, out while up, drained, then purge, wipe.
	osd := fmt.Sprintf(" osd.%d", id)
	var order []string
	for _, v := range rookSim.ran() {
		if verb, ok := strings.CutSuffix(v, osd); ok && (len(order) == 0 || order[len(order)-1] != verb) {
			order = append(order, verb)
		}
	}
	assert.Equal(t, []string{"probe", "identify", "out", "probe", "purge", "zap"}, order, "the Ceph Jobs run, repeats folded")
	exists, _, _, _ := rookSim.ceph.OSD(int(id))
	assert.False(t, exists, "Ceph has no osd.%d", id)
	assert.Empty(t, rookSim.ceph.Label("ret-1", "/dev/sdb"), "the device is wiped")
	_, err := h.osdDeployment(id)
	assert.True(t, apierrors.IsNotFound(err), "the OSD's Deployment is deleted")
	assert.False(t, h.listed("ret-1", device), "the device is out of the CephCluster")
	assert.True(t, h.listed("ret-1", disks["ret-1"]["/dev/sdc"].Status.StorageDevice()), "the others stay")
	var marked cephv1alpha1.Disk
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&disk), &marked))
	assert.Equal(t, fmt.Sprintf("osd.%d", id), marked.Annotations[cephv1alpha1.RetiredAnnotation])
	h.eventually("a finished retirement holds nothing: its finalizer and every Ceph Job go", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
		if len(r.Finalizers) > 0 || len(h.cephJobs()) > 0 {
			return fmt.Errorf("finalizers %v, %d Ceph Jobs", r.Finalizers, len(h.cephJobs()))
		}
		return nil
	})
	rookSim.check()
	inv.check(h.ctx) // the retired device is the one exception "nothing lost" allows

	h.eventually("Events for each phase", func() error {
		for _, reason := range []string{"Draining", "StoppingOSD", "Removing", "Wiping", "Retired"} {
			if err := (eventsv1List{}).find(h, "retire-sdb", reason); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("Rook's next prepare on the node finds no OSD to start again", func(t *testing.T) {
		sdd := disks["ret-1"]["/dev/sdd"]
		h.createPool("more", sdd.Name) // a new device on ret-1: Rook prepares the node
		h.eventually("the new device is an OSD", func() error {
			if n := len(h.osdDeployments()); n != 6 {
				return fmt.Errorf("%d OSDs", n)
			}
			return nil
		})
		for _, d := range h.osdDeployments() {
			assert.False(t, envOf(&d, rook.EnvNodeName) == "ret-1" && envOf(&d, rook.EnvBlockPath) == "/dev/sdb",
				"%s runs on the retired device again", d.Name)
			// The class ceph-volume was given, from the device's config.deviceClass.
			class := "hdd"
			if envOf(&d, rook.EnvBlockPath) == "/dev/sdd" {
				class = "ssd"
			}
			assert.Equal(t, class, d.Labels["device-class"], "%s", d.Name)
			assert.Equal(t, class, envOf(&d, "ROOK_OSD_DEVICE_CLASS"), "%s", d.Name)
		}
	})
	t.Run("deleting the finished retirement does not bring the device back", func(t *testing.T) {
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
		time.Sleep(time.Second)
		assert.False(t, h.listed("ret-1", device))
	})
}

// Without the wipe, Rook's prepare would start the purged OSD again: the
// simulation does what Rook does with a device that still carries a label.
func TestAnUnwipedDeviceBringsItsOSDBack(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	d := h.osdDeployments()
	var id int
	for _, dep := range d {
		if envOf(&dep, rook.EnvBlockPath) == "/dev/sdb" && envOf(&dep, rook.EnvNodeName) == "ret-2" {
			id, _ = strconv.Atoi(dep.Labels[rook.OSDIDLabel])
			require.NoError(t, h.c.Delete(h.ctx, &dep))
		}
	}
	require.NotEmpty(t, rookSim.ceph.Label("ret-2", "/dev/sdb"), "the device keeps its label")
	h.createPool("more", disks["ret-2"]["/dev/sdd"].Name)
	h.eventually("Rook starts the labelled OSD again", func() error {
		_, err := h.osdDeployment(int32(id))
		return err
	})
}

func envOf(d *appsv1.Deployment, name string) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func TestAPreflightRefusalTouchesNothing(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(h *harness, rookSim *rookPlayer)
		want    string
	}{
		{"a consumer with a single copy", func(h *harness, _ *rookPlayer) { h.createBlockStorage("scratch", new(int32(1))) },
			"Copies: BlockStorage scratch keeps a single copy"},
		{"Ceph reports nearfull OSDs", func(_ *harness, rookSim *rookPlayer) { rookSim.ceph.Checks.Store("OSD_NEARFULL", "1 nearfull osd(s)") },
			"Health: Ceph reports OSD_NEARFULL: 1 nearfull osd(s)"},
		{"another OSD is down and out", func(h *harness, rookSim *rookPlayer) {
			rookSim.ceph.MarkOut(h.scaleOSDOn(rookSim, "ret-3", 0))
		}, "Ceph already lacks copies there"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, rookSim, disks := retirementCluster(t)
			tc.prepare(h, rookSim)
			disk := disks["ret-1"]["/dev/sdb"]
			devicesBefore := h.clusterDevices()

			h.retire("refused", disk.Name, "")
			r := h.waitRetirement("refused", cephv1alpha1.RetirementRefused)

			assert.Contains(t, r.Status.Message, "refused, nothing was touched")
			assert.Contains(t, r.Status.Message, tc.want)
			assert.False(t, r.Status.OSDStopped || r.Status.MarkedOut)
			for _, v := range rookSim.ran() {
				assert.True(t, strings.HasPrefix(v, "probe "), "only probes ran: %s", v)
			}
			_, _, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
			assert.True(t, in, "the OSD stays in")
			assert.Equal(t, devicesBefore, h.clusterDevices())
		})
	}
}

// scaleOSDOn scales the first OSD Deployment of node to replicas and
// waits until Ceph sees the OSD up (1) or down (0); it returns the OSD ID.
func (h *harness) scaleOSDOn(rookSim *rookPlayer, node string, replicas int32) int {
	h.t.Helper()
	d := h.osdDeployments()[slices.IndexFunc(h.osdDeployments(), func(d appsv1.Deployment) bool { return envOf(&d, rook.EnvNodeName) == node })]
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = &replicas
	require.NoError(h.t, h.c.Patch(h.ctx, &d, patch))
	id, err := strconv.Atoi(d.Labels[rook.OSDIDLabel])
	require.NoError(h.t, err)
	h.eventually(fmt.Sprintf("Ceph sees osd.%d with %d pods", id, replicas), func() error {
		if _, up, _, _ := rookSim.ceph.OSD(id); up != (replicas > 0) {
			return errNotYet
		}
		return nil
	})
	return id
}

// A retirement asked while another OSD is down but still in (Rook
// restarting it after a CephCluster edit, as seen on real Ceph) waits in
// Pending, touching nothing, and runs once the OSD is back.
func TestARetirementWaitsForAnOSDRookRestarts(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	restarting := h.scaleOSDOn(rookSim, "ret-3", 0)

	h.retire("waits", disks["ret-1"]["/dev/sdb"].Name, "")
	h.waitRetirementSaying("waits", cephv1alpha1.RetirementPending, fmt.Sprintf("waiting for Ceph to settle (osd.%d down", restarting))
	for _, v := range rookSim.ran() {
		assert.True(t, strings.HasPrefix(v, "probe "), "only probes ran while it waited: %s", v)
	}

	h.scaleOSDOn(rookSim, "ret-3", 1)
	r := h.waitRetirement("waits", cephv1alpha1.RetirementRetired)
	// No rook.check(): the test itself stopped an OSD holding PGs.
	assert.False(t, rookSim.ceph.Exists(int(*r.Status.OSDID)), "the retired OSD is purged")
	exists, up, in, _ := rookSim.ceph.OSD(restarting)
	assert.True(t, exists && up && in, "osd.%d is back up and in", restarting)
}

// The kernel names of two disks changed places: the disk's name now
// points at the other disk's device, which holds the other OSD (Rook's OSD
// pods find their device by OSD ID; their Deployments keep the old name).
// The label says so, and the retirement removes the OSD the device
// actually holds, never the one Rook recorded at that name.
func TestSwappedKernelNamesRetireTheLabelledOSD(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	recordedAt := map[string]int32{}
	for _, d := range h.osdDeployments() {
		osd, err := rook.ParseOSDDeployment(&d)
		require.NoError(t, err)
		if osd.Node == "ret-3" {
			recordedAt[osd.BlockPath] = osd.ID
		}
	}
	rookSim.ceph.SwapLabels("ret-3", "/dev/sdb", "/dev/sdc")
	disk := disks["ret-3"]["/dev/sdb"]

	h.retire("swapped", disk.Name, "")
	r := h.waitRetirement("swapped", cephv1alpha1.RetirementRetired)

	require.NotNil(t, r.Status.OSDID)
	assert.Equal(t, recordedAt["/dev/sdc"], *r.Status.OSDID, "the OSD whose label /dev/sdb carries now")
	assert.NotEmpty(t, r.Status.DeviceLabel)
	exists, _, _, _ := rookSim.ceph.OSD(int(recordedAt["/dev/sdc"]))
	assert.False(t, exists, "the labelled OSD is purged")
	exists, up, in, _ := rookSim.ceph.OSD(int(recordedAt["/dev/sdb"]))
	assert.True(t, exists && up && in, "the OSD Rook recorded at /dev/sdb, now on /dev/sdc, stays up and in")
	for _, v := range rookSim.ran() {
		if strings.HasPrefix(v, "out ") || strings.HasPrefix(v, "purge ") {
			assert.Equal(t, fmt.Sprintf("osd.%d", recordedAt["/dev/sdc"]), strings.Fields(v)[1], "only the labelled OSD is touched: %s", v)
		}
	}
	assert.Empty(t, rookSim.ceph.Label("ret-3", "/dev/sdb"), "the device the Disk names is wiped")
	assert.NotEmpty(t, rookSim.ceph.Label("ret-3", "/dev/sdc"), "the other device keeps its OSD")
	rookSim.check()
}

// A drain that cannot finish (no PG moves) is aborted after the stall
// limit: the OSD is marked in again, the retirement says why.
func TestAStalledDrainIsAbortedAndGivesTheOSDBack(t *testing.T) {
	h := newHarness(t)
	h.cfg.RetirementTiming.Stall = 2 * time.Second
	h, rookSim, disks := retirementClusterWith(h)
	rookSim.ceph.Stuck.Store(true) // backfill cannot go
	disk := disks["ret-2"]["/dev/sdc"]

	h.retire("stalls", disk.Name, "")
	r := h.waitRetirement("stalls", cephv1alpha1.RetirementFailed)

	assert.Contains(t, r.Status.Message, "aborted: neither a PG left osd.")
	assert.Contains(t, r.Status.Message, "is up and in again")
	exists, up, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
	assert.True(t, exists && up && in, "the OSD is up and in")
	assert.True(t, h.listed("ret-2", disk.Status.StorageDevice()))
	assert.False(t, r.Status.MarkedOut || r.Status.OSDStopped)
	rookSim.check()
}

// An OSD of another host restarting while a disk drains (Rook restarts
// each OSD whose Deployment changed after a CephCluster edit): Ceph still
// counts it in, so the drain holds, stopping nothing, and goes on once the
// OSD is back.
func TestAnOSDRestartedDuringTheDrainHoldsIt(t *testing.T) {
	h := newHarness(t)
	h.cfg.RetirementTiming.Stall = 5 * time.Minute // the hold is not a stall
	h, rookSim, disks := retirementClusterWith(h)
	rookSim.ceph.Stuck.Store(true) // hold the drain until the OSD is down
	h.retire("restart", disks["ret-1"]["/dev/sdb"].Name, "")
	h.waitRetirement("restart", cephv1alpha1.RetirementDraining)
	restarting := h.scaleOSDOn(rookSim, "ret-3", 0)
	rookSim.ceph.Stuck.Store(false)
	h.waitRetirementSaying("restart", cephv1alpha1.RetirementDraining, fmt.Sprintf("waiting for osd.%d on host ret-3, down but still in", restarting))
	assert.False(t, slices.ContainsFunc(rookSim.ran(), func(v string) bool { return strings.HasPrefix(v, "purge ") }), "nothing purged while held")

	h.scaleOSDOn(rookSim, "ret-3", 1)
	r := h.waitRetirement("restart", cephv1alpha1.RetirementRetired)
	assert.False(t, rookSim.ceph.Exists(int(*r.Status.OSDID)), "the retired OSD is purged")
}

// A second host going down while a disk drains holds the drain; once Ceph
// marks its OSDs out (the monitors do after mon_osd_down_out_interval),
// Ceph lacks copies there, and the retirement is aborted, the OSD given
// back.
func TestAHostDownDuringTheDrainAbortsIt(t *testing.T) {
	h := newHarness(t)
	h.cfg.RetirementTiming.Stall = 5 * time.Minute // the abort is Ceph's out, not a stall
	h, rookSim, disks := retirementClusterWith(h)
	rookSim.ceph.Stuck.Store(true) // hold the drain
	disk := disks["ret-1"]["/dev/sdb"]
	h.retire("host-down", disk.Name, "")
	h.waitRetirement("host-down", cephv1alpha1.RetirementDraining)
	var down []int
	for _, d := range h.osdDeployments() {
		if envOf(&d, rook.EnvNodeName) == "ret-3" {
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.Replicas = new(int32(0))
			require.NoError(t, h.c.Patch(h.ctx, &d, patch))
			id, err := strconv.Atoi(d.Labels[rook.OSDIDLabel])
			require.NoError(t, err)
			down = append(down, id)
		}
	}
	h.waitRetirementSaying("host-down", cephv1alpha1.RetirementDraining, "down but still in")
	for _, id := range down {
		rookSim.ceph.MarkOut(id)
	}
	r := h.waitRetirement("host-down", cephv1alpha1.RetirementFailed)
	assert.Contains(t, r.Status.Message, "on host ret-3 is down and out: Ceph lacks copies there")
	_, _, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
	assert.True(t, in, "marked in again")
}

// A dead disk (pulled from its node, its OSD down) is the most common
// retirement: Ceph recovers its copies once it is out, it is purged by its
// ID, and its device leaves the CephCluster unwiped, the manual steps
// saying what to do if it comes back.
func TestADeadDiskIsRetired(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	disk := disks["ret-1"]["/dev/sdb"]
	id := rookSim.ceph.LabelledOSDs("ret-1")["/dev/sdb"]
	rookSim.ceph.Pull("ret-1", "/dev/sdb")
	h.eventually("Ceph sees the OSD down", func() error {
		if _, up, _, _ := rookSim.ceph.OSD(id); up {
			return fmt.Errorf("osd.%d is up", id)
		}
		return nil
	})
	h.retire("dead", disk.Name, "")
	r := h.waitRetirement("dead", cephv1alpha1.RetirementRetired)
	assert.True(t, r.Status.DiskGone, r.Status.Message)
	assert.Equal(t, int32(id), *r.Status.OSDID)
	assert.Contains(t, r.Status.ManualSteps, "was not wiped by the plugin")
	assert.False(t, rookSim.ceph.Exists(id), "purged by its ID")
	_, err := h.osdDeployment(int32(id))
	assert.True(t, apierrors.IsNotFound(err), "its Deployment is gone: %v", err)
	assert.False(t, h.listed("ret-1", disk.Status.StorageDevice()), "its device is out of the CephCluster")
	rookSim.check()
}

// An OSD someone marked out before the retirement is still out after the
// retirement is cancelled: an abort gives back exactly what it changed.
func TestAnAbortRestoresTheStateBefore(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	id := rookSim.ceph.LabelledOSDs("ret-2")["/dev/sdb"]
	rookSim.ceph.MarkOut(id)
	h.eventually("Ceph moved the out OSD's PGs", func() error {
		if _, _, _, pgs := rookSim.ceph.OSD(id); pgs > 0 {
			return fmt.Errorf("osd.%d has %d PGs", id, pgs)
		}
		return nil
	})
	rookSim.mu.Lock()
	rookSim.pauseAfter = cephjob.VerbIdentify // held in Draining, its first probe unanswered
	rookSim.mu.Unlock()
	h.retire("was-out", disks["ret-2"]["/dev/sdb"].Name, "")
	r := h.waitRetirement("was-out", cephv1alpha1.RetirementDraining)
	require.NotNil(t, r.Status.OSDBefore)
	assert.Equal(t, cephv1alpha1.OSDState{Up: true, In: false}, *r.Status.OSDBefore)
	assert.False(t, r.Status.MarkedOut, "an OSD already out is not marked out")
	require.NoError(t, h.c.Delete(h.ctx, r))
	rookSim.ceph.Paused.Store(false)
	h.waitGone(r)
	_, up, in, _ := rookSim.ceph.OSD(id)
	assert.True(t, up)
	assert.False(t, in, "it was out before the retirement, and is out after it")
}

func TestCancellingARetirement(t *testing.T) {
	t.Run("before anything is touched", func(t *testing.T) {
		h, _, disks := retirementCluster(t)
		h.retire("cancel-early", disks["ret-1"]["/dev/sdb"].Name, "no-such-disk-yet")
		r := h.waitRetirement("cancel-early", cephv1alpha1.RetirementRefused)
		assert.Contains(t, r.Status.Message, "no Disk no-such-disk-yet")
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
	})
	t.Run("while it drains: marked in again", func(t *testing.T) {
		h, rookSim, disks := retirementCluster(t)
		rookSim.ceph.Stuck.Store(true)
		h.retire("cancel-draining", disks["ret-1"]["/dev/sdb"].Name, "")
		r := h.waitRetirement("cancel-draining", cephv1alpha1.RetirementDraining)
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
		_, _, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
		assert.True(t, in, "the OSD is in again before the retirement goes")
		rookSim.check()
	})
	t.Run("while its OSD stops: started again and marked in", func(t *testing.T) {
		h, rookSim, disks := retirementCluster(t)
		rookSim.osds.HoldStoppedPods.Store(true)
		h.retire("cancel-stopping", disks["ret-1"]["/dev/sdb"].Name, "")
		r := h.waitRetirement("cancel-stopping", cephv1alpha1.RetirementStoppingOSD)
		h.eventually("the OSD is stopped, and Rook's operator told to leave it (the status is written before the action)", func() error {
			d, err := h.osdDeployment(*r.Status.OSDID)
			if err != nil {
				return err
			}
			if *d.Spec.Replicas != 0 || d.Labels["ceph.rook.io/do-not-reconcile"] == "" {
				return fmt.Errorf("replicas %d, labels %v", *d.Spec.Replicas, d.Labels)
			}
			return nil
		})
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
		d, err := h.osdDeployment(*r.Status.OSDID)
		require.NoError(t, err)
		assert.Equal(t, int32(1), *d.Spec.Replicas, "the OSD is started again before the retirement goes")
		assert.NotContains(t, d.Labels, "ceph.rook.io/do-not-reconcile", "and Rook reconciles it again")
		_, _, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
		assert.True(t, in, "and it is in")
	})
	t.Run("not once purged", func(t *testing.T) {
		h, rookSim, disks := retirementCluster(t)
		disk := disks["ret-3"]["/dev/sdb"]
		rookSim.mu.Lock()
		rookSim.pauseAfter = cephjob.VerbPurge // the wipe waits
		rookSim.mu.Unlock()
		h.retire("cancel-late", disk.Name, "")
		r := h.waitRetirement("cancel-late", cephv1alpha1.RetirementWiping)
		h.eventually("the purge answered", func() error {
			if rookSim.ceph.Exists(int(*r.Status.OSDID)) {
				return fmt.Errorf("osd.%d still exists", *r.Status.OSDID)
			}
			return nil
		})
		require.NoError(t, h.c.Delete(h.ctx, r))
		time.Sleep(time.Second)
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r), "held until it is done")
		rookSim.ceph.Paused.Store(false)
		h.waitGone(r)
		assert.False(t, h.listed("ret-3", disk.Status.StorageDevice()), "it finished: the device is out")
	})
}

// createBlockStorage is a BlockStorage asking for replicas (nil: automatic).
func (h *harness) createBlockStorage(name string, replicas *int32) {
	h.t.Helper()
	h.createConsumer(&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cephv1alpha1.BlockStorageSpec{Replicas: replicas}})
}

func (h *harness) waitGone(obj client.Object) {
	h.t.Helper()
	h.eventually(obj.GetName()+" is gone", func() error {
		err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errors.Join(err, errNotYet)
	})
}

// Rook makes the replacement's OSD Deployment as soon as the prepare has
// created the OSD; the OSD joins CRUSH and takes data only once it has
// booted. Until Ceph has it up and in, the old disk is not touched (seen
// on real Ceph: the preflight ran against a cluster that had not gained
// the replacement yet).
func TestAReplacementWaitsForItsOSDToBoot(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	rookSim.ceph.HoldBoot.Store(true)
	old, repl := disks["ret-1"]["/dev/sdb"], disks["ret-1"]["/dev/sdd"]

	h.retire("replace", old.Name, repl.Name)
	h.eventually("the retirement waits for the replacement's OSD to boot", func() error {
		var r cephv1alpha1.DiskRetirement
		if err := h.c.Get(h.ctx, client.ObjectKey{Name: "replace"}, &r); err != nil {
			return err
		}
		if !strings.Contains(r.Status.Message, "waiting for Ceph to have replacement Disk "+repl.Name) {
			return fmt.Errorf("%s: %s", r.Status.Phase, r.Status.Message)
		}
		return nil
	})
	time.Sleep(time.Second) // several probes
	r := h.waitRetirement("replace", cephv1alpha1.RetirementWaitingForReplacement)
	assert.Contains(t, r.Status.Message, "up and in")
	assert.False(t, r.Status.MarkedOut || r.Status.OSDStopped)
	for _, v := range rookSim.ran() {
		assert.True(t, strings.HasPrefix(v, "probe "), "only probes while the replacement boots: %s", v)
	}

	rookSim.ceph.HoldBoot.Store(false)
	h.waitRetirement("replace", cephv1alpha1.RetirementRetired)
	rookSim.check()
}

func TestReplacingADiskAddsTheReplacementFirst(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	old, repl := disks["ret-1"]["/dev/sdb"], disks["ret-1"]["/dev/sdd"]

	h.retire("replace", old.Name, repl.Name)
	r := h.waitRetirement("replace", cephv1alpha1.RetirementRetired)

	var pool cephv1alpha1.DiskPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
	assert.Contains(t, pool.Spec.Disks, repl.Name, "the replacement joined the pool")
	assert.True(t, h.listed("ret-1", repl.Status.StorageDevice()))
	assert.False(t, h.listed("ret-1", old.Status.StorageDevice()))
	inv.mu.Lock()
	assert.Equal(t, 6, inv.fewestListed, "no CephCluster revision listed fewer than six devices: the replacement joined before the old disk left")
	inv.mu.Unlock()
	assert.Contains(t, r.Status.Message, "purged from Ceph")
	rookSim.check()
}

// Two retirements asked together run one after the other: the second
// touches nothing while the first's OSD is out.
func TestTwoRetirementsRunOneAtATime(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	h.createBlockStorage("db", new(int32(2)))
	rookSim.ceph.Stuck.Store(true) // hold the first drain
	h.retire("first", disks["ret-1"]["/dev/sdb"].Name, "")
	h.retire("second", disks["ret-2"]["/dev/sdb"].Name, "")
	h.waitRetirement("first", cephv1alpha1.RetirementDraining)
	time.Sleep(time.Second) // several polls of the second
	second := h.waitRetirement("second", cephv1alpha1.RetirementPending)
	assert.Contains(t, second.Status.Message, "waiting for DiskRetirement first (Draining) to finish: Ceph retires one OSD at a time")
	rookSim.ceph.Stuck.Store(false)
	h.waitRetirement("first", cephv1alpha1.RetirementRetired)
	h.waitRetirement("second", cephv1alpha1.RetirementRetired)
	rookSim.check() // never two OSDs out at once
}

// TestARetirementResumesAfterACrashAtEveryStep crashes one retirement at
// every step it records (probe, identify, out, drain, stop, purge, delete,
// wipe, mark, retired): each plugin is stopped right after its first status
// write that records a step (phase and message) no plugin before it
// recorded, before the action that step announced, and a new one starts
// from there. Ceph answers a Job only once a plugin recorded that it runs,
// so that "Ceph Job … runs" is a step, as in an uninterrupted retirement.
// The retirement ends as without a crash. (It was one cluster and one
// retirement per crash point: 23 repeats of the same prefix, a quarter of
// the package's time.) A
// plugin goes on past steps recorded before: one that crashed after each of
// its writes would never mark a wiped disk retired, as the mark follows the
// wipe's status write and a new plugin asks for the wipe again first.
func TestARetirementResumesAfterACrashAtEveryStep(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	h.stop()
	h.cfg.LeaderElection = false
	disk := disks["ret-2"]["/dev/sdb"]
	h.retire("crashy", disk.Name, "")
	recorded := &recordedSteps{seen: map[string]bool{}}
	lives := 0
	for phase := cephv1alpha1.DiskRetirementPhase(""); phase != cephv1alpha1.RetirementRetired; phase = h.retirementPhase("crashy") {
		lives++
		require.LessOrEqual(t, lives, 80, "each plugin records a new step, and a retirement has far fewer")
		// Ceph answers a Job only once a plugin recorded that it runs (a
		// step of its own, as in an uninterrupted retirement), not before.
		rookSim.ceph.Paused.Store(true)
		var dead atomic.Bool
		h.startWith(h.host, crashAfterANewStep(recorded, &dead))
		h.eventually(fmt.Sprintf("plugin %d records a new step, from phase %q", lives, phase), func() error {
			if dead.Load() {
				return nil
			}
			if h.retirementRecordsARunningJob("crashy") {
				rookSim.ceph.Paused.Store(false) // its "runs" was recorded before: answered now
			}
			return errNotYet
		})
		h.stop()
		rookSim.ceph.Paused.Store(false)
		h.eventually("Ceph answers the Job the stopped plugin left", func() error { return h.cephJobSettled("crashy") })
	}
	t.Logf("%d plugins, each stopped right after the first recording of a step: %s", lives, strings.Join(recorded.inOrder, "; "))
	assert.GreaterOrEqual(t, lives, 20, "a crash after every step")

	h.start() // what follows the last status write, uninterrupted
	r := h.waitRetirement("crashy", cephv1alpha1.RetirementRetired)
	rookSim.check()
	assert.False(t, h.listed("ret-2", disk.Status.StorageDevice()))
	_, err := h.osdDeployment(*r.Status.OSDID)
	assert.True(t, apierrors.IsNotFound(err))
	exists, _, _, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
	assert.False(t, exists)
	assert.Empty(t, rookSim.ceph.Label("ret-2", "/dev/sdb"))
}

// recordedSteps are the retirement steps (phase and message) some plugin
// recorded, for the crash test.
type recordedSteps struct {
	mu      sync.Mutex
	seen    map[string]bool
	inOrder []string
}

// first adds step and says whether it is new.
func (r *recordedSteps) first(step string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[step] {
		return false
	}
	r.seen[step] = true
	r.inOrder = append(r.inOrder, step)
	return true
}

// ceph-rook Job names in a retirement's message: a Job asked again is the
// same step.
var cephJobInMessage = regexp.MustCompile(`Ceph Job \S+ runs`)

// crashAfterANewStep is a plugin transport that dies (every later request
// fails, none reaches the API server) right after a DiskRetirement status
// write that records a step not recorded before, setting dead.
func crashAfterANewStep(recorded *recordedSteps, dead *atomic.Bool) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if dead.Load() {
				return nil, errors.New("the plugin crashed")
			}
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK || req.Method != http.MethodPatch ||
				!strings.Contains(req.URL.Path, "/diskretirements/") || !strings.HasSuffix(req.URL.Path, "/status") {
				return resp, err
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			if err != nil {
				return resp, err
			}
			var written cephv1alpha1.DiskRetirement
			if err := json.Unmarshal(body, &written); err != nil {
				return resp, err
			}
			if recorded.first(string(written.Status.Phase) + ": " + cephJobInMessage.ReplaceAllString(written.Status.Message, "Ceph Job runs")) {
				dead.Store(true)
			}
			return resp, nil
		})
	}
}

// cephJobSettled is nil once the Ceph Job the retirement names has
// finished, or was never made (the plugin stopped before making it).
func (h *harness) cephJobSettled(retirement string) error {
	status, err := h.retirementStatus(retirement)
	if err != nil {
		return err
	}
	if status.CephJob == "" {
		return nil
	}
	var job batchv1.Job
	err = h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: status.CephJob}, &job)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	if simulate.JobFinished(&job) {
		return nil
	}
	return fmt.Errorf("Ceph Job %s runs: %w", job.Name, errNotYet)
}

// retirementRecordsARunningJob is true while the retirement's status says
// its Ceph Job runs.
func (h *harness) retirementRecordsARunningJob(name string) bool {
	status, err := h.retirementStatus(name)
	return err == nil && status.CephJob != "" && strings.HasSuffix(status.Message, "(Ceph Job "+status.CephJob+" runs)")
}

// retirementPhase is the retirement's phase as the API server has it.
func (h *harness) retirementPhase(name string) cephv1alpha1.DiskRetirementPhase {
	h.t.Helper()
	status, err := h.retirementStatus(name)
	require.NoError(h.t, err)
	return status.Phase
}

// retirementStatus is the retirement's status as the API server has it.
func (h *harness) retirementStatus(name string) (cephv1alpha1.DiskRetirementStatus, error) {
	var r cephv1alpha1.DiskRetirement
	err := h.c.Get(h.ctx, client.ObjectKey{Name: name}, &r)
	return r.Status, err
}

// TestDiskRetirementSpecRules: the API server keeps a retirement's request
// fixed, and lets suspend go one way only.
func TestDiskRetirementSpecRules(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "rules"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: "a", Replacement: "b", Suspend: true}}
	require.NoError(t, env.Client.Create(ctx, r))
	t.Cleanup(func() { _ = env.Client.Delete(ctx, r) })

	refused := func(change func(*cephv1alpha1.DiskRetirement), want string) {
		t.Helper()
		var cur cephv1alpha1.DiskRetirement
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(r), &cur))
		change(&cur)
		err := env.Client.Update(ctx, &cur)
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
		assert.Contains(t, err.Error(), want)
	}
	refused(func(r *cephv1alpha1.DiskRetirement) { r.Spec.Disk = "c" }, "disk and replacement cannot change")
	refused(func(r *cephv1alpha1.DiskRetirement) { r.Spec.Replacement = "" }, "disk and replacement cannot change")

	var cur cephv1alpha1.DiskRetirement
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(r), &cur))
	cur.Spec.Suspend = false
	require.NoError(t, env.Client.Update(ctx, &cur), "confirming is allowed")
	refused(func(r *cephv1alpha1.DiskRetirement) { r.Spec.Suspend = true }, "cannot be suspended again")

	self := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "self"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: "a", Replacement: "a"}}
	err := env.Client.Create(ctx, self)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a disk cannot replace itself")
}

func TestASuspendedRetirementShowsItsChecksAndWaitsForConfirmation(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	old := disks["ret-1"]["/dev/sdb"]
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "preview"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: old.Name, Suspend: true}}
	require.NoError(t, h.c.Create(h.ctx, r))
	t.Cleanup(func() { _ = controlPlane.Env(t).Client.Delete(context.Background(), r) })

	r = h.waitRetirement("preview", cephv1alpha1.RetirementSuspended)
	require.Len(t, r.Status.Preflight, 6, "the consumers' and Ceph's checks")
	for _, c := range r.Status.Preflight {
		assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
	}
	assert.Contains(t, r.Status.Message, "its device's label names it")
	time.Sleep(time.Second)
	for _, v := range rookSim.ran() {
		assert.Regexp(t, `^(probe|identify) `, v, "nothing but questions while suspended")
	}
	_, _, in, _ := rookSim.ceph.OSD(int(*r.Status.OSDID))
	assert.True(t, in)

	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Suspend = false
	require.NoError(t, h.c.Patch(h.ctx, r, patch))
	h.waitRetirement("preview", cephv1alpha1.RetirementRetired)
	assert.False(t, h.listed("ret-1", old.Status.StorageDevice()))
}

func TestASuspendedReplacementWaitsForCephsChecksUntilConfirmed(t *testing.T) {
	h, _, disks := retirementCluster(t)
	old, repl := disks["ret-1"]["/dev/sdb"], disks["ret-1"]["/dev/sdd"]
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "preview"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: old.Name, Replacement: repl.Name, Suspend: true}}
	require.NoError(t, h.c.Create(h.ctx, r))
	t.Cleanup(func() { _ = controlPlane.Env(t).Client.Delete(context.Background(), r) })

	r = h.waitRetirement("preview", cephv1alpha1.RetirementSuspended)
	assert.Contains(t, r.Status.Preflight[0].Message, "3 hosts and 6 OSDs would remain", "the replacement counts as joined")
	assert.Contains(t, r.Status.Message, "Ceph's own checks run once it is an OSD")
	var pool cephv1alpha1.DiskPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
	assert.NotContains(t, pool.Spec.Disks, repl.Name, "nothing is touched while suspended")

	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Suspend = false
	require.NoError(t, h.c.Patch(h.ctx, r, patch))
	h.waitRetirement("preview", cephv1alpha1.RetirementRetired)
	assert.True(t, h.listed("ret-1", repl.Status.StorageDevice()))
	assert.False(t, h.listed("ret-1", old.Status.StorageDevice()))
}

// A disk no OSD Deployment records has its label read (a disk renamed
// since Rook prepared it still carries its OSD's); without one it leaves
// the CephCluster, and nothing else is asked of Ceph.
func TestRetiringADiskWithoutAnOSDTouchesNoCeph(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("bare-1", hdd("sdb", "0x5bare1"))
	disk := h.waitDisks("bare-1", 1)["/dev/sdb"]
	h.createPool("bare", disk.Name)
	h.createRookOperator()
	var verbs []string
	var mu sync.Mutex
	ceph := &simulate.Ceph{Client: h.c, Namespace: h.cfg.ClusterNamespace, Ran: func(job *batchv1.Job) {
		mu.Lock()
		defer mu.Unlock()
		verbs = append(verbs, job.Labels[cephjob.VerbLabel])
	}}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() { // Ceph answers; no Rook prepares anything
		defer close(done)
		for ctx.Err() == nil {
			_ = ceph.Step(ctx)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	device := disk.Status.StorageDevice()
	h.eventually("the device is listed", func() error {
		if !h.listed("bare-1", device) {
			return errNotYet
		}
		return nil
	})

	h.retire("no-osd", disk.Name, "")
	r := h.waitRetirement("no-osd", cephv1alpha1.RetirementRetired)

	assert.Nil(t, r.Status.OSDID)
	assert.Contains(t, r.Status.Message, "it carried no OSD")
	mu.Lock()
	assert.Equal(t, []string{"identify"}, verbs, "its label read, nothing else asked of Ceph")
	mu.Unlock()
	assert.False(t, h.listed("bare-1", device))
}

// TestNothingLostStillFlagsADeviceTakenOutWithoutAPurge: the exception is
// a retirement that purged the OSD, not the retired mark: a Disk marked by
// hand loses its device and the watcher says so.
func TestNothingLostStillFlagsADeviceTakenOutWithoutAPurge(t *testing.T) {
	h, _, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	disk := disks["ret-3"]["/dev/sdb"]
	patch := client.MergeFrom(disk.DeepCopy())
	disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "by-hand"}
	require.NoError(t, h.c.Patch(h.ctx, &disk, patch))
	h.eventually("the watcher flags the drop", func() error {
		inv.mu.Lock()
		defer inv.mu.Unlock()
		for _, v := range inv.violations {
			if strings.Contains(v, "dropped ret-3|"+disk.Status.StorageDevice()) {
				return nil
			}
		}
		return fmt.Errorf("violations %v", inv.violations)
	})
	inv.stop()
}

// An OSD Deployment that cannot be read is not a gone one: the retirement
// waits, the device stays listed and Ceph is not asked to purge until it
// reads again.
func TestAnUnreadableOSDDeploymentIsNotTakenForGone(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	rookSim.osds.HoldStoppedPods.Store(true)
	disk := disks["ret-2"]["/dev/sdb"]
	h.retire("unreadable", disk.Name, "")
	r := h.waitRetirement("unreadable", cephv1alpha1.RetirementStoppingOSD)
	id := *r.Status.OSDID

	d, err := h.osdDeployment(id)
	require.NoError(t, err)
	env := d.Spec.Template.Spec.Containers[0].Env
	h.update(d, func() {
		d.Spec.Template.Spec.Containers[0].Env = slices.DeleteFunc(slices.Clone(env), func(e corev1.EnvVar) bool { return e.Name == rook.EnvOSDUUID })
	})
	rookSim.osds.HoldStoppedPods.Store(false)
	h.eventually("the retirement says it cannot read the Deployment", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
		if !strings.Contains(r.Status.Message, "cannot be read") {
			return fmt.Errorf("phase %s: %s", r.Status.Phase, r.Status.Message)
		}
		return nil
	})
	time.Sleep(time.Second) // several polls
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
	assert.Equal(t, cephv1alpha1.RetirementStoppingOSD, r.Status.Phase)
	assert.True(t, h.listed("ret-2", disk.Status.StorageDevice()), "the device stays in the CephCluster")
	for _, v := range rookSim.ran() {
		assert.False(t, strings.HasPrefix(v, "purge "), "not purged: %s", v)
	}

	h.update(d, func() { d.Spec.Template.Spec.Containers[0].Env = env })
	h.waitRetirement("unreadable", cephv1alpha1.RetirementRetired)
	inv.check(h.ctx)
}

// A retirement's name is no label value and no Job name: one of 200
// characters retires as any other.
func TestALongNamedRetirementRuns(t *testing.T) {
	h, rookSim, disks := retirementCluster(t)
	name := strings.Repeat("retire-the-second-disk-of-node-three-", 6)[:200]
	h.retire(name, disks["ret-3"]["/dev/sdc"].Name, "")
	h.waitRetirement(name, cephv1alpha1.RetirementRetired)
	rookSim.check()
}

// A Ceph Job the API server refuses for good (here a policy forbids it)
// is an answer, not something to ask again for ever: before anything is
// touched the retirement is refused, saying why.
func TestARefusedCephJobEndsTheRetirement(t *testing.T) {
	env := controlPlane.Env(t)
	h, _, disks := retirementCluster(t)
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-ceph-jobs-" + h.cfg.ClusterNamespace},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: fmt.Sprintf("object.metadata.namespace != %q", h.cfg.ClusterNamespace),
				Message:    "no Jobs here",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	for _, o := range []client.Object{policy, binding} {
		require.NoError(t, env.Client.Create(ctx, o))
		t.Cleanup(func() { _ = env.Client.Delete(ctx, o) })
	}
	h.eventually("the policy refuses Jobs", func() error {
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe-policy", Namespace: h.cfg.ClusterNamespace},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
		if err := h.c.Create(ctx, job); err == nil {
			_ = h.c.Delete(ctx, job)
			return errNotYet
		}
		return nil
	})

	h.retire("no-jobs", disks["ret-1"]["/dev/sdb"].Name, "")
	r := h.waitRetirement("no-jobs", cephv1alpha1.RetirementRefused)
	assert.Contains(t, r.Status.Message, "Kubernetes refused Ceph Job")
	assert.Contains(t, r.Status.Message, "no Jobs here")
}

// A retirement's message can pass the 1 KiB the API server keeps of an
// Event's note (a refusal naming every pool, a long retired annotation):
// its Event still arrives, cut, instead of being refused and lost.
func TestLongRetirementMessagesStillMakeEvents(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("long-1", hdd("sdb", "0x5901b"))
	disk := h.waitDisks("long-1", 1)["/dev/sdb"]
	why := strings.Repeat("retired by hand after a long story; ", 60) // > 2 KiB
	patch := client.MergeFrom(disk.DeepCopy())
	disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: why}
	require.NoError(t, h.c.Patch(h.ctx, &disk, patch))

	h.retire("long", disk.Name, "")
	r := h.waitRetirement("long", cephv1alpha1.RetirementRefused)
	require.Greater(t, len(r.Status.Message), 1024)

	h.eventually("the Refused Event arrives", func() error {
		var list eventsv1.EventList
		if err := h.c.List(h.ctx, &list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Regarding.UID == r.UID && e.Reason == string(cephv1alpha1.RetirementRefused) {
				if !strings.HasPrefix(r.Status.Message, strings.TrimSuffix(e.Note, " …")) {
					return fmt.Errorf("note %q is not the message's beginning", e.Note)
				}
				return nil
			}
		}
		return fmt.Errorf("no Refused Event for DiskRetirement long among %d", len(list.Items))
	})
}

// The simulated Rook starts an OSD whose label survived and whose
// Deployment was deleted while its pass ran, as Rook's operator starts the
// OSDs a prepare found against the Deployments there are once the prepare
// ran. A pass that judged by its first read of the Deployments lost that
// OSD for good when the delete landed between its reads (under load:
// TestAnUnwipedDeviceBringsItsOSDBack failed in a full run).
func TestSimulatedRookStartsALabelledOSDDeletedDuringItsPass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("sim-1", hdd("sdb", "0x5901b"), hdd("sdc", "0x5901c"))
	disks := h.waitDisks("sim-1", 2)
	h.createPool("first", disks["/dev/sdb"].Name)
	osds := &simulate.OSDs{Client: h.c, Namespace: h.cfg.ClusterNamespace}
	h.eventually("the simulation prepares sdb", func() error {
		if err := osds.Step(h.ctx); err != nil {
			return err
		}
		_, err := h.osdDeployment(0)
		return err
	})
	before := h.osdDeployments()
	osd0, err := h.osdDeployment(0)
	require.NoError(t, err)
	require.NoError(t, h.c.Delete(h.ctx, osd0))
	h.createPool("second", disks["/dev/sdc"].Name)
	h.eventually("the CephCluster lists sdc", func() error {
		if !h.listed("sim-1", disks["/dev/sdc"].Status.StorageDevice()) {
			return errNotYet
		}
		return nil
	})

	// The pass's first read still has osd.0's Deployment; sdc's prepare
	// finds osd.0's label on the node.
	osds.Client = &firstDeploymentListIs{Client: h.c, stale: before}
	require.NoError(t, osds.Step(h.ctx))
	_, err = h.osdDeployment(0)
	assert.NoError(t, err, "Rook starts the labelled osd.0 again")
}

// firstDeploymentListIs answers its first List of Deployments with stale,
// as a read made before a delete landed; everything else goes through.
type firstDeploymentListIs struct {
	client.Client
	stale  []appsv1.Deployment
	served bool
}

func (c *firstDeploymentListIs) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l, ok := list.(*appsv1.DeploymentList); ok && !c.served {
		c.served = true
		l.Items = slices.Clone(c.stale)
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}
