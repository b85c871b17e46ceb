package cephjob

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// largeCluster is a cluster of 1,000 OSDs on 100 hosts in three device
// classes, 15 of them down or out, one prepared but not booted (osd.1000,
// in no host), and 500 pools each with its own CRUSH rule as Rook makes
// them: what the probe must describe whole within a termination message.
func largeCluster() Cluster {
	var c Cluster
	classOf := func(host int) string {
		switch {
		case host < 60:
			return "hdd"
		case host < 90:
			return "ssd"
		}
		return "nvme"
	}
	for id := range 1000 {
		host := id / 10
		o := ClusterOSD{ID: id, UUID: fmt.Sprintf("uuid-%d", id), Host: fmt.Sprintf("storage-node-%03d", host), Class: classOf(host),
			Up: true, In: true, PGs: 90 + id%37, KB: 3_907_029_168 + int64(id), KBUsed: 1_200_000_000 + int64(id)*1_000}
		switch {
		case id%97 == 5: // down, still in
			o.Up = false
		case id%89 == 7: // out
			o.In = false
			o.KB = 0
		}
		c.OSDs = append(c.OSDs, o)
	}
	c.OSDs = append(c.OSDs, ClusterOSD{ID: 1000, UUID: "uuid-1000"})
	for i := range 500 {
		p := ClusterPool{Name: fmt.Sprintf("ceph-rook-team-%03d-blockpool", i), Size: 3, MinSize: 2, Domain: "host", Class: "hdd"}
		switch {
		case i%10 == 1:
			p.Class = "ssd"
		case i%25 == 2:
			p.Class, p.Size, p.MinSize, p.Domain = "nvme", 2, 1, "osd"
		case i%50 == 3:
			p.Class = ""
		case i == 499: // Rook's hybridStorage: the primary on ssd, the others on hdd
			p.Class = "hdd+ssd"
		}
		c.Pools = append(c.Pools, p)
	}
	return c
}

// writeCeph writes c as Ceph prints it (osd dump, osd df tree, osd crush
// rule dump), with health checks that fill the answer, beside
// testdata/ceph's other answers.
func writeCeph(t *testing.T, c Cluster) string {
	dir := t.TempDir()
	for _, name := range []string{"pg_stat.json", "osd_metadata_1.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/ceph", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	write := func(name string, v any) {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	var osds, nodes, pools, rules []map[string]any
	hosts := map[string][]int{}
	var hostOrder []string
	for _, o := range c.OSDs {
		osds = append(osds, map[string]any{"osd": o.ID, "uuid": o.UUID, "up": b2i(o.Up), "in": b2i(o.In), "weight": 1})
		if o.Host == "" {
			continue
		}
		if _, ok := hosts[o.Host]; !ok {
			hostOrder = append(hostOrder, o.Host)
		}
		hosts[o.Host] = append(hosts[o.Host], o.ID)
		nodes = append(nodes, map[string]any{"id": o.ID, "device_class": o.Class, "name": fmt.Sprintf("osd.%d", o.ID), "type": "osd",
			"type_id": 0, "reweight": 1, "kb": o.KB, "kb_used": o.KBUsed, "pgs": o.PGs, "status": map[bool]string{true: "up", false: "down"}[o.Up]})
	}
	root := []int{}
	for i, h := range hostOrder {
		root = append(root, -2-i)
		nodes = append(nodes, map[string]any{"id": -2 - i, "name": h, "type": "host", "type_id": 1, "children": hosts[h]})
	}
	nodes = append(nodes, map[string]any{"id": -1, "name": "default", "type": "root", "type_id": 11, "children": root})
	for i, p := range c.Pools {
		pools = append(pools, map[string]any{"pool": i + 1, "pool_name": p.Name, "size": p.Size, "min_size": p.MinSize, "crush_rule": i + 1, "pg_num": 32})
		var steps []map[string]any
		for _, class := range strings.Split(p.Class, "+") {
			take := "default"
			if class != "" {
				take += "~" + class
			}
			steps = append(steps, map[string]any{"op": "take", "item": -1, "item_name": take},
				map[string]any{"op": "chooseleaf_firstn", "num": 0, "type": p.Domain}, map[string]any{"op": "emit"})
		}
		rules = append(rules, map[string]any{"rule_id": i + 1, "rule_name": p.Name, "type": 1, "steps": steps})
	}
	write("osd_dump.json", map[string]any{"osds": osds, "pools": pools, "nearfull_ratio": 0.85, "backfillfull_ratio": 0.9, "full_ratio": 0.95})
	write("osd_df_tree.json", map[string]any{"nodes": nodes, "stray": []any{}})
	write("crush_rule_dump.json", rules)
	checks := map[string]any{}
	for i := range 30 {
		checks[fmt.Sprintf("SOME_CHECK_%02d", i)] = map[string]any{"severity": "HEALTH_WARN", "summary": map[string]any{"message": strings.Repeat("x", 300)}}
	}
	write("health.json", map[string]any{"status": "HEALTH_WARN", "checks": checks})
	return dir
}

// F1: a cluster of 1,000 OSDs and 500 pools is described whole, per
// device class, within the 4,096 bytes Kubernetes keeps of a termination
// message: every count is what Summarize counts of the same cluster.
func TestProbeDescribesALargeClusterWhole(t *testing.T) {
	c := largeCluster()
	out := runProbe(t, writeCeph(t, c), 1000)
	assert.LessOrEqual(t, len(out), 4096, "the answer fits a termination message")

	f, err := ParseFacts(out)
	require.NoError(t, err, "%s", out)
	var want Facts
	c.Summarize(&want, 1, 1000)
	assert.Equal(t, want.Pools, f.Pools)
	assert.Len(t, f.Pools, 5, "500 pools of five kinds, a hybrid rule's named by both its classes")
	assert.Equal(t, want.Classes, f.Classes)
	assert.Equal(t, want.OwnHost, f.OwnHost)
	assert.Equal(t, want.MissingCount, f.MissingCount)
	assert.Equal(t, want.Missing[:len(f.Missing)], f.Missing, "the first of them, the out ones first")
	assert.NotEmpty(t, f.Missing)
	assert.Equal(t, &AlsoOSD{ID: 1000}, f.Also, "osd.1000 has not booted: in no host")
	assert.Equal(t, "storage-node-000", f.OSD.Host)
	assert.Equal(t, "hdd", f.OSD.DeviceClass)
	assert.Len(t, f.Health.Checks, 30, "every check named, its message shortened")

	hdd := f.Classes["hdd"]
	assert.Equal(t, 60, hdd.Hosts)
	assert.Equal(t, 4, len(f.Classes)-1, "hdd, ssd, nvme and the hybrid rule's (counted as nothing), beside every class")
	assert.Equal(t, 23, f.MissingCount, "down or out, osd.1 itself aside")
}

// An answer that cannot fit even shortened (here 150 device classes, each
// with its own pools) fails the probe with the reason: never a cut answer
// read as a smaller cluster.
func TestProbeFailsRatherThanCut(t *testing.T) {
	c := largeCluster()
	for i := range c.Pools[:150] {
		c.Pools[i].Class = fmt.Sprintf("class-%03d", i)
	}
	python, lib := fakeRadosLib(t)
	cmd := probeCommand(python, lib, writeCeph(t, c), -1)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "more than a termination message holds")
}
