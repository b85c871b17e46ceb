package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// loggedHost is a recordingHost whose logger writes JSON to a buffer the
// test reads.
type loggedHost struct {
	*recordingHost
	logs *lockedBuffer
}

func (h loggedHost) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// startLogged runs the reconcilers like harness.start, logging through a
// buffer it returns.
func (h *harness) startLogged() *lockedBuffer {
	h.t.Helper()
	logs := &lockedBuffer{}
	host := loggedHost{recordingHost: h.host, logs: logs}
	h.startWith(host, nil)
	return logs
}

// badDiscovery is one malformed discovery ConfigMap.
type badDiscovery struct {
	name string
	cm   func(ns string) *corev1.ConfigMap
	// why is a phrase the Event and the log line must contain.
	why string
}

func rawConfigMap(ns, name, node string, data map[string]string) *corev1.ConfigMap {
	labels := map[string]string{DiscoveryAppLabel: DiscoveryAppValue}
	if node != "" {
		labels[DiscoveryNodeLabel] = node
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Data: data}
}

// ensureReportedNode makes the Node a discovery ConfigMap's label names,
// when it names one: a report for a name that is no Node is not even
// parsed (TestAReportForANodeThatIsNotANodePublishesNothing), and these
// tests are about what the plugin does with a real node's bad report.
func ensureReportedNode(t *testing.T, h *harness, cm *corev1.ConfigMap) {
	t.Helper()
	if node := cm.Labels[DiscoveryNodeLabel]; node != "" {
		require.NoError(t, simulate.EnsureNode(h.ctx, h.c, node))
	}
}

func devicesConfigMap(node, devices string) func(string) *corev1.ConfigMap {
	return func(ns string) *corev1.ConfigMap {
		return rawConfigMap(ns, simulate.ConfigMapName(node), node, map[string]string{DiscoveryDevicesKey: devices})
	}
}

// manyDevices is n minimal, valid disk entries.
func manyDevices(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"sd%d","type":"disk","size":1073741824,"empty":true,"serial":"S%d"}`, i, i)
	}
	b.WriteString("]")
	return b.String()
}

func badDiscoveries(goodNode string, good simulate.Device) []badDiscovery {
	goodJSON, _ := simulate.DevicesJSON([]simulate.Device{good})
	return []badDiscovery{
		{"truncated JSON", devicesConfigMap("bad-truncated", `[{"name":"sdb","type":"disk","size":4000787030016,"emp`), "entry 0: unexpected EOF"},
		{"an object instead of a list", devicesConfigMap("bad-object", `{"name":"sdb","type":"disk"}`), "want a JSON array of devices, found {"},
		{"a string instead of a list", devicesConfigMap("bad-string", `"sdb"`), `want a JSON array of devices, found "sdb"`},
		{"not JSON at all", devicesConfigMap("bad-text", `sdb sdc sdd`), "invalid character"},
		{"an empty value", devicesConfigMap("bad-empty", ``), "empty, not a JSON array of devices"},
		{"a size that is a string", devicesConfigMap("bad-size-type", `[{"name":"sdb","type":"disk","size":"4TB"}]`), "cannot unmarshal string"},
		{"a negative size", devicesConfigMap("bad-size-negative", `[{"name":"sdb","type":"disk","size":-1}]`), "cannot unmarshal number -1"},
		{"a size beyond 64 bits", devicesConfigMap("bad-size-huge", `[{"name":"sdb","type":"disk","size":1e400}]`), "cannot unmarshal number 1e400"},
		{"a name that is a number", devicesConfigMap("bad-name-type", `[{"name":7,"type":"disk"}]`), "cannot unmarshal number"},
		{"a flag that is a string", devicesConfigMap("bad-flag-type", `[{"name":"sdb","type":"disk","rotational":"yes"}]`), "cannot unmarshal string"},
		{"partitions that are not a list", devicesConfigMap("bad-partitions", `[{"name":"sdb","type":"disk","Partitions":{"Name":"sdb1"}}]`), "Partitions is not a JSON array"},
		{"no devices key", func(ns string) *corev1.ConfigMap {
			return rawConfigMap(ns, simulate.ConfigMapName("bad-no-key"), "bad-no-key", map[string]string{"disks": goodJSON})
		}, `no "devices" key`},
		{"no node label", func(ns string) *corev1.ConfigMap {
			return rawConfigMap(ns, simulate.ConfigMapName("bad-no-label"), "", map[string]string{DiscoveryDevicesKey: goodJSON})
		}, "no rook.io/node label"},
		{"a node label that disagrees with the name", func(ns string) *corev1.ConfigMap {
			// It claims to be good-a's and reports good-a's first disk as
			// holding a filesystem.
			in := good
			in.Filesystem, in.Empty = "ext4", false
			data, _ := simulate.DevicesJSON([]simulate.Device{in})
			return rawConfigMap(ns, simulate.ConfigMapName("bad-liar"), goodNode, map[string]string{DiscoveryDevicesKey: data})
		}, "does not match"},
		{"10,000 devices in one", devicesConfigMap("bad-ten-thousand", manyDevices(10000)), "more than the 4096 device entries"},
	}
}

