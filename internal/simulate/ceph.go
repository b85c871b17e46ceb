package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Ceph plays Ceph's side of the plugin's Ceph Jobs (the root package's
// internal/cephjob; label app=ceph-rook-ceph-job): a model of the OSD map, the
// PGs on each OSD and the BlueStore labels on the devices, which answers
// each verb as Ceph does and moves PGs off OSDs that are out, a few per
// pass. What it models, from Ceph's source:
//   - an OSD that is out and up hands its PGs to the OSDs that are up and
//     in, if every pool can still place its copies (enough hosts, or OSDs
//     for a pool on OSDs); otherwise they stay (backfill cannot go);
//   - safe-to-destroy (src/mgr/DaemonServer.cc): an OSD that does not exist
//     is safe; one with PGs mapped is not (EBUSY); while not every PG is
//     active+clean, one that is down is not (EAGAIN); else it is;
//   - purge without --force asks the same and refuses (EBUSY, EAGAIN);
//   - health: OSD_DOWN for down OSDs that are in, PG_DEGRADED for PGs on
//     them, PGs backfilling off OSDs that are out and up;
//   - a prepared device carries the OSD's BlueStore label until zapped.
//
// The answers are in the probe's wire format (internal/cephjob/probe.py), so the
// plugin parses them as it parses real Ceph's.
type Ceph struct {
	Client    client.Client
	Namespace string
	// Paused leaves Ceph Jobs unanswered; Unreachable fails each as a Job
	// whose ceph could not reach the monitors.
	Paused, Unreachable atomic.Bool
	// Stuck holds backfill: no PG moves (a drain that cannot finish).
	Stuck atomic.Bool
	// HoldBoot keeps new OSDs from their first start (a slow boot).
	HoldBoot atomic.Bool
	// Ran is called with each Ceph Job answered, before it is finished.
	Ran func(job *batchv1.Job)
	// Checks are health checks a test adds (name -> summary).
	Checks sync.Map

	mu     sync.Mutex
	osds   map[int]*modelOSD
	labels map[string]bluestoreLabel // node + "\x00" + kernel path
	gone   map[string]bool           // devices pulled from their node
}

// simIdentity is a device's identity as the identify verb reads it: here
// its node and kernel path stand for its serial.
func simIdentity(node, kernelPath string) string {
	return fmt.Sprintf("sectors=20971520 serial=%s:%s wwn= backing=", node, kernelPath)
}

// pulled says osd id's device was pulled from its node.
func (c *Ceph) pulled(id int) bool {
	for key, l := range c.labels {
		if l.ID == id && c.gone[key] {
			return true
		}
	}
	return false
}

// Pull takes a device out of its node: it is no longer a block device
// there, and its OSD (if it runs) goes down.
func (c *Ceph) Pull(node, kernelPath string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.gone[node+"\x00"+kernelPath] = true
	if l, ok := c.labels[node+"\x00"+kernelPath]; ok {
		if o := c.osds[l.ID]; o != nil {
			o.Up = false
		}
	}
}

// bluestoreLabel is what ceph-volume writes at the start of a device it
// prepares: the OSD's UUID and ID ("whoami").
type bluestoreLabel struct {
	UUID string
	ID   int
}

// pgsPerOSD is what a new OSD holds in the model; osdKB its size.
const (
	pgsPerOSD = 32
	osdKB     = 10 << 20
	kbPerPG   = 32 << 10
)

type modelOSD struct {
	ID         int
	Host, UUID string
	// Class is the device class the prepare gave it.
	Class  string
	Up, In bool
	PGs    int
	// Booted: the OSD has started once. ceph-volume creates it in the OSD
	// map (down, out, in no CRUSH host); at its first start it joins CRUSH
	// under its host, is marked in (mon_osd_auto_mark_new_in) and takes
	// its share of PGs.
	Booted bool
}

func (c *Ceph) init() {
	if c.osds == nil {
		c.osds, c.labels, c.gone = map[int]*modelOSD{}, map[string]bluestoreLabel{}, map[string]bool{}
	}
}

// Prepared records a new OSD on a node's device as ceph-volume leaves it:
// in the OSD map, not started (down, out, in no CRUSH host), its label on
// the device, of class. It boots when its pod first runs (SetUp).
func (c *Ceph) Prepared(id int, node, kernelPath, uuid, class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	c.osds[id] = &modelOSD{ID: id, Host: node, UUID: uuid, Class: class}
	c.labels[node+"\x00"+kernelPath] = bluestoreLabel{UUID: uuid, ID: id}
}

// Label is the OSD UUID in the BlueStore label of a node's device, "" when
// it carries none.
func (c *Ceph) Label(node, kernelPath string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	return c.labels[node+"\x00"+kernelPath].UUID
}

// LabelledOSDs are the OSD IDs the labels of a node's devices name, by
// kernel path: what Rook's prepare finds on the node (`ceph-volume raw
// list` lists every device's OSD, whatever the CephCluster lists).
func (c *Ceph) LabelledOSDs(node string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	out := map[string]int{}
	for key, l := range c.labels {
		if n, path, _ := strings.Cut(key, "\x00"); n == node && l.UUID != "" {
			out[path] = l.ID
		}
	}
	return out
}

// SwapLabels swaps what two devices of a node carry: the kernel names of
// two disks changed places.
func (c *Ceph) SwapLabels(node, a, b string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	ka, kb := node+"\x00"+a, node+"\x00"+b
	c.labels[ka], c.labels[kb] = c.labels[kb], c.labels[ka]
}

// OSD reports a modelled OSD: whether it exists, is up, is in, its PGs.
func (c *Ceph) OSD(id int) (exists, up, in bool, pgs int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	o, ok := c.osds[id]
	if !ok {
		return false, false, false, 0
	}
	return true, o.Up, o.In, o.PGs
}

// Exists says Ceph's OSD map has osd id.
// Booted says whether osd.id has started once (joined CRUSH, marked in):
// a new OSD is out until then without anyone having marked it out.
func (c *Ceph) Booted(id int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.osds[id]
	return ok && o.Booted
}

func (c *Ceph) Exists(id int) bool {
	exists, _, _, _ := c.OSD(id)
	return exists
}

// SetUp is what the OSD's pod does: an OSD whose pod runs is up. Its first
// start boots it (unless HoldBoot): into CRUSH, marked in, given PGs.
func (c *Ceph) SetUp(id int, up bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	o, ok := c.osds[id]
	switch {
	case !ok:
	case up && c.pulled(id):
		o.Up = false // its pod runs, but the OSD cannot open its device
	case up && !o.Booted && c.HoldBoot.Load():
	case up && !o.Booted:
		o.Booted, o.Up, o.In, o.PGs = true, true, true, pgsPerOSD
	default:
		o.Up = up
	}
}

// MarkOut is what the monitors do to an OSD that stays down for
// mon_osd_down_out_interval (600 s by default), and an operator's `ceph osd
// out`: Ceph no longer counts it in.
func (c *Ceph) MarkOut(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if o, ok := c.osds[id]; ok {
		o.In = false
	}
}

// Step moves PGs and answers the Ceph Jobs.
func (c *Ceph) Step(ctx context.Context) error {
	pools, err := c.pools(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.init()
	c.backfill(pools)
	c.mu.Unlock()
	return c.runJobs(ctx, pools)
}

// simPool is a pool's copies, failure domain and device class.
type simPool struct {
	Name   string
	Size   int
	Domain string
	Class  string
}

// pools are .mgr (Ceph's default size 3, on hosts) and every pool Rook
// makes for the CephBlockPools, CephFilesystems and CephObjectStores in the
// namespace, with their spec's size and failure domain.
func (c *Ceph) pools(ctx context.Context) ([]simPool, error) {
	pools := []simPool{{".mgr", 3, rook.FailureDomainHost, ""}}
	for _, kind := range []string{"CephBlockPool", "CephFilesystem", "CephObjectStore"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.rook.io", Version: "v1", Kind: kind + "List"})
		if err := c.Client.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
			return nil, err
		}
		for _, o := range list.Items {
			for _, path := range [][]string{{"spec"}, {"spec", "metadataPool"}, {"spec", "dataPool"}} {
				spec, ok, _ := unstructured.NestedMap(o.Object, path...)
				if !ok {
					continue
				}
				size, ok, _ := unstructured.NestedInt64(spec, "replicated", "size")
				if !ok {
					continue
				}
				domain, _, _ := unstructured.NestedString(spec, "failureDomain")
				if domain == "" {
					domain = rook.FailureDomainHost
				}
				class, _, _ := unstructured.NestedString(spec, "deviceClass")
				pools = append(pools, simPool{Name: o.GetName() + "/" + strings.Join(path[1:], "."), Size: int(size), Domain: domain, Class: class})
			}
			dataPools, _, _ := unstructured.NestedSlice(o.Object, "spec", "dataPools")
			for i, d := range dataPools {
				spec, _ := d.(map[string]any)
				size, _, _ := unstructured.NestedInt64(spec, "replicated", "size")
				domain, _, _ := unstructured.NestedString(spec, "failureDomain")
				if domain == "" {
					domain = rook.FailureDomainHost
				}
				class, _, _ := unstructured.NestedString(spec, "deviceClass")
				pools = append(pools, simPool{Name: fmt.Sprintf("%s/data%d", o.GetName(), i), Size: int(size), Domain: domain, Class: class})
			}
		}
	}
	return pools, nil
}

// placeable says whether every pool can place its copies on the OSDs that
// are up and in.
func (c *Ceph) placeable(pools []simPool) bool {
	hosts, osds := map[string]bool{}, 0
	for _, o := range c.osds {
		if o.Up && o.In {
			hosts[o.Host] = true
			osds++
		}
	}
	for _, p := range pools {
		have := len(hosts)
		if p.Domain == rook.FailureDomainOSD {
			have = osds
		}
		if p.Size > have {
			return false
		}
	}
	return true
}

// movesPerStep is how many PGs backfill moves per pass and OSD.
const movesPerStep = 8

// backfill moves up to movesPerStep PGs off every OSD that is out (from
// itself while up, from the other copies while down) onto the OSDs that
// are up and in, when the pools can be placed without it.
func (c *Ceph) backfill(pools []simPool) {
	if c.Stuck.Load() || !c.placeable(pools) {
		return
	}
	var takers []*modelOSD
	for _, id := range c.ids() {
		if o := c.osds[id]; o.Up && o.In {
			takers = append(takers, o)
		}
	}
	if len(takers) == 0 {
		return
	}
	next := 0
	for _, id := range c.ids() {
		o := c.osds[id]
		if o.In || o.PGs == 0 {
			continue
		}
		for range min(movesPerStep, o.PGs) {
			o.PGs--
			takers[next%len(takers)].PGs++
			next++
		}
	}
}

func (c *Ceph) ids() []int {
	ids := make([]int, 0, len(c.osds))
	for id := range c.osds {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// pgStates are the PG counts by state: PGs on an OSD that is down are
// degraded, PGs on one that is out and up backfill, the rest are clean.
func (c *Ceph) pgStates() map[string]int {
	states := map[string]int{}
	for _, o := range c.osds {
		switch {
		case o.PGs == 0:
		case !o.Up:
			states["active+undersized+degraded"] += o.PGs
		case !o.In:
			states["active+remapped+backfilling"] += o.PGs
		default:
			states["active+clean"] += o.PGs
		}
	}
	return states
}

func (c *Ceph) allClean() bool {
	for state, n := range c.pgStates() {
		if state != "active+clean" && n > 0 {
			return false
		}
	}
	return true
}

// safeToDestroy answers `ceph osd safe-to-destroy` (DaemonServer.cc): exit
// code and message.
func (c *Ceph) safeToDestroy(id int) (int, string) {
	o, ok := c.osds[id]
	switch {
	case !ok:
		return 0, fmt.Sprintf("OSD(s) %d are safe to destroy without reducing data durability.", id)
	case o.PGs > 0:
		return 16, fmt.Sprintf("Error EBUSY: OSD(s) %d have %d pgs currently mapped to them.", id, o.PGs)
	case !o.Up && !c.allClean():
		return 11, fmt.Sprintf("Error EAGAIN: OSD(s) %d have no reported stats, and not all PGs are active+clean; we cannot draw any conclusions.", id)
	}
	return 0, fmt.Sprintf("OSD(s) %d are safe to destroy without reducing data durability.", id)
}

// health is Ceph's status and checks.
func (c *Ceph) health() (string, map[string]string) {
	checks := map[string]string{}
	down, degraded := 0, 0
	for _, o := range c.osds {
		if !o.Up && o.In {
			down++
		}
		if !o.Up {
			degraded += o.PGs
		}
	}
	if down > 0 {
		checks["OSD_DOWN"] = fmt.Sprintf("%d osds down", down)
	}
	if degraded > 0 {
		checks["PG_DEGRADED"] = fmt.Sprintf("Degraded data redundancy: %d pgs degraded", degraded)
	}
	c.Checks.Range(func(k, v any) bool {
		checks[k.(string)] = v.(string)
		return true
	})
	status := "HEALTH_OK"
	if len(checks) > 0 {
		status = "HEALTH_WARN"
	}
	return status, checks
}

// probe answers internal/cephjob/probe.py for osd id (and also), in its
// wire format, summed as the probe sums Ceph's picture.
func (c *Ceph) probe(id, also int, pools []simPool) (string, error) {
	var f cephjob.Facts
	f.Health.Status, f.Health.Checks = c.health()
	f.Ratios.Nearfull, f.Ratios.Backfillfull, f.Ratios.Full = 0.85, 0.9, 0.95
	f.MaxPGPerOSD, f.HardRatio = 250, 3
	f.PGStates = c.pgStates()
	var cluster cephjob.Cluster
	for _, oid := range c.ids() {
		o := c.osds[oid]
		osd := cephjob.ClusterOSD{ID: o.ID, UUID: o.UUID, Class: o.Class, Up: o.Up, In: o.In, PGs: o.PGs}
		if o.Booted { // else in no CRUSH host yet: `ceph osd df tree` has it under none
			osd.Host, osd.KBUsed = o.Host, int64(o.PGs)*kbPerPG
			if o.In {
				osd.KB = osdKB // `ceph osd df` reports an out OSD's size as 0
			}
		}
		cluster.OSDs = append(cluster.OSDs, osd)
	}
	for _, p := range pools {
		cluster.Pools = append(cluster.Pools, cephjob.ClusterPool{Name: p.Name, Size: p.Size, MinSize: max(1, p.Size-1), Domain: p.Domain, Class: p.Class})
	}
	cluster.Summarize(&f, id, also)
	if f.OSD.Exists {
		f.OSD.SafeToDestroy.RC, f.OSD.SafeToDestroy.Message = c.safeToDestroy(id)
	}
	return f.Wire()
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// answer carries out one verb: the exit code and the termination message.
func (c *Ceph) answer(ctx context.Context, job *batchv1.Job, pools []simPool) (int, string, error) {
	env := map[string]string{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	id, err := strconv.Atoi(env[cephjob.EnvOSDID])
	if err != nil {
		return 0, "", fmt.Errorf("job %s: OSD_ID %q", job.Name, env[cephjob.EnvOSDID])
	}
	node := job.Spec.Template.Spec.NodeSelector[corev1.LabelHostname]
	device := env[cephjob.EnvDevice]
	if node != "" {
		if device, err = c.kernelPath(ctx, node, device); err != nil {
			return 0, "", err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	o := c.osds[id]
	switch verb := cephjob.Verb(job.Labels[cephjob.VerbLabel]); verb {
	case cephjob.VerbProbe:
		also, err := strconv.Atoi(env[cephjob.EnvAlsoOSDID])
		if err != nil {
			return 0, "", fmt.Errorf("job %s: %s %q", job.Name, cephjob.EnvAlsoOSDID, env[cephjob.EnvAlsoOSDID])
		}
		out, err := c.probe(id, also, pools)
		return 0, out, err
	case cephjob.VerbPGStates:
		out, err := json.Marshal(map[string]any{"pgs": c.pgStates()})
		return 0, string(out), err
	case cephjob.VerbOut, cephjob.VerbIn:
		if o == nil {
			return 2, fmt.Sprintf("Error ENOENT: osd.%d does not exist", id), nil
		}
		if verb == cephjob.VerbIn && !o.Up {
			return 1, fmt.Sprintf("osd.%d is down: not marked in (an OSD marked in while down takes PGs it cannot serve)", id), nil
		}
		o.In = verb == cephjob.VerbIn
		return 0, fmt.Sprintf("marked %s osd.%d.", verb, id), nil
	case cephjob.VerbPurge:
		if o == nil {
			return 0, fmt.Sprintf("osd.%d is not in Ceph's OSD map", id), nil
		}
		if rc, msg := c.safeToDestroy(id); rc != 0 {
			return rc, msg, nil
		}
		delete(c.osds, id)
		return 0, fmt.Sprintf("osd.%d is not in Ceph's OSD map", id), nil
	case cephjob.VerbIdentify:
		answer := cephjob.Label{State: cephjob.LabelNone, Identity: simIdentity(node, device)}
		if c.gone[node+"\x00"+device] {
			answer = cephjob.Label{State: cephjob.LabelMissing}
		} else if l := c.labels[node+"\x00"+device]; l.UUID != "" {
			answer.State, answer.OSDUUID = cephjob.LabelFound, l.UUID
		}
		out, err := json.Marshal(answer)
		return 0, string(out), err
	case cephjob.VerbZap:
		// As the zap script: no OSD of Ceph's map has the UUID; a label
		// must name the purged OSD; without one the device must be the
		// disk identified (a wipe cut short).
		found, live := c.labels[node+"\x00"+device].UUID, c.hasUUID(env[cephjob.EnvOSDUUID])
		switch {
		case live != "":
			return 1, fmt.Sprintf("refused: Ceph's OSD map still has %s with UUID %s: only a purged OSD's disk is wiped", live, env[cephjob.EnvOSDUUID]), nil
		case c.gone[node+"\x00"+device]:
			return 1, device + " is not a block device on this node", nil
		case found != "" && found != env[cephjob.EnvOSDUUID]:
			return 1, fmt.Sprintf("refused: %s holds the OSD with UUID %s, not %s", device, found, env[cephjob.EnvOSDUUID]), nil
		case found == "" && env[cephjob.EnvIdentity] != simIdentity(node, device):
			return 1, fmt.Sprintf("refused: %s carries no BlueStore label and is not the disk that held the OSD with UUID %s", device, env[cephjob.EnvOSDUUID]), nil
		}
		delete(c.labels, node+"\x00"+device)
		return 0, fmt.Sprintf("wiped %s (it held the OSD with UUID %s)", device, env[cephjob.EnvOSDUUID]), nil
	}
	return 0, "", fmt.Errorf("job %s: unknown verb %q", job.Name, job.Labels[cephjob.VerbLabel])
}

// hasUUID names the OSD of the map with uuid, "" when none has it.
func (c *Ceph) hasUUID(uuid string) string {
	for _, o := range c.osds {
		if o.UUID == uuid {
			return fmt.Sprintf("osd.%d", o.ID)
		}
	}
	return ""
}

// kernelPath resolves a device name the plugin gave (a stable path or a
// kernel one) to the kernel path on node, through the Disks, as the node's
// /dev resolves it.
func (c *Ceph) kernelPath(ctx context.Context, node, device string) (string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.fundament.io", Version: "v1alpha1", Kind: "DiskList"})
	if err := c.Client.List(ctx, list); err != nil {
		return "", err
	}
	for _, d := range list.Items {
		n, _, _ := unstructured.NestedString(d.Object, "status", "nodeName")
		stable, _, _ := unstructured.NestedString(d.Object, "status", "stablePath")
		kernel, _, _ := unstructured.NestedString(d.Object, "status", "path")
		if n == node && device != "" && (device == stable || device == kernel) {
			return kernel, nil
		}
	}
	return device, nil
}

// runJobs answers every unfinished Ceph Job: a pod with the verb's
// termination message, then the Job's final status, as the Job controller
// and the kubelet would write them.
func (c *Ceph) runJobs(ctx context.Context, pools []simPool) error {
	var jobs batchv1.JobList
	if err := c.Client.List(ctx, &jobs, client.InNamespace(c.Namespace), client.MatchingLabels{rook.AppLabel: cephjob.App}); err != nil {
		return err
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if JobFinished(job) || c.Paused.Load() || !job.DeletionTimestamp.IsZero() {
			continue
		}
		code, message := 1, "Error ETIMEDOUT: the monitors cannot be reached"
		if !c.Unreachable.Load() {
			var err error
			if code, message, err = c.answer(ctx, job, pools); err != nil {
				return err
			}
		}
		if c.Ran != nil {
			c.Ran(job)
		}
		if err := c.finish(ctx, job, code, message); err != nil {
			return err
		}
	}
	return nil
}

// finish writes the Job's pod, terminated with code and message, and the
// Job's final status.
func (c *Ceph) finish(ctx context.Context, job *batchv1.Job, code int, message string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: job.Name + "-sim", Namespace: job.Namespace,
			Labels: map[string]string{batchv1.JobNameLabel: job.Name, "job-name": job.Name, batchv1.ControllerUidLabel: string(job.UID), SimulatedLabel: "true"},
			// As the Job controller makes them: the Job is its controller.
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = job.Spec.Template.Spec.NodeSelector[corev1.LabelHostname]
	if err := c.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	pod.Status = corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), Message: message, Reason: "Completed"}},
	}}}
	if err := c.Client.Status().Update(ctx, pod); err != nil {
		return err
	}
	return FinishJob(ctx, c.Client, job, code == 0)
}
