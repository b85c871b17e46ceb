package retirement

import (
	"slices"
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/stretchr/testify/assert"
)

// scene is Ceph as a test sets it up: what the probe reads whole (every
// OSD and pool) and what it passes on as it is (health, ratios, PGs).
type scene struct {
	cephjob.Facts
	cluster cephjob.Cluster
	probe   int // the OSD a step's probe asks about
}

// facts is what a probe of osd would answer.
func (s scene) facts(osd int) cephjob.Facts {
	f := s.Facts
	s.cluster.Summarize(&f, osd, -1)
	return f
}

// osd is one of the scene's OSDs, to change.
func (s *scene) osd(id int) *cephjob.ClusterOSD {
	for i := range s.cluster.OSDs {
		if s.cluster.OSDs[i].ID == id {
			return &s.cluster.OSDs[i]
		}
	}
	panic(id)
}

// remove takes OSDs out of the scene: they never were.
func (s *scene) remove(ids ...int) {
	s.cluster.OSDs = slices.DeleteFunc(s.cluster.OSDs, func(o cephjob.ClusterOSD) bool { return slices.Contains(ids, o.ID) })
}

// threeHosts is the e2e's cluster as Ceph sees it: three hosts of two
// 10 GiB OSDs each (osd.0-5, osd.2k and 2k+1 on host k), every OSD up and
// in with 60 PGs and 2 GiB used, pools of three copies on hosts (.mgr
// included), every PG active+clean.
func threeHosts() scene {
	var s scene
	s.Health.Status = "HEALTH_OK"
	s.Ratios.Nearfull, s.Ratios.Backfillfull, s.Ratios.Full = 0.85, 0.90, 0.95
	s.MaxPGPerOSD, s.HardRatio = 250, 3
	s.cluster.Pools = []cephjob.ClusterPool{{Name: ".mgr", Size: 3, MinSize: 2, Domain: "host"}, {Name: "ceph-rook-db", Size: 3, MinSize: 2, Domain: "host"}}
	s.PGStates = map[string]int{"active+clean": 120}
	for h, name := range []string{"node-a", "node-b", "node-c"} {
		for i := range 2 {
			s.cluster.OSDs = append(s.cluster.OSDs, cephjob.ClusterOSD{ID: 2*h + i, Host: name, Class: "hdd", Up: true, In: true, PGs: 60, KB: 10 << 20, KBUsed: 2 << 20})
		}
	}
	return s
}

// nvmeTier adds a tier of class nvme: a 10 GiB OSD with usedKB used and
// pgs PGs on each of hosts (osd.10 on the first, osd.11 on the next, ...),
// and the pool fast, keeping three copies on them.
func nvmeTier(f *scene, usedKB int64, pgs int, hosts ...string) {
	for i, h := range hosts {
		f.cluster.OSDs = append(f.cluster.OSDs, cephjob.ClusterOSD{ID: 10 + i, Host: h, Class: "nvme", Up: true, In: true, PGs: pgs, KB: 10 << 20, KBUsed: usedKB})
	}
	f.cluster.Pools = append(f.cluster.Pools, cephjob.ClusterPool{Name: "fast", Size: 3, MinSize: 2, Domain: "host", Class: "nvme"})
}

func with(change func(*scene)) scene {
	s := threeHosts()
	change(&s)
	return s
}