// Malformed discovery ConfigMaps never take the plugin down, never touch
// another node's Disks and are each named in a Warning Event and a log line.
// Odd but valid ones (markup and control characters in a model, duplicated
// devices) are published, once each.
func TestReliabilityMalformedDiscovery(t *testing.T) {
	h := newHarness(t)
	logs := h.startLogged()
	ns := h.cfg.OperatorNamespace
	inv := watchNothingLost(t, controlPlane.Env(t).Config, h.cfg.ClusterNamespace)
	inv.waitWatching()

	goodNodes := map[string][]simulate.Device{
		"good-a": simulate.MixedDevices("good-a", 4),
		"good-b": simulate.MixedDevices("good-b", 4),
	}
	for node, devices := range goodNodes {
		data, err := simulate.DevicesJSON(devices)
		require.NoError(t, err)
		createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, node, data))
	}
	a, b := h.waitDisks("good-a", 4), h.waitDisks("good-b", 4)
	pool := h.createPool("inputs", a["/dev/sdb"].Name, b["/dev/sdb"].Name)
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
	claimed := []DeviceID{DeviceIDOf(addressOf(a["/dev/sdb"])), DeviceIDOf(addressOf(b["/dev/sdb"]))}
	inv.protect(claimed...)
	h.eventually("the pool's devices are in the CephCluster", func() error {
		if got := ClusterDevices(h.cluster()); !got[claimed[0]] || !got[claimed[1]] {
			return fmt.Errorf("CephCluster lists %v", got)
		}
		return nil
	})
	before := diskVersions(t, h)

	// good-b's discovery goes bad too: its Disks stay as they were.
	bad := badDiscoveries("good-a", goodNodes["good-a"][0])
	bad = append(bad, badDiscovery{"a known node's discovery turning bad", nil, "entry 0: unexpected EOF"})
	for _, tc := range bad {
		if tc.cm == nil {
			var cm corev1.ConfigMap
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: ns, Name: simulate.ConfigMapName("good-b")}, &cm))
			cm.Data[DiscoveryDevicesKey] = cm.Data[DiscoveryDevicesKey][:40]
			require.NoError(t, h.c.Update(h.ctx, &cm))
			continue
		}
		cm := tc.cm(ns)
		ensureReportedNode(t, h, cm)
		require.NoError(t, h.c.Create(h.ctx, cm), tc.name)
	}

	for _, tc := range bad {
		cmName := simulate.ConfigMapName("good-b")
		if tc.cm != nil {
			cmName = tc.cm(ns).Name
		}
		t.Run(tc.name, func(t *testing.T) {
			err := testenv.Eventually(h.ctx, 30*time.Second, func(context.Context) error { return malformedEvent(h, ns, cmName, tc.why) })
			assert.NoError(t, err, "a Warning Event names %s", cmName)
			err = testenv.Eventually(h.ctx, 30*time.Second, func(context.Context) error {
				return malformedLogLine(logs.String(), ns+"/"+cmName, tc.why)
			})
			assert.NoError(t, err, "a log line names %s", cmName)
		})
	}

	// Odd but valid: markup and control characters in a model, and the same
	// device listed twice (once under another name with the same WWN).
	odd := simulate.NewDevice("odd", 0, simulate.SSD)
	odd.Model = "<script>alert(1)</script>\u0000\u0007\u001b[31m\" onmouseover=\"x"
	twin := odd
	twin.Name, twin.KernelName, twin.RealPath = "sdz", "sdz", "/dev/sdz"
	oddJSON, err := simulate.DevicesJSON([]simulate.Device{odd, odd, twin})
	require.NoError(t, err)
	createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, "odd", oddJSON))
	oddDisks := h.waitDisks("odd", 2)
	for _, d := range oddDisks {
		assert.NotContains(t, d.Status.Model, "\u0000", "no control characters reach the Disk")
		assert.Contains(t, d.Status.Model, "<script>", "markup is kept as text; the console escapes it")
	}

	assert.Equal(t, before, diskVersions(t, h), "no bad ConfigMap touched another node's Disks")
	for _, node := range []string{"bad-truncated", "bad-object", "bad-ten-thousand", "bad-no-key", "bad-liar"} {
		assert.Empty(t, h.disksOf(node), "no Disks for %s", node)
	}
	assert.Empty(t, h.disksOf(""), "no Disks without a node")
	assert.NotEqual(t, pluginruntime.PhaseDegraded, h.host.last().Phase)
	noDuplicateDisks(t, h.ctx, h.c)
	inv.check(h.ctx)
}

func addressOf[T any](v T) *T { return &v }

// diskVersions is every Disk of the good nodes with its resourceVersion.
func diskVersions(t *testing.T, h *harness) map[string]string {
	t.Helper()
	var list cephv1alpha1.DiskList
	require.NoError(t, h.c.List(h.ctx, &list))
	out := map[string]string{}
	for _, d := range list.Items {
		if strings.HasPrefix(d.Status.NodeName, "good-") {
			out[d.Name] = d.ResourceVersion
		}
	}
	return out
}

func malformedEvent(h *harness, namespace, cmName, why string) error {
	return warningAbout(h, namespace, cmName, "MalformedDiscovery", cmName, why)
}

func malformedLogLine(logs, ref, why string) error {
	for _, line := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["configMap"] == ref {
			if msg, _ := rec["err"].(string); !strings.Contains(fmt.Sprint(rec), why) {
				return fmt.Errorf("log line about %s lacks %q: %s %v", ref, why, msg, rec)
			}
			return nil
		}
	}
	return fmt.Errorf("no log line names %s", ref)
}
