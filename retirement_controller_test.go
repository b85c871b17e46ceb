package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// rookPlayer plays Rook's part of a retirement against the real API
// server with the simulation `just run` uses (simulate.OSDs, which does
// what Rook's source does), and watches the invariants: the fewest devices
// the CephCluster listed, and any retired device that left the list before
// its Job succeeded.
type rookPlayer struct {
	h    *harness
	osds *simulate.OSDs

	mu   sync.Mutex
	jobs map[string]bool // every Job name Rook ran
	// unlistedBeforeJob names a device that left the list before its Job
	// succeeded: what must never happen.
	unlistedBeforeJob []string
}

func playRook(h *harness) *rookPlayer {
	p := &rookPlayer{h: h, jobs: map[string]bool{}}
	p.osds = &simulate.OSDs{Client: h.c, Namespace: h.cfg.ClusterNamespace, Ran: func(job *batchv1.Job) {
		p.mu.Lock()
		p.jobs[job.Name] = true
		p.mu.Unlock()
	}}
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

// createRookOperator is the operator Deployment, whose image the removal
// Job runs.
func (h *harness) createRookOperator() {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: rookOperatorDeployment, Namespace: h.cfg.OperatorNamespace},
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
	listed, err := simulate.ListedDevices(ctx, p.h.c, p.h.cfg.ClusterNamespace)
	if err != nil {
		return err
	}
	var jobs batchv1.JobList
	if err := p.h.c.List(ctx, &jobs, client.InNamespace(p.h.cfg.ClusterNamespace), client.MatchingLabels{"app": purgeAppLabel}); err != nil {
		return err
	}
	for i := range jobs.Items {
		if s := removalJobState(&jobs.Items[i]); !s.Succeeded && !s.Failed {
			p.checkStillListed(ctx, &jobs.Items[i], listed)
		}
	}
	return p.osds.Step(ctx)
}

// checkStillListed records a retired device that left the CephCluster
// while its Job had not finished.
func (p *rookPlayer) checkStillListed(ctx context.Context, job *batchv1.Job, listed []simulate.ListedDevice) {
	var ret cephv1alpha1.DiskRetirement
	if err := p.h.c.Get(ctx, client.ObjectKey{Name: job.Labels[RetirementLabel]}, &ret); err != nil || ret.Status.Device == "" {
		return
	}
	for _, dev := range listed {
		if dev == (simulate.ListedDevice{Node: ret.Status.Node, Device: ret.Status.Device}) {
			return
		}
	}
	p.mu.Lock()
	p.unlistedBeforeJob = append(p.unlistedBeforeJob, ret.Status.Device)
	p.mu.Unlock()
}

// setCephStatus writes the CephCluster's health and capacity, as Rook's
// status reporter does.
func (h *harness) setCephStatus(health string, usedBytes, totalBytes int64) {
	h.t.Helper()
	cc := &unstructured.Unstructured{}
	cc.SetGroupVersionKind(cephClusterGVK)
	require.NoError(h.t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: CephClusterName}, cc))
	patch := client.MergeFrom(cc.DeepCopy())
	require.NoError(h.t, unstructured.SetNestedMap(cc.Object, map[string]any{
		"health":   health,
		"capacity": map[string]any{"bytesUsed": usedBytes, "bytesTotal": totalBytes, "bytesAvailable": totalBytes - usedBytes},
	}, "status", "ceph"))
	// A merge patch: the plugin writes the CephCluster's spec meanwhile.
	require.NoError(h.t, h.c.Status().Patch(h.ctx, cc, patch))
}

const tib = int64(1) << 40