func TestCephChecks(t *testing.T) {
	tests := []struct {
		name    string
		facts   scene
		osd     int
		failed  string // the one check that fails; "" when all pass
		message string // in that check's message (or in Health's when all pass)
	}{
		{"a healthy cluster of three hosts loses one of six disks", threeHosts(), 0, "", "Ceph reports HEALTH_OK"},
		{"the last disk of a host, with three copies on three hosts", with(func(f *scene) { f.remove(1) }), 0,
			CheckPools, "without osd.0, 2 hosts and 4 OSDs stay up and in: too few for pool .mgr (and 1 more like it) keeps 3 copies on different hosts, and 2 remain"},
		{".mgr counts like any pool", with(func(f *scene) {
			f.remove(1)
			f.cluster.Pools = []cephjob.ClusterPool{{Name: ".mgr", Size: 3, MinSize: 2, Domain: "host"}, {Name: "ceph-rook-db", Size: 2, MinSize: 1, Domain: "host"}}
		}), 0, CheckPools, "pool .mgr keeps 3 copies"},
		{"a pool on OSDs counts OSDs", with(func(f *scene) {
			f.cluster.Pools = []cephjob.ClusterPool{{Name: "scratch", Size: 6, MinSize: 1, Domain: "osd"}}
		}), 0, CheckPools, "pool scratch keeps 6 copies on different OSDs"},
		{"a rule over a type the plugin cannot count refuses", with(func(f *scene) {
			f.cluster.Pools = append(f.cluster.Pools, cephjob.ClusterPool{Name: "racked", Size: 2, MinSize: 1, Domain: "rack"})
		}), 0, CheckPools, `spreads over "rack"`},
		{"a rule over several classes (Rook's hybridStorage) refuses", with(func(f *scene) {
			f.cluster.Pools = append(f.cluster.Pools, cephjob.ClusterPool{Name: "hybrid", Size: 3, MinSize: 2, Domain: "host", Class: "hdd+ssd"})
		}), 0, CheckPools, "pool hybrid takes several device classes (hdd+ssd), which the plugin cannot count"},
		{"the host keeps a whole copy in its one other disk: 4 GiB in 10 GiB passes", threeHosts(), 0, "", ""},
		{"the host keeps a whole copy, which no longer fits its other disk", with(func(f *scene) {
			f.osd(0).KBUsed, f.osd(1).KBUsed = 5<<20, 4<<20
		}), 0, CheckCapacity, "host node-a (it holds a whole copy) would hold 9.0 GiB in 10.0 GiB: 90% (Ceph's nearfull ratio 85%"},
		{"with more hosts than copies the data spreads over the cluster", with(func(f *scene) {
			f.cluster.Pools = []cephjob.ClusterPool{{Name: ".mgr", Size: 2, MinSize: 1, Domain: "host"}}
			f.osd(0).KBUsed, f.osd(1).KBUsed = 5<<20, 4<<20
		}), 0, "", ""},
		{"PGs beyond Ceph's hard limit on the disk that takes them", with(func(f *scene) {
			f.osd(0).PGs, f.osd(1).PGs = 400, 400
		}), 0, CheckPGsPerOSD, "at most 800 PGs on one (Ceph refuses more than 750"},
		{"F2: an nvme pool counts the hosts with nvme OSDs, not every host", with(func(f *scene) {
			nvmeTier(f, 1<<20, 60, "node-a", "node-b", "node-c")
		}), 10, CheckPools, "without osd.10, 2 hosts and 2 OSDs of class nvme stay up and in: too few for pool fast keeps 3 copies on different hosts of class nvme, and 2 remain"},
		{"F2: an nvme pool's data must fit the nvme OSDs, not the blend with hdd", with(func(f *scene) {
			nvmeTier(f, 7680<<10, 60, "node-a", "node-b", "node-c", "node-d")
		}), 10, CheckCapacity, "the OSDs of class nvme would hold 30.0 GiB in 30.0 GiB: 100%"},
		{"F2: an nvme OSD's PGs go to the nvme OSDs", with(func(f *scene) {
			nvmeTier(f, 1<<20, 600, "node-a", "node-b", "node-c", "node-d")
		}), 10, CheckPGsPerOSD, "osd.10's 600 PGs spread over 3 OSDs in the OSDs of class nvme: at most 800 PGs on one"},
		{"F2: an hdd OSD retires whatever the nvme tier holds", with(func(f *scene) {
			nvmeTier(f, 7680<<10, 600, "node-a", "node-b", "node-c", "node-d")
		}), 0, "", ""},
		{"HEALTH_ERR", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_ERR", map[string]string{"MON_DOWN": "2/3 mons down"}
		}), 0,
			cephv1alpha1.CheckHealth, "HEALTH_ERR (MON_DOWN)"},
		{"another OSD down", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_DEGRADED": "Degraded data redundancy"}
			f.osd(4).Up = false
		}), 0, cephv1alpha1.CheckHealth, "osd.4 (down): Ceph already lacks copies there"},
		{"another OSD out", with(func(f *scene) { f.osd(5).In = false }), 0, cephv1alpha1.CheckHealth, "osd.5 (out)"},
		{"nearfull OSDs", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_NEARFULL": "1 nearfull osd(s)"}
		}), 0, cephv1alpha1.CheckHealth, "OSD_NEARFULL: 1 nearfull osd(s)"},
		{"degraded PGs with every OSD up: wait", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "Degraded data redundancy: 3 pgs degraded"}
		}), 0, cephv1alpha1.CheckHealth, "Ceph reports PG_DEGRADED"},
		{"PGs still backfilling", with(func(f *scene) {
			f.PGStates = map[string]int{"active+clean": 110, "active+remapped+backfilling": 10}
		}), 0,
			cephv1alpha1.CheckHealth, "not every PG is active+clean (10 active+remapped+backfilling)"},
		{"scrubbing PGs are clean", with(func(f *scene) {
			f.PGStates = map[string]int{"active+clean": 110, "active+clean+scrubbing+deep": 8, "active+clean+snaptrim": 2}
		}), 0, "", ""},
		{"inactive PGs", with(func(f *scene) { f.PGStates = map[string]int{"active+clean": 110, "peering": 10} }), 0, cephv1alpha1.CheckHealth, "10 PGs are peering (no I/O)"},
		{"the retired OSD is the failed one: its own degradation passes", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_DEGRADED": "Degraded data redundancy"}
			f.osd(0).Up = false
			f.PGStates = map[string]int{"active+clean": 60, "active+undersized+degraded": 60}
		}), 0, "", "osd.0 is down already, and the only one"},
		{"warnings that do not concern data pass, named", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"MON_DISK_LOW": "mon a is low on available space"}
		}), 0, "", "Ceph reports HEALTH_WARN (MON_DISK_LOW)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks := CephChecks(tc.facts.facts(tc.osd), tc.osd)
			for _, c := range checks {
				if c.Name == tc.failed {
					assert.False(t, c.Passed, "%s: %s", c.Name, c.Message)
					assert.Contains(t, c.Message, tc.message)
				} else {
					assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
				}
				if tc.failed == "" && c.Name == cephv1alpha1.CheckHealth {
					assert.Contains(t, c.Message, tc.message)
				}
			}
		})
	}
}

