package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threeHosts is the e2e's cluster as Ceph sees it: three hosts of two
// 10 GiB OSDs each (osd.0-5, osd.2k and 2k+1 on host k), every OSD up and
// in with 60 PGs and 2 GiB used, pools of three copies on hosts (.mgr
// included), every PG active+clean.
func threeHosts() CephFacts {
	var f CephFacts
	f.Health.Status = "HEALTH_OK"
	f.Ratios.Nearfull, f.Ratios.Backfillfull, f.Ratios.Full = 0.85, 0.90, 0.95
	f.MaxPGPerOSD, f.HardRatio = 250, 3
	f.Pools = []CephPool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 3, 2, "host"}}
	f.PGStates = map[string]int{"active+clean": 120}
	for h, name := range []string{"node-a", "node-b", "node-c"} {
		host := CephHost{Name: name}
		for i := range 2 {
			host.OSDs = append(host.OSDs, HostOSD{ID: 2*h + i, Up: true, In: true, PGs: 60, KB: 10 << 20, KBUsed: 2 << 20})
		}
		f.Hosts = append(f.Hosts, host)
	}
	f.OSD = CephOSD{ID: 0, Exists: true, Up: true, In: true}
	return f
}

func with(change func(*CephFacts)) CephFacts {
	f := threeHosts()
	change(&f)
	return f
}

func osdOf(f *CephFacts, id int) *HostOSD {
	for h := range f.Hosts {
		for i := range f.Hosts[h].OSDs {
			if f.Hosts[h].OSDs[i].ID == id {
				return &f.Hosts[h].OSDs[i]
			}
		}
	}
	panic(id)
}