// retirementCluster is three nodes of two disks each (an HDD, an SSD), the
// HDDs in pool "main" and given to Ceph with an OSD each; the SSDs are
// available. It returns the Disks by node then kernel path.
func retirementCluster(t *testing.T) (*harness, *rookPlayer, map[string]map[string]cephv1alpha1.Disk) {
	h := newHarness(t)
	h.start()
	disks := map[string]map[string]cephv1alpha1.Disk{}
	var pool []string
	for i := 1; i <= 3; i++ {
		node := fmt.Sprintf("ret-%d", i)
		h.publishDiscovery(node, hdd("sdb", fmt.Sprintf("0x5%03db", i)), ssd("sdd", fmt.Sprintf("0x5%03dd", i)))
		disks[node] = h.waitDisks(node, 2)
		pool = append(pool, disks[node]["/dev/sdb"].Name)
	}
	h.createPool("main", pool...)
	p := playRook(h)
	h.setCephStatus("HEALTH_OK", tib, 12*tib)
	h.eventually("every HDD is an OSD", func() error {
		var osds appsv1.DeploymentList
		require.NoError(t, h.c.List(h.ctx, &osds, client.InNamespace(h.cfg.ClusterNamespace), client.MatchingLabels{"app": rookOSDAppLabel}))
		if len(osds.Items) != 3 {
			return fmt.Errorf("%d OSDs", len(osds.Items))
		}
		return nil
	})
	return h, p, disks
}

func (h *harness) retire(name, disk, replacement string) *cephv1alpha1.DiskRetirement {
	h.t.Helper()
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: disk, Replacement: replacement}}
	require.NoError(h.t, h.c.Create(h.ctx, r))
	h.t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), r)
		var left cephv1alpha1.DiskRetirement
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(r), &left) == nil && len(left.Finalizers) > 0 {
			left.Finalizers = nil
			_ = env.Client.Update(context.Background(), &left)
		}
	})
	return r
}