// Which health failures the preflight waits out rather than refusing at
// once: Ceph busy for a while (PGs peering or recovering, an OSD Rook is
// restarting) against trouble that lasts (full, damaged, HEALTH_ERR, an
// OSD Ceph has taken out).
func TestCephSettling(t *testing.T) {
	restarting := func(f *scene) {
		f.osd(4).Up = false
		f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_AVAILABILITY": "8 pgs inactive"}
		f.PGStates = map[string]int{"active+clean": 104, "peering": 8, "active+undersized+degraded": 8}
	}
	tests := []struct {
		name  string
		facts scene
		want  string
	}{
		{"PGs peering after a map change", with(func(f *scene) { f.PGStates = map[string]int{"active+clean": 110, "peering": 10} }), "10 peering"},
		{"recovery under way", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "3 pgs degraded"}
			f.PGStates = map[string]int{"active+clean": 117, "active+recovering+degraded": 3}
		}), "3 active+recovering+degraded"},
		{"another OSD down but in: Rook restarts it", with(restarting), "osd.4 down, 8 active+undersized+degraded, 8 peering"},
		{"the retired OSD itself down", with(func(f *scene) {
			f.osd(0).Up = false
			f.PGStates = map[string]int{"active+clean": 100, "active+undersized+degraded": 20}
		}), "20 active+undersized+degraded"},
		{"another OSD out: Ceph gave up on it", with(func(f *scene) { restarting(f); f.osd(4).In = false }), ""},
		{"an OSD nearly full", with(func(f *scene) {
			restarting(f)
			f.Health.Checks["OSD_NEARFULL"] = "1 nearfull osd(s)"
		}), ""},
		{"HEALTH_ERR", with(func(f *scene) { restarting(f); f.Health.Status = "HEALTH_ERR" }), ""},
		{"every PG active+clean, the health not caught up yet", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "3 pgs degraded"}
		}), "PG_DEGRADED still reported (3 pgs degraded) while every PG is active+clean"},
		{"every PG active+clean, a warning of another kind", with(func(f *scene) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"POOL_NO_REDUNDANCY": "1 pool(s) have no replicas configured"}
		}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cephSettling(tc.facts.facts(0), 0))
		})
	}
}