func TestCephChecks(t *testing.T) {
	tests := []struct {
		name    string
		facts   CephFacts
		osd     int
		failed  string // the one check that fails; "" when all pass
		message string // in that check's message (or in Health's when all pass)
	}{
		{"a healthy cluster of three hosts loses one of six disks", threeHosts(), 0, "", "Ceph reports HEALTH_OK"},
		{"the last disk of a host, with three copies on three hosts", with(func(f *CephFacts) { f.Hosts[0].OSDs = f.Hosts[0].OSDs[:1] }), 0,
			CheckPools, "without osd.0, 2 hosts and 4 OSDs stay up and in: too few for pool .mgr keeps 3 copies on different hosts; pool ceph-rook-db keeps 3 copies on different hosts"},
		{".mgr counts like any pool", with(func(f *CephFacts) {
			f.Hosts[0].OSDs = f.Hosts[0].OSDs[:1]
			f.Pools = []CephPool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 2, 1, "host"}}
		}), 0, CheckPools, "pool .mgr keeps 3 copies"},
		{"a pool on OSDs counts OSDs", with(func(f *CephFacts) { f.Pools = []CephPool{{"scratch", 6, 1, "osd"}} }), 0, CheckPools, "pool scratch keeps 6 copies on different OSDs"},
		{"a rule over a type the plugin cannot count refuses", with(func(f *CephFacts) { f.Pools = append(f.Pools, CephPool{"racked", 2, 1, "rack"}) }), 0, CheckPools, `spreads over "rack"`},
		{"the host keeps a whole copy in its one other disk: 4 GiB in 10 GiB passes", threeHosts(), 0, "", ""},
		{"the host keeps a whole copy, which no longer fits its other disk", with(func(f *CephFacts) {
			osdOf(f, 0).KBUsed, osdOf(f, 1).KBUsed = 5<<20, 4<<20
		}), 0, CheckCapacity, "host node-a (it holds a whole copy) would hold 9.0 GiB in 10.0 GiB: 90% (Ceph's nearfull ratio 85%"},
		{"with more hosts than copies the data spreads over the cluster", with(func(f *CephFacts) {
			f.Pools = []CephPool{{".mgr", 2, 1, "host"}}
			osdOf(f, 0).KBUsed, osdOf(f, 1).KBUsed = 5<<20, 4<<20
		}), 0, "", ""},
		{"PGs beyond Ceph's hard limit on the disk that takes them", with(func(f *CephFacts) {
			osdOf(f, 0).PGs, osdOf(f, 1).PGs = 400, 400
		}), 0, CheckPGsPerOSD, "at most 800 PGs on one (Ceph refuses more than 750"},
		{"HEALTH_ERR", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_ERR", map[string]string{"MON_DOWN": "2/3 mons down"}
		}), 0,
			CheckHealth, "HEALTH_ERR (MON_DOWN)"},
		{"another OSD down", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_DEGRADED": "Degraded data redundancy"}
			osdOf(f, 4).Up = false
		}), 0, CheckHealth, "osd.4 (down): Ceph already lacks copies there"},
		{"another OSD out", with(func(f *CephFacts) { osdOf(f, 5).In = false }), 0, CheckHealth, "osd.5 (out)"},
		{"nearfull OSDs", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_NEARFULL": "1 nearfull osd(s)"}
		}), 0, CheckHealth, "OSD_NEARFULL: 1 nearfull osd(s)"},
		{"degraded PGs with every OSD up: wait", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "Degraded data redundancy: 3 pgs degraded"}
		}), 0, CheckHealth, "Ceph reports PG_DEGRADED"},
		{"PGs still backfilling", with(func(f *CephFacts) {
			f.PGStates = map[string]int{"active+clean": 110, "active+remapped+backfilling": 10}
		}), 0,
			CheckHealth, "not every PG is active+clean (10 active+remapped+backfilling)"},
		{"scrubbing PGs are clean", with(func(f *CephFacts) {
			f.PGStates = map[string]int{"active+clean": 110, "active+clean+scrubbing+deep": 8, "active+clean+snaptrim": 2}
		}), 0, "", ""},
		{"inactive PGs", with(func(f *CephFacts) { f.PGStates = map[string]int{"active+clean": 110, "peering": 10} }), 0, CheckHealth, "10 PGs are peering (no I/O)"},
		{"the retired OSD is the failed one: its own degradation passes", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_DEGRADED": "Degraded data redundancy"}
			osdOf(f, 0).Up, f.OSD.Up = false, false
			f.PGStates = map[string]int{"active+clean": 60, "active+undersized+degraded": 60}
		}), 0, "", "osd.0 is down already, and the only one"},
		{"warnings that do not concern data pass, named", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"MON_DISK_LOW": "mon a is low on available space"}
		}), 0, "", "Ceph reports HEALTH_WARN (MON_DISK_LOW)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checks := CephChecks(tc.facts, tc.osd)
			for _, c := range checks {
				if c.Name == tc.failed {
					assert.False(t, c.Passed, "%s: %s", c.Name, c.Message)
					assert.Contains(t, c.Message, tc.message)
				} else {
					assert.True(t, c.Passed, "%s: %s", c.Name, c.Message)
				}
				if tc.failed == "" && c.Name == CheckHealth {
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
	restarting := func(f *CephFacts) {
		osdOf(f, 4).Up = false
		f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down", "PG_AVAILABILITY": "8 pgs inactive"}
		f.PGStates = map[string]int{"active+clean": 104, "peering": 8, "active+undersized+degraded": 8}
	}
	tests := []struct {
		name  string
		facts CephFacts
		want  string
	}{
		{"PGs peering after a map change", with(func(f *CephFacts) { f.PGStates = map[string]int{"active+clean": 110, "peering": 10} }), "10 peering"},
		{"recovery under way", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "3 pgs degraded"}
			f.PGStates = map[string]int{"active+clean": 117, "active+recovering+degraded": 3}
		}), "3 active+recovering+degraded"},
		{"another OSD down but in: Rook restarts it", with(restarting), "osd.4 down, 8 active+undersized+degraded, 8 peering"},
		{"the retired OSD itself down", with(func(f *CephFacts) {
			osdOf(f, 0).Up, f.OSD.Up = false, false
			f.PGStates = map[string]int{"active+clean": 100, "active+undersized+degraded": 20}
		}), "20 active+undersized+degraded"},
		{"another OSD out: Ceph gave up on it", with(func(f *CephFacts) { restarting(f); osdOf(f, 4).In = false }), ""},
		{"an OSD nearly full", with(func(f *CephFacts) {
			restarting(f)
			f.Health.Checks["OSD_NEARFULL"] = "1 nearfull osd(s)"
		}), ""},
		{"HEALTH_ERR", with(func(f *CephFacts) { restarting(f); f.Health.Status = "HEALTH_ERR" }), ""},
		{"every PG active+clean, the health not caught up yet", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"PG_DEGRADED": "3 pgs degraded"}
		}), "PG_DEGRADED still reported (3 pgs degraded) while every PG is active+clean"},
		{"every PG active+clean, a warning of another kind", with(func(f *CephFacts) {
			f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"POOL_NO_REDUNDANCY": "1 pool(s) have no replicas configured"}
		}), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, cephSettling(tc.facts, 0))
		})
	}
}