// waitRetirement waits for the retirement's phase and returns it.
func (h *harness) waitRetirement(name string, want cephv1alpha1.DiskRetirementPhase) *cephv1alpha1.DiskRetirement {
	h.t.Helper()
	var r cephv1alpha1.DiskRetirement
	h.eventually("DiskRetirement "+name+" "+string(want), func() error {
		if err := h.c.Get(h.ctx, client.ObjectKey{Name: name}, &r); err != nil {
			return err
		}
		if r.Status.Phase != want {
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
	for _, d := range h.clusterDevices()[node] {
		if d == device {
			return true
		}
	}
	return false
}

func (h *harness) removalJobs() []batchv1.Job {
	var jobs batchv1.JobList
	require.NoError(h.t, h.c.List(h.ctx, &jobs, client.InNamespace(h.cfg.ClusterNamespace)))
	return jobs.Items
}

// watchRetirementCluster runs the reliability suite's "nothing lost"
// watcher over the cluster's three HDDs: none may leave the CephCluster
// unless a DiskRetirement's Job removed its OSD.
func watchRetirementCluster(h *harness, disks map[string]map[string]cephv1alpha1.Disk) *nothingLost {
	h.t.Helper()
	inv := watchNothingLost(h.t, env.Config, h.cfg.ClusterNamespace)
	var ids []DeviceID
	for _, node := range disks {
		d := node["/dev/sdb"]
		ids = append(ids, DeviceIDOf(&d))
	}
	inv.protect(ids...)
	inv.waitWatching()
	h.setCephStatus("HEALTH_OK", tib, 12*tib) // a revision the watcher sees the devices in
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

func TestRetiringADiskRemovesItsOSDThenItsDevice(t *testing.T) {
	h, rook, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	// Two copies on different hosts: the two nodes left still hold them.
	h.createBlockStorage("db", new(int32(2)))
	disk := disks["ret-1"]["/dev/sdb"]
	device := StorageDeviceName(disk.Status)

	h.retire("retire-sdb", disk.Name, "")
	r := h.waitRetirement("retire-sdb", cephv1alpha1.RetirementRetired)

	require.NotNil(t, r.Status.OSDID)
	assert.Equal(t, "main", r.Status.Pool)
	assert.Equal(t, "ret-1", r.Status.Node)
	assert.Equal(t, device, r.Status.Device)
	assert.Len(t, r.Status.Preflight, 4)
	for _, c := range r.Status.Preflight {
		assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
	}
	assert.Contains(t, r.Status.Message, fmt.Sprintf("osd.%d is removed from Ceph", *r.Status.OSDID))
	assert.Contains(t, r.Status.ManualSteps, "sgdisk --zap-all "+device)
	assert.Contains(t, r.Status.ManualSteps, "on node ret-1")
	assert.False(t, r.Status.OSDStopped)
	h.eventually("a finished retirement holds nothing (its finalizer goes)", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
		if len(r.Finalizers) > 0 {
			return fmt.Errorf("finalizers %v", r.Finalizers)
		}
		return nil
	})

	jobs := h.removalJobs()
	require.Len(t, jobs, 1, "one Job")
	assert.Equal(t, RemovalJobName(*r.Status.OSDID), jobs[0].Name)
	assert.Equal(t, "docker.io/rook/ceph:v1.18.0", jobs[0].Spec.Template.Spec.Containers[0].Image, "the operator's own image")
	_, err := h.osdDeployment(*r.Status.OSDID)
	assert.True(t, apierrors.IsNotFound(err), "Rook's Job deleted the OSD's Deployment")
	assert.False(t, h.listed("ret-1", device), "the device is out of the CephCluster")
	assert.True(t, h.listed("ret-2", StorageDeviceName(disks["ret-2"]["/dev/sdb"].Status)), "the others stay")
	var marked cephv1alpha1.Disk
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&disk), &marked))
	assert.Equal(t, fmt.Sprintf("osd.%d", *r.Status.OSDID), marked.Annotations[cephv1alpha1.RetiredAnnotation])
	rook.mu.Lock()
	assert.Empty(t, rook.unlistedBeforeJob, "a device leaves the list only after its Job succeeded")
	rook.mu.Unlock()
	inv.check(h.ctx) // the retired device is the one exception "nothing lost" allows

	var pool cephv1alpha1.DiskPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
	assert.Contains(t, pool.Spec.Disks, disk.Name, "the pool's spec is the operator's: the plugin does not edit it")
	h.eventually("the pool says the disk is retired", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
		if !strings.Contains(pool.Status.Message, disk.Name+" retired") {
			return fmt.Errorf("pool message %q", pool.Status.Message)
		}
		return nil
	})
	h.eventually("Events for each phase", func() error {
		for _, reason := range []string{"StoppingOSD", "Removing", "Retired"} {
			if err := (eventsv1List{}).find(h, "retire-sdb", reason); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("deleting the finished retirement does not bring the device back", func(t *testing.T) {
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.eventually("the retirement is gone", func() error {
			err := h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r)
			if apierrors.IsNotFound(err) {
				return nil
			}
			return errors.Join(err, errNotYet)
		})
		time.Sleep(time.Second)
		assert.False(t, h.listed("ret-1", device))
	})
}

func TestAPreflightRefusalTouchesNothing(t *testing.T) {
	const gi = int64(1) << 30
	tests := []struct {
		name    string
		prepare func(h *harness)
		want    string
	}{
		{"too few hosts left for a consumer's copies", func(h *harness) { h.createBlockStorage("db", new(int32(3))) },
			"Hosts: 2 hosts and 2 OSDs would remain: too few for BlockStorage db keeps 3 copies on different hosts"},
		{"a consumer with a single copy", func(h *harness) { h.createBlockStorage("scratch", new(int32(1))) },
			"Copies: BlockStorage scratch keeps a single copy"},
		{"not enough room for the data", func(h *harness) { h.setCephStatus("HEALTH_OK", 9000*gi, 12*tib) },
			"Capacity: 8.8 TiB used of 8.4 TiB that would remain"},
		{"Ceph in HEALTH_ERR", func(h *harness) { h.setCephStatus("HEALTH_ERR", tib, 12*tib) },
			"Health: Ceph reports HEALTH_ERR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, _, disks := retirementCluster(t)
			tc.prepare(h)
			disk := disks["ret-1"]["/dev/sdb"]
			devicesBefore := h.clusterDevices()

			h.retire("refused", disk.Name, "")
			r := h.waitRetirement("refused", cephv1alpha1.RetirementRefused)

			assert.Contains(t, r.Status.Message, "refused, nothing was touched")
			assert.Contains(t, r.Status.Message, tc.want)
			assert.False(t, r.Status.OSDStopped)
			d, err := h.osdDeployment(*r.Status.OSDID)
			require.NoError(t, err)
			assert.Equal(t, int32(1), *d.Spec.Replicas, "the OSD runs on")
			assert.Empty(t, h.removalJobs(), "no Job")
			assert.Equal(t, devicesBefore, h.clusterDevices())
		})
	}
}

