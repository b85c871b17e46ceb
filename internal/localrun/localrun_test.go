package localrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// The `just run` entry point end to end, in a temporary data folder.
func TestRunEndToEnd(t *testing.T) {
	root := testenv.RepoRoot()
	o := Options{
		RepoRoot:         root,
		DataDir:          t.TempDir(),
		PluginAddr:       freeAddr(t),
		ConsoleAddr:      freeAddr(t),
		PluginOriginAddr: freeAddr(t),
		SimulatorAddr:    freeAddr(t),
		Out:              &testWriter{t: t},
	}
	started := make(chan Endpoints, 1)
	o.Started = started
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o) }()

	var e Endpoints
	select {
	case e = <-started:
	case err := <-done:
		t.Fatalf("Run ended before it started: %v", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("Run did not start within 5 minutes")
	}
	c := kubeClient(t, e.Kubeconfig)

	t.Run("the plugin reports running over its metadata API", func(t *testing.T) {
		metadata := pluginmetadatav1connect.NewPluginMetadataServiceClient(http.DefaultClient, e.PluginURL)
		eventually(t, time.Minute, func() error {
			resp, err := metadata.GetStatus(ctx, connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
			if err != nil {
				return err
			}
			if resp.Msg.GetPhase() != "running" {
				return fmt.Errorf("phase %q: %s", resp.Msg.GetPhase(), resp.Msg.GetMessage())
			}
			return nil
		})
	})

	t.Run("Disks appear for the simulated nodes", func(t *testing.T) {
		eventually(t, time.Minute, func() error {
			disks := list(t, c, "Disk")
			if len(disks) != 9 {
				return fmt.Errorf("%d Disks, want 9", len(disks))
			}
			return nil
		})
	})

	t.Run("test-resources.yaml makes every consumer Ready", func(t *testing.T) {
		applyFile(t, c, filepath.Join(root, "test-resources.yaml"))
		for _, kind := range []string{"BlockStorage", "FileStorage", "ObjectStorage"} {
			eventually(t, 2*time.Minute, func() error {
				items := list(t, c, kind)
				if len(items) != 1 {
					return fmt.Errorf("%d %s", len(items), kind)
				}
				phase, _, _ := unstructured.NestedString(items[0].Object, "status", "phase")
				if phase != "Ready" {
					msg, _, _ := unstructured.NestedString(items[0].Object, "status", "message")
					return fmt.Errorf("%s %s is %q: %s", kind, items[0].GetName(), phase, msg)
				}
				return nil
			})
		}
		pools := list(t, c, "DiskPool")
		require.Len(t, pools, 1)
		selected, _, _ := unstructured.NestedInt64(pools[0].Object, "status", "selectedDiskCount")
		assert.Equal(t, int64(6), selected, "every disk test-resources.yaml names exists and is usable")
	})

	t.Run("a DiskRetirement runs to its end against the simulated Rook", func(t *testing.T) {
		pools := list(t, c, "DiskPool")
		require.Len(t, pools, 1)
		pooled, _, _ := unstructured.NestedStringSlice(pools[0].Object, "spec", "disks")
		byNode := map[string][]string{}
		for _, d := range list(t, c, "Disk") {
			node, _, _ := unstructured.NestedString(d.Object, "status", "nodeName")
			for _, name := range pooled {
				if name == d.GetName() {
					byNode[node] = append(byNode[node], name)
				}
			}
		}
		var disk string
		for _, names := range byNode {
			if len(names) > 1 { // its node keeps a disk: every consumer keeps its hosts
				disk = names[0]
			}
		}
		require.NotEmpty(t, disk, "a node with two pooled disks: %v", byNode)
		retirement := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "ceph.fundament.io/v1alpha1", "kind": "DiskRetirement",
			"metadata": map[string]any{"name": "try-it"},
			"spec":     map[string]any{"disk": disk},
		}}
		require.NoError(t, c.Create(ctx, retirement))
		eventually(t, 2*time.Minute, func() error {
			items := list(t, c, "DiskRetirement")
			require.Len(t, items, 1)
			phase, _, _ := unstructured.NestedString(items[0].Object, "status", "phase")
			msg, _, _ := unstructured.NestedString(items[0].Object, "status", "message")
			if phase != "Retired" {
				return fmt.Errorf("DiskRetirement is %q: %s", phase, msg)
			}
			// The simulated Rook made the disk an OSD, and Ceph purged it:
			// the whole way, not the shortcut of a disk without an OSD.
			require.Contains(t, msg, "is purged from Ceph")
			return nil
		})
	})

	t.Run("the console host serves the pages", func(t *testing.T) {
		var cfg struct {
			PageBase   string
			Components map[string]map[string]string
		}
		require.NoError(t, getJSON(e.ConsoleURL+"/host/config.json", &cfg))
		require.NotEmpty(t, cfg.Components["Disk"]["list"], "the host routes the Disk list")
		page := get(t, cfg.PageBase+cfg.Components["Disk"]["list"])
		assert.Equal(t, http.StatusOK, page.StatusCode)
		assert.Contains(t, page.Header.Get("Content-Security-Policy"), "script-src 'self'", "pages are served under the production CSP")
	})

	children := childProcesses(t)
	require.NotEmpty(t, children, "the run has started processes (etcd, kube-apiserver, the plugin, …)")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Run did not stop within a minute")
	}
	for _, pid := range children {
		assert.False(t, alive(pid), "process %d is still running after the run stopped", pid)
	}
}

func get(t *testing.T, url string) *http.Response {
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

func getJSON(url string, into any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

func kubeClient(t *testing.T, kubeconfig string) client.Client {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return c
}

func list(t *testing.T, c client.Client, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.fundament.io", Version: "v1alpha1", Kind: kind + "List"})
	require.NoError(t, c.List(context.Background(), l))
	return l.Items
}

func applyFile(t *testing.T, c client.Client, path string) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); err == io.EOF {
			return
		} else {
			require.NoError(t, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		require.NoError(t, c.Create(context.Background(), obj), "create %s %s", obj.GetKind(), obj.GetName())
	}
}

func eventually(t *testing.T, timeout time.Duration, cond func() error) {
	t.Helper()
	require.NoError(t, testenv.Eventually(context.Background(), timeout, func(context.Context) error { return cond() }))
}

// childProcesses lists the processes whose parent is this test process.
func childProcesses(t *testing.T) []int {
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) == self {
			out = append(out, pid)
		}
	}
	return out
}

func parentOf(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// alive reports whether pid runs (a zombie not yet reaped counts as gone).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return err == nil && !strings.Contains(string(data), "State:\tZ")
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