func TestParseCephFacts(t *testing.T) {
	f, err := ParseCephFacts(`{"health":{"status":"HEALTH_WARN","checks":{"OSD_DOWN":"1 osds down"}},` +
		`"ratios":{"nearfull":0.85,"backfillfull":0.9,"full":0.95},"maxPGPerOSD":250,"hardRatio":3.0,` +
		`"pools":[[".mgr",3,2,"host"],["ceph-rook-db",2,1,"osd"]],"pgs":{"active+clean":33},` +
		`"hosts":[{"name":"node-a","osds":[[0,1,1,33,10485760,1048576],[1,0,1,0,10485760,0]]}],` +
		`"osd":{"id":1,"exists":true,"uuid":"u-1","up":false,"in":true,"devNode":"/dev/loop3","devices":"loop3","deviceIDs":"","safeToDestroy":{"rc":11,"message":"Error EAGAIN: pgs not clean"}}}`)
	require.NoError(t, err)
	assert.Equal(t, []CephPool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 2, 1, "osd"}}, f.Pools)
	assert.Equal(t, []CephHost{{Name: "node-a", OSDs: []HostOSD{{ID: 0, Up: true, In: true, PGs: 33, KB: 10485760, KBUsed: 1048576}, {ID: 1, In: true, KB: 10485760}}}}, f.Hosts)
	assert.Equal(t, "1 osds down", f.Health.Checks["OSD_DOWN"])
	assert.False(t, f.SafeToDestroy())
	assert.Equal(t, "/dev/loop3", f.OSD.DevNode)
	assert.Equal(t, 33, f.PGsOn(0))

	for name, answer := range map[string]string{
		"cut at 4096 bytes": `{"health":{"status":"HEALTH_OK"},"pools":[[".mgr",3,2,"ho`,
		"a pool of three":   `{"health":{"status":"HEALTH_OK"},"pools":[[".mgr",3,2]]}`,
		"an OSD of five":    `{"health":{"status":"HEALTH_OK"},"hosts":[{"name":"a","osds":[[0,1,1,3,4]]}]}`,
		"no health":         `{"pools":[]}`,
		"an error message":  `Error EACCES: access denied`,
	} {
		_, err := ParseCephFacts(answer)
		assert.Error(t, err, name)
	}
}