func TestAFailedRemovalJobStopsWithTheDeviceListed(t *testing.T) {
	h, rook, disks := retirementCluster(t)
	rook.osds.FailJobs.Store(true)
	disk := disks["ret-2"]["/dev/sdb"]

	h.retire("fails", disk.Name, "")
	r := h.waitRetirement("fails", cephv1alpha1.RetirementFailed)

	assert.Contains(t, r.Status.Message, "failed (BackoffLimitExceeded")
	assert.Contains(t, r.Status.Message, "its device stays in the CephCluster")
	h.eventually("the OSD is started again", func() error {
		d, err := h.osdDeployment(*r.Status.OSDID)
		if err != nil {
			return err
		}
		if *d.Spec.Replicas != 1 {
			return fmt.Errorf("replicas %d", *d.Spec.Replicas)
		}
		return h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r)
	})
	h.eventually("the retirement no longer says it stopped the OSD", func() error {
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
		if r.Status.OSDStopped {
			return errNotYet
		}
		return nil
	})
	assert.True(t, h.listed("ret-2", StorageDeviceName(disk.Status)))
	var after cephv1alpha1.Disk
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&disk), &after))
	assert.Empty(t, after.Annotations[cephv1alpha1.RetiredAnnotation])
}

func TestRetiringADiskWithoutAnOSDNeedsNoJob(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.publishDiscovery("bare-1", hdd("sdb", "0x5bare1"))
	disk := h.waitDisks("bare-1", 1)["/dev/sdb"]
	h.createPool("bare", disk.Name)
	h.createRookOperator()
	device := StorageDeviceName(disk.Status)
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
	assert.Empty(t, h.removalJobs())
	assert.False(t, h.listed("bare-1", device))
}

func TestCancellingARetirement(t *testing.T) {
	t.Run("before anything is touched", func(t *testing.T) {
		h, _, disks := retirementCluster(t)
		h.createBlockStorage("db", new(int32(3)))
		// The replacement never becomes an OSD while Rook is stopped, so the
		// retirement waits; a deletion then cancels it.
		h.retire("cancel-early", disks["ret-1"]["/dev/sdb"].Name, "no-such-disk-yet")
		r := h.waitRetirement("cancel-early", cephv1alpha1.RetirementRefused)
		assert.Contains(t, r.Status.Message, "no Disk no-such-disk-yet")
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
	})
	t.Run("while its OSD stops, which is started again", func(t *testing.T) {
		h, rook, disks := retirementCluster(t)
		rook.osds.HoldStoppedPods.Store(true)
		h.retire("cancel-stopping", disks["ret-1"]["/dev/sdb"].Name, "")
		r := h.waitRetirement("cancel-stopping", cephv1alpha1.RetirementStoppingOSD)
		h.eventually("waits for the pod", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r))
			if !strings.Contains(r.Status.Message, "waiting for osd.") {
				return fmt.Errorf("message %q", r.Status.Message)
			}
			return nil
		})
		stoppedOSD, err := h.osdDeployment(*r.Status.OSDID)
		require.NoError(t, err)
		assert.Equal(t, int32(0), *stoppedOSD.Spec.Replicas)
		assert.Contains(t, stoppedOSD.Labels, "ceph.rook.io/do-not-reconcile", "Rook's operator does not start it again meanwhile")
		require.NoError(t, h.c.Delete(h.ctx, r))
		h.waitGone(r)
		d, err := h.osdDeployment(*r.Status.OSDID)
		require.NoError(t, err)
		assert.Equal(t, int32(1), *d.Spec.Replicas, "the OSD is started again before the retirement goes")
		assert.NotContains(t, d.Labels, "ceph.rook.io/do-not-reconcile", "and Rook reconciles it again")
		assert.Empty(t, h.removalJobs())
	})
	t.Run("not once Rook's Job runs", func(t *testing.T) {
		h, rook, disks := retirementCluster(t)
		rook.osds.Paused.Store(true)
		disk := disks["ret-3"]["/dev/sdb"]
		h.retire("cancel-late", disk.Name, "")
		r := h.waitRetirement("cancel-late", cephv1alpha1.RetirementRemoving)
		h.eventually("the Job exists", func() error {
			if len(h.removalJobs()) != 1 {
				return errNotYet
			}
			return nil
		})
		require.NoError(t, h.c.Delete(h.ctx, r))
		time.Sleep(time.Second)
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(r), r), "held until the Job finishes")
		assert.Contains(t, r.Status.Message, "this cannot be cancelled")
		rook.osds.Paused.Store(false)
		h.waitGone(r)
		assert.False(t, h.listed("ret-3", StorageDeviceName(disk.Status)), "it finished: the device is out")
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

