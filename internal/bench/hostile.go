package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// hostileConfigMapBytes is the devices value of a hostile discovery
// ConfigMap: as close to the API server's 1 MiB cap on a ConfigMap's data
// as leaves room for its key.
const hostileConfigMapBytes = 1<<20 - 1024

// hostileDevices is a devices array of size bytes holding nothing but
// empty entries (`[{},{},…]`, about 350,000 of them in 1 MiB): what anyone
// who may write ConfigMaps in the operator namespace can send, and what
// cost the plugin 371 MB to decode before it was streamed.
func hostileDevices(size int) string {
	var b strings.Builder
	b.Grow(size)
	b.WriteString("[{}")
	for b.Len()+len(",{}]") <= size {
		b.WriteString(",{}")
	}
	b.WriteByte(']')
	return b.String()
}

// measureHostile replaces the first n nodes' discovery reports with hostile
// ones while the plugin runs and waits until it has refused every one (a
// MalformedDiscovery Event each). It returns the plugin's resident memory
// just before, the floor, and its peak while it refused them: VmHWM, reset
// first (clear_refs 5), so the peak is this phase's own.
func (r *run) measureHostile(ctx context.Context, n int) (resident, peak int64, err error) {
	if resident, err = r.plugin.residentRSS(); err != nil {
		return 0, 0, err
	}
	if err := r.plugin.resetPeakRSS(); err != nil {
		return 0, 0, err
	}
	devices := hostileDevices(hostileConfigMapBytes)
	names := map[string]bool{}
	for i := range n {
		cm := &corev1.ConfigMap{}
		key := client.ObjectKey{Namespace: Namespace, Name: simulate.ConfigMapName(nodeName(i))}
		if err := r.admin.Get(ctx, key, cm); err != nil {
			return 0, 0, err
		}
		cm.Data["devices"] = devices
		if err := r.admin.Update(ctx, cm); err != nil {
			return 0, 0, fmt.Errorf("write hostile %s: %w", key, err)
		}
		names[cm.Name] = true
	}
	err = waitFor(ctx, 2*time.Minute, func() bool { return refusedConfigMaps(ctx, r.admin, names) == len(names) })
	if err != nil {
		return 0, 0, fmt.Errorf("the plugin refused %d of %d hostile ConfigMaps: %w", refusedConfigMaps(ctx, r.admin, names), len(names), err)
	}
	peak, err = r.plugin.peakRSS()
	return resident, peak, err
}

// refusedConfigMaps counts the ConfigMaps of names that have a
// MalformedDiscovery Event.
func refusedConfigMaps(ctx context.Context, c client.Client, names map[string]bool) int {
	var events eventsv1.EventList
	if err := c.List(ctx, &events, client.InNamespace(Namespace)); err != nil {
		return 0
	}
	refused := map[string]bool{}
	for _, e := range events.Items {
		if e.Reason == "MalformedDiscovery" && names[e.Regarding.Name] {
			refused[e.Regarding.Name] = true
		}
	}
	return len(refused)
}

// residentRSS is the process's resident memory now (VmRSS).
func (p *pluginProcess) residentRSS() (int64, error) { return p.statusBytes("VmRSS:") }

// resetPeakRSS starts VmHWM again from the resident size (proc(5),
// /proc/pid/clear_refs: "5").
func (p *pluginProcess) resetPeakRSS() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.Pid()), []byte("5"), 0)
}