// The probe (cephjob/probe.py) run by python3 against a fake librados that
// answers with Ceph's formats (testdata/ceph): what it prints parses, and
// says what the answers said.
func TestProbeScript(t *testing.T) {
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "the probe runs in Rook's image with python3; its test needs one too")
	data, err := filepath.Abs("testdata/ceph")
	require.NoError(t, err)
	lib := t.TempDir()
	// A fake librados: each command, as the probe sends it (its JSON with
	// sorted keys) to the daemon that answers it, gets Ceph's answer; any
	// other fails as Ceph would an unknown command.
	fake := `import json, os
DATA = os.environ["FAKE_CEPH_DATA"]
def data(name):
    return 0, open(os.path.join(DATA, name), "rb").read(), ""
ANSWERS = {
    ("mon", '{"format": "json", "prefix": "health"}'): data("health.json"),
    ("mon", '{"format": "json", "prefix": "osd dump"}'): data("osd_dump.json"),
    ("mon", '{"format": "json", "prefix": "osd crush rule dump"}'): data("crush_rule_dump.json"),
    ("mgr", '{"format": "json", "output_method": "tree", "prefix": "osd df"}'): data("osd_df_tree.json"),
    ("mgr", '{"format": "json", "prefix": "pg stat"}'): data("pg_stat.json"),
    ("mon", '{"format": "json", "id": 1, "prefix": "osd metadata"}'): data("osd_metadata_1.json"),
    ("mgr", '{"ids": ["1"], "prefix": "osd safe-to-destroy"}'): (-16, b"", "OSD(s) 1 have 12 pgs currently mapped to them."),
    ("mon", '{"key": "mon_max_pg_per_osd", "prefix": "config get", "who": "mon"}'): (0, b"250\n", ""),
    ("mon", '{"key": "osd_max_pg_per_osd_hard_ratio", "prefix": "config get", "who": "osd"}'): (0, b"3.000000\n", ""),
}
class Rados:
    def __init__(self, conffile, name, conf):
        assert (conffile, name, conf) == ("/tmp/ceph.conf", "client.admin", {"keyring": "/tmp/keyring"}), (conffile, name, conf)
    def connect(self, timeout=0):
        pass
    def shutdown(self):
        pass
    def answer(self, daemon, cmd):
        key = (daemon, json.dumps(json.loads(cmd), sort_keys=True))
        return ANSWERS.get(key, (-22, b"", "fake librados: unexpected %s command %s" % key))
    def mon_command(self, cmd, inbuf, timeout=0):
        return self.answer("mon", cmd)
    def mgr_command(self, cmd, inbuf, timeout=0):
        return self.answer("mgr", cmd)
`
	require.NoError(t, os.WriteFile(filepath.Join(lib, "rados.py"), []byte(fake), 0o644))
	cmd := exec.Command(python, "-c", probeScript, "1", "--conf", "/tmp/ceph.conf", "--keyring", "/tmp/keyring", "--name", "client.admin")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+lib, "FAKE_CEPH_DATA="+data)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("probe: %v: %s", err, exit.Stderr)
	}
	require.NoError(t, err)
	assert.Less(t, len(out), 4096, "the answer fits a termination message")

	f, err := ParseCephFacts(string(out))
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "HEALTH_WARN", f.Health.Status)
	assert.Equal(t, "1 osds down", f.Health.Checks["OSD_DOWN"])
	assert.InDelta(t, 0.85, f.Ratios.Nearfull, 1e-6)
	assert.InDelta(t, 0.90, f.Ratios.Backfillfull, 1e-6)
	assert.InDelta(t, 0.95, f.Ratios.Full, 1e-6)
	assert.Equal(t, 250, f.MaxPGPerOSD)
	assert.InDelta(t, 3.0, f.HardRatio, 1e-9)
	assert.Equal(t, []CephPool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 2, 1, "host"}, {"scratch", 2, 1, "osd"}}, f.Pools)
	assert.Equal(t, map[string]int{"active+clean": 29, "active+undersized+degraded": 12}, f.PGStates)
	assert.Equal(t, []CephHost{
		{Name: "node-a", OSDs: []HostOSD{{ID: 0, Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1572864}, {ID: 1, In: true, KB: 10485760, KBUsed: 524288}}},
		{Name: "node-b", OSDs: []HostOSD{{ID: 2, Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1048576}, {ID: 3, Up: true}}},
	}, f.Hosts)
	assert.Equal(t, CephOSD{ID: 1, Exists: true, UUID: "1b7e2f4c-1f0a-4d3e-9c1a-6a1d2b3c4d51", In: true, DevNode: "/dev/loop3", Devices: "loop3"}, withoutSafe(f.OSD))
	assert.Equal(t, 16, f.OSD.SafeToDestroy.RC)
	assert.Equal(t, "Error EBUSY: OSD(s) 1 have 12 pgs currently mapped to them.", f.OSD.SafeToDestroy.Message, "as the ceph CLI says it")
	assert.False(t, f.SafeToDestroy())
}

func withoutSafe(o CephOSD) CephOSD {
	o.SafeToDestroy.RC, o.SafeToDestroy.Message = 0, ""
	return o
}

// TestPGStatesScript runs the pgs verb's script on what Ceph 18.2.7 prints
// for `ceph pg stat -f json`, and reads its answer as the plugin does.
func TestPGStatesScript(t *testing.T) {
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "the verb runs in Rook's image with python3; its test needs one too")
	stat, err := os.Open("testdata/ceph/pg_stat.json")
	require.NoError(t, err)
	defer stat.Close()
	cmd := exec.Command(python, "-c", pgStatesScript)
	cmd.Stdin = stat
	out, err := cmd.Output()
	require.NoError(t, err)
	states, err := ParsePGStates(string(out))
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"active+clean": 29, "active+undersized+degraded": 12}, states)

	_, err = ParsePGStates(`{"osdUUID":"x"}`)
	assert.ErrorContains(t, err, "no pgs")
	_, err = ParsePGStates("Error ETIMEDOUT: the monitors cannot be reached")
	assert.ErrorContains(t, err, "read the PG states")
}