func TestReplacingADiskAddsTheReplacementFirst(t *testing.T) {
	h, _, disks := retirementCluster(t)
	inv := watchRetirementCluster(h, disks)
	old, repl := disks["ret-1"]["/dev/sdb"], disks["ret-1"]["/dev/sdd"]

	h.retire("replace", old.Name, repl.Name)
	r := h.waitRetirement("replace", cephv1alpha1.RetirementRetired)

	var pool cephv1alpha1.DiskPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
	assert.Contains(t, pool.Spec.Disks, repl.Name, "the replacement joined the pool")
	assert.True(t, h.listed("ret-1", StorageDeviceName(repl.Status)))
	assert.False(t, h.listed("ret-1", StorageDeviceName(old.Status)))
	inv.mu.Lock()
	assert.Equal(t, 3, inv.fewestListed, "no CephCluster revision listed fewer than three devices: the replacement joined before the old disk left")
	inv.mu.Unlock()
	assert.Contains(t, r.Status.Message, "removed from Ceph")
}

// TestARemovalThatEndsBetweenTheReadsIsDone: Rook deletes the OSD's
// Deployment and completes its removal Job between the plugin's read of
// the Deployments and its read of the Job. The retirement ends Retired, not
// Failed as if Rook had skipped an OSD that was up.
func TestARemovalThatEndsBetweenTheReadsIsDone(t *testing.T) {
	h, rook, disks := retirementCluster(t)
	rook.osds.Paused.Store(true) // the Job runs only inside the plugin's read of it
	h.stop()
	h.cfg.LeaderElection = false
	var ranInside atomic.Bool
	ns := h.cfg.ClusterNamespace
	jobs := "/apis/batch/v1/namespaces/" + ns + "/jobs/"
	finishOnRead := func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			name := strings.TrimPrefix(req.URL.Path, jobs)
			if req.Method == http.MethodGet && name != req.URL.Path && strings.HasPrefix(name, removalJobPrefix) && !ranInside.Load() {
				var job batchv1.Job
				if env.Client.Get(req.Context(), client.ObjectKey{Namespace: ns, Name: name}, &job) == nil && !removalJobState(&job).Succeeded {
					id, _ := strconv.Atoi(strings.TrimPrefix(name, removalJobPrefix))
					if err := simulate.RunRemovalJob(req.Context(), env.Client, &job, id, true); err != nil {
						t.Errorf("run the removal Job: %v", err)
					}
					ranInside.Store(true)
				}
			}
			return rt.RoundTrip(req)
		})
	}
	h.startWith(h.host, finishOnRead)
	disk := disks["ret-3"]["/dev/sdb"]
	h.retire("between", disk.Name, "")
	r := h.waitRetirement("between", cephv1alpha1.RetirementRetired)
	assert.True(t, ranInside.Load(), "Rook's Job ran between the plugin's reads")
	_, err := h.osdDeployment(*r.Status.OSDID)
	assert.True(t, apierrors.IsNotFound(err))
	assert.False(t, h.listed("ret-3", StorageDeviceName(disk.Status)))
}

