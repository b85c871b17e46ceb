package cephjob

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// TestCephJobReachesCephAsRooksOwnJob compares a rendered Ceph Job with
// Rook's deploy/examples/osd-purge.yaml (as cached by hack/rook): Ceph's
// address and the admin credentials come from the same ConfigMap and
// Secret keys; and pins what makes it the plugin's: named and labelled by
// its owner's UID (no name length breaks it), owned, bounded, never
// retried, its inputs in the environment.
func TestCephJobReachesCephAsRooksOwnJob(t *testing.T) {
	raw, err := os.ReadFile(cachedir.RookOSDPurgeJob())
	require.NoError(t, err, "run `just rook-artifacts`")
	var rook batchv1.Job
	require.NoError(t, yaml.Unmarshal(raw, &rook))
	owner := metav1.OwnerReference{APIVersion: "ceph.fundament.io/v1alpha1", Kind: "DiskRetirement",
		Name: strings.Repeat("a-very-long-retirement-name-", 9), UID: "3f2b8c1e-0d4a-4b5e-9c6f-7a8b9c0d1e2f"}
	job := Render("rook-ceph", owner, Request{Verb: VerbProbe, Seq: 12, OSDID: 3}, "docker.io/rook/ceph:v1.18.0")

	rookEnv := map[string]*corev1.EnvVarSource{}
	for _, e := range rook.Spec.Template.Spec.Containers[0].Env {
		rookEnv[e.Name] = e.ValueFrom
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	for _, name := range []string{"ROOK_MON_ENDPOINTS", "ROOK_CEPH_USERNAME"} {
		assert.Equal(t, rookEnv[name], env[name].ValueFrom, name)
	}
	secretOf := func(spec corev1.PodSpec) *corev1.SecretVolumeSource {
		for _, v := range spec.Volumes {
			if v.Secret != nil {
				return v.Secret
			}
		}
		return nil
	}
	want, got := secretOf(rook.Spec.Template.Spec), secretOf(job.Spec.Template.Spec)
	require.NotNil(t, got)
	assert.Equal(t, want.SecretName, got.SecretName)
	assert.Equal(t, want.Items, got.Items)

	assert.Equal(t, "ceph-rook-probe-3f2b8c1e0d4a4b5e9c6f7a8b9c0d1e2f-12", job.Name)
	assert.LessOrEqual(t, len(job.Name), 63, "the Job's name is its pods' job-name label")
	assert.Equal(t, string(owner.UID), job.Labels[OwnerLabel])
	assert.Equal(t, []metav1.OwnerReference{{APIVersion: "ceph.fundament.io/v1alpha1", Kind: "DiskRetirement", Name: owner.Name, UID: owner.UID}}, job.OwnerReferences)
	assert.Equal(t, int32(0), *job.Spec.BackoffLimit)
	assert.NotNil(t, job.Spec.TTLSecondsAfterFinished)
	assert.NotNil(t, job.Spec.ActiveDeadlineSeconds)
	assert.Equal(t, probeScript, env["PROBE"].Value)
	assert.Equal(t, "3", env["OSD_ID"].Value)
	assert.Empty(t, job.Spec.Template.Spec.NodeSelector, "a probe runs anywhere")

	zap := Render("rook-ceph", owner, Request{Verb: VerbZap, OSDID: 3, OSDUUID: "u-3", Node: "node-a", Device: "/dev/sd$(reboot)"}, "img")
	c := zap.Spec.Template.Spec.Containers[0]
	assert.Equal(t, map[string]string{corev1.LabelHostname: "node-a"}, zap.Spec.Template.Spec.NodeSelector)
	assert.True(t, *c.SecurityContext.Privileged)
	assert.NotContains(t, c.Command[2], "reboot", "the device is an environment value, never spliced into the script")
	assert.Contains(t, c.Env, corev1.EnvVar{Name: "DEVICE", Value: "/dev/sd$(reboot)"})
}

func TestParseCephJobName(t *testing.T) {
	owner := types.UID("3f2b8c1e-0d4a-4b5e-9c6f-7a8b9c0d1e2f")
	for _, verb := range []Verb{VerbProbe, VerbOut, VerbIn, VerbPurge, VerbIdentify, VerbZap} {
		v, seq, ok := ParseName(Name(owner, Request{Verb: verb, Seq: 7}))
		assert.True(t, ok)
		assert.Equal(t, verb, v)
		assert.Equal(t, int32(7), seq)
	}
	for _, bad := range []string{"", "rook-ceph-osd-3", "ceph-rook-remove-osd-3", "ceph-rook-probe-uid-x", "ceph-rook-nuke-uid-1"} {
		_, _, ok := ParseName(bad)
		assert.False(t, ok, bad)
	}
}

// handWritten is testdata/ceph's cluster as a Cluster: what probe.py
// reads there, for osd.1.
func handWritten() Cluster {
	return Cluster{
		OSDs: []ClusterOSD{
			{ID: 0, Host: "node-a", Class: "hdd", Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1572864},
			{ID: 1, UUID: "1b7e2f4c-1f0a-4d3e-9c1a-6a1d2b3c4d51", Host: "node-a", Class: "hdd", In: true, KB: 10485760, KBUsed: 524288},
			{ID: 2, Host: "node-b", Class: "hdd", Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1048576},
			{ID: 3, Host: "node-b", Class: "hdd", Up: true},
		},
		Pools: []ClusterPool{{".mgr", 3, 2, "host", ""}, {"ceph-rook-db", 2, 1, "host", "hdd"}, {"scratch", 2, 1, "osd", ""}},
	}
}

// What the simulation answers (Summarize, then Wire) parses back to the
// same facts; what does not have the probe's shape does not parse.
func TestParseCephFacts(t *testing.T) {
	var f Facts
	f.Health.Status, f.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_DOWN": "1 osds down"}
	f.Ratios.Nearfull, f.Ratios.Backfillfull, f.Ratios.Full = 0.85, 0.9, 0.95
	f.MaxPGPerOSD, f.HardRatio, f.PGStates = 250, 3, map[string]int{"active+clean": 33}
	handWritten().Summarize(&f, 1, 3)
	f.OSD.SafeToDestroy.RC, f.OSD.SafeToDestroy.Message = 11, "Error EAGAIN: pgs not clean"
	wire, err := f.Wire()
	require.NoError(t, err)
	got, err := ParseFacts(wire)
	require.NoError(t, err, wire)
	assert.Equal(t, f, got)
	assert.Equal(t, []Pool{{".mgr", 3, 2, "host", "", 1}, {"ceph-rook-db", 2, 1, "host", "hdd", 1}, {"scratch", 2, 1, "osd", "", 1}}, got.Pools)
	assert.False(t, got.SafeToDestroy())
	assert.False(t, got.UpAndIn(1), "osd.1 is down")
	assert.False(t, got.UpAndIn(3), "osd.3, the other OSD asked about, is out")
	assert.False(t, got.UpAndIn(0), "osd.0 was not asked about")

	for name, answer := range map[string]string{
		"cut at 4096 bytes":                `{"health":{"status":"HEALTH_OK"},"pools":[[".mgr",3,2,"ho`,
		"a pool of four":                   `{"health":{"status":"HEALTH_OK"},"classes":{"":[1,1,1,1,1,1,1]},"pools":[[".mgr",3,2,"host"]]}`,
		"a class of five":                  `{"health":{"status":"HEALTH_OK"},"classes":{"":[1,1,1,1,1]}}`,
		"a missing OSD of 3":               `{"health":{"status":"HEALTH_OK"},"classes":{"":[1,1,1,1,1,1,1]},"missing":[[1,0,1]]}`,
		"no class counted":                 `{"health":{"status":"HEALTH_OK"},"pools":[]}`,
		"missing OSDs counted, none named": `{"health":{"status":"HEALTH_OK"},"classes":{"":[1,1,1,1,1,1,1]},"missingCount":3}`,
		"more named than counted":          `{"health":{"status":"HEALTH_OK"},"classes":{"":[1,1,1,1,1,1,1]},"missing":[[1,0,1,"a"]],"missingCount":0}`,
		"no health":                        `{"pools":[]}`,
		"an error message":                 `Error EACCES: access denied`,
	} {
		_, err := ParseFacts(answer)
		assert.Error(t, err, name)
	}
}

// fakeRados is a fake librados for probe.py: each command, as the probe
// sends it (its JSON with sorted keys) to the daemon that answers it, gets
// Ceph's answer from $FAKE_CEPH_DATA (Ceph's formats); any other fails as
// Ceph would an unknown command.
const fakeRados = `import json, os
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

// runProbe runs probe.py by python3, as the probe Job does, for osd.1
// and also, against Ceph's answers in data; it returns what it printed.
func runProbe(t *testing.T, data string, also int) string {
	t.Helper()
	python, lib := fakeRadosLib(t)
	out, err := probeCommand(python, lib, data, also).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("probe: %v: %s", err, exit.Stderr)
	}
	require.NoError(t, err)
	return string(out)
}

// fakeRadosLib is python3 and a directory that holds fakeRados.
func fakeRadosLib(t *testing.T) (python, lib string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "the probe runs in Rook's image with python3; its test needs one too")
	lib = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(lib, "rados.py"), []byte(fakeRados), 0o644))
	return python, lib
}

// probeCommand runs probe.py as the probe Job does, for osd.1 and also.
func probeCommand(python, lib, data string, also int) *exec.Cmd {
	cmd := exec.Command(python, "-c", probeScript, "1", strconv.Itoa(also), "--conf", "/tmp/ceph.conf", "--keyring", "/tmp/keyring", "--name", "client.admin")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+lib, "FAKE_CEPH_DATA="+data)
	return cmd
}

// The probe against a small cluster in Ceph's own formats (testdata/ceph):
// what it prints parses, and says what the answers said, summed as
// Summarize sums the same cluster.
func TestProbeScript(t *testing.T) {
	data, err := filepath.Abs("testdata/ceph")
	require.NoError(t, err)
	out := runProbe(t, data, 3)
	assert.Less(t, len(out), 4096, "the answer fits a termination message")

	f, err := ParseFacts(out)
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "HEALTH_WARN", f.Health.Status)
	assert.Equal(t, "1 osds down", f.Health.Checks["OSD_DOWN"])
	assert.InDelta(t, 0.85, f.Ratios.Nearfull, 1e-6)
	assert.InDelta(t, 0.90, f.Ratios.Backfillfull, 1e-6)
	assert.InDelta(t, 0.95, f.Ratios.Full, 1e-6)
	assert.Equal(t, 250, f.MaxPGPerOSD)
	assert.InDelta(t, 3.0, f.HardRatio, 1e-9)
	assert.Equal(t, map[string]int{"active+clean": 29, "active+undersized+degraded": 12}, f.PGStates)
	assert.Equal(t, Recovery{Degraded: 1200, Misplaced: 35}, f.Recovery)
	assert.Equal(t, []Pool{{".mgr", 3, 2, "host", "", 1}, {"ceph-rook-db", 2, 1, "host", "hdd", 1}, {"scratch", 2, 1, "osd", "", 1}}, f.Pools,
		"the class from the rule's take step (default~hdd)")
	assert.Equal(t, Room{Hosts: 2, HostsWithOwn: 2, OSDs: 2, Load: Load{KB: 31457280, KBUsed: 3145728, Takers: 2, MostPGs: 41}}, f.Classes["hdd"],
		"osd.0 and osd.2 up and in, osd.1 (down, in) counted in the load, osd.3 (out) not")
	assert.Equal(t, Load{KB: 20971520, KBUsed: 2097152, Takers: 1, MostPGs: 41}, f.OwnHost[""])
	assert.Equal(t, []MissingOSD{{ID: 3, Up: true, Host: "node-b"}}, f.Missing)
	assert.Equal(t, OSD{ID: 1, Exists: true, UUID: "1b7e2f4c-1f0a-4d3e-9c1a-6a1d2b3c4d51", In: true, Host: "node-a", DeviceClass: "hdd", KB: 10485760,
		DevNode: "/dev/loop3", Devices: "loop3"}, withoutSafe(f.OSD))
	assert.Equal(t, 16, f.OSD.SafeToDestroy.RC)
	assert.Equal(t, "Error EBUSY: OSD(s) 1 have 12 pgs currently mapped to them.", f.OSD.SafeToDestroy.Message, "as the ceph CLI says it")
	assert.False(t, f.SafeToDestroy())
	assert.Equal(t, &AlsoOSD{ID: 3}, f.Also, "osd.3 is out")

	var want Facts
	handWritten().Summarize(&want, 1, 3)
	assert.Equal(t, want.Pools, f.Pools)
	assert.Equal(t, want.Classes, f.Classes)
	assert.Equal(t, want.OwnHost, f.OwnHost)
	assert.Equal(t, want.Missing, f.Missing)
	assert.Equal(t, want.MissingCount, f.MissingCount)
	assert.Equal(t, want.Also, f.Also)
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

func withoutSafe(o OSD) OSD {
	o.SafeToDestroy.RC, o.SafeToDestroy.Message = 0, ""
	return o
}

// A failed verb's answer is its script's own when its container ran;
// a Job that never ran (its node down) says nothing of the disk.
func TestReadTellsAScriptsFailureFromAJobThatNeverRan(t *testing.T) {
	failed := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"}}}}
	never := Read(failed, []corev1.Pod{{Status: corev1.PodStatus{Phase: corev1.PodPending}}})
	assert.Equal(t, Answer{Done: true, Message: "DeadlineExceeded: Job was active longer than specified deadline"}, never)

	ran := corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "/dev/sdb cannot be read\n"}}}}}}
	assert.Equal(t, Answer{Done: true, Ran: true, Message: "/dev/sdb cannot be read"}, Read(failed, []corev1.Pod{ran}))
}