// TestARetirementResumesAfterACrashAtEveryStep stops the plugin right after
// each status write of the retirement, before the action that write
// announced, and starts a new one: the retirement ends as without a
// crash, with one Job.
func TestARetirementResumesAfterACrashAtEveryStep(t *testing.T) {
	crashes := 0
	for crashAfter := 1; crashAfter <= 12; crashAfter++ {
		crashed := false
		t.Run(fmt.Sprintf("after status write %d", crashAfter), func(t *testing.T) {
			h, rook, disks := retirementCluster(t)
			h.stop()
			h.cfg.LeaderElection = false
			var writes atomic.Int32
			var dead atomic.Bool
			crash := func(rt http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
					if dead.Load() {
						return nil, errors.New("the plugin crashed")
					}
					resp, err := rt.RoundTrip(req)
					if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/diskretirements/") && strings.HasSuffix(req.URL.Path, "/status") {
						if writes.Add(1) == int32(crashAfter) {
							dead.Store(true)
						}
					}
					return resp, err
				})
			}
			h.startWith(h.host, crash)
			disk := disks["ret-2"]["/dev/sdb"]
			h.retire("crashy", disk.Name, "")
			err := testenv.Eventually(h.ctx, 20*time.Second, func(context.Context) error {
				var r cephv1alpha1.DiskRetirement
				require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "crashy"}, &r))
				if dead.Load() || r.Status.Phase == cephv1alpha1.RetirementRetired {
					return nil
				}
				return errNotYet
			})
			require.NoError(t, err)
			if !dead.Load() {
				return // fewer status writes than crashAfter: every step was covered
			}
			crashed = true
			h.stop()
			h.start()
			r := h.waitRetirement("crashy", cephv1alpha1.RetirementRetired)
			assert.Len(t, h.removalJobs(), 1, "one Job")
			rook.mu.Lock()
			assert.Len(t, rook.jobs, 1, "Rook ran one removal")
			assert.Empty(t, rook.unlistedBeforeJob)
			rook.mu.Unlock()
			assert.False(t, h.listed("ret-2", StorageDeviceName(disk.Status)))
			_, err = h.osdDeployment(*r.Status.OSDID)
			assert.True(t, apierrors.IsNotFound(err))
		})
		if !crashed {
			break
		}
		crashes++
	}
	assert.GreaterOrEqual(t, crashes, 5, "a crash after every status write: pending, stopping, waiting, removing, marked, retired")
}

// TestDiskRetirementSpecRules: the API server keeps a retirement's request
// fixed, and lets suspend go one way only.
func TestDiskRetirementSpecRules(t *testing.T) {
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
	h, _, disks := retirementCluster(t)
	old, repl := disks["ret-1"]["/dev/sdb"], disks["ret-1"]["/dev/sdd"]
	r := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "preview"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: old.Name, Replacement: repl.Name, Suspend: true}}
	require.NoError(t, h.c.Create(h.ctx, r))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), r) })

	r = h.waitRetirement("preview", cephv1alpha1.RetirementSuspended)
	require.Len(t, r.Status.Preflight, 4)
	for _, c := range r.Status.Preflight {
		assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
	}
	assert.Contains(t, r.Status.Preflight[0].Message, "3 hosts and 3 OSDs would remain", "the replacement counts as joined")
	time.Sleep(time.Second)
	var pool cephv1alpha1.DiskPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "main"}, &pool))
	assert.NotContains(t, pool.Spec.Disks, repl.Name, "nothing is touched while suspended")
	d, err := h.osdDeployment(*r.Status.OSDID)
	require.NoError(t, err)
	assert.Equal(t, int32(1), *d.Spec.Replicas)

	patch := client.MergeFrom(r.DeepCopy())
	r.Spec.Suspend = false
	require.NoError(t, h.c.Patch(h.ctx, r, patch))
	h.waitRetirement("preview", cephv1alpha1.RetirementRetired)
	assert.True(t, h.listed("ret-1", StorageDeviceName(repl.Status)))
	assert.False(t, h.listed("ret-1", StorageDeviceName(old.Status)))
}

// TestNothingLostStillFlagsADeviceTakenOutWithoutAJob: the exception is a
// retirement's Job, not the retired mark: a Disk marked by hand loses its
// device and the watcher says so.
func TestNothingLostStillFlagsADeviceTakenOutWithoutAJob(t *testing.T) {
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
			if strings.Contains(v, "dropped ret-3|"+StorageDeviceName(disk.Status)) {
				return nil
			}
		}
		return fmt.Errorf("violations %v", inv.violations)
	})
	inv.stop()
}
