package cephjob

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

func TestParseCephFacts(t *testing.T) {
	f, err := ParseFacts(`{"health":{"status":"HEALTH_WARN","checks":{"OSD_DOWN":"1 osds down"}},` +
		`"ratios":{"nearfull":0.85,"backfillfull":0.9,"full":0.95},"maxPGPerOSD":250,"hardRatio":3.0,` +
		`"pools":[[".mgr",3,2,"host"],["ceph-rook-db",2,1,"osd"]],"pgs":{"active+clean":33},` +
		`"hosts":[{"name":"node-a","osds":[[0,1,1,33,10485760,1048576],[1,0,1,0,10485760,0]]}],` +
		`"osd":{"id":1,"exists":true,"uuid":"u-1","up":false,"in":true,"devNode":"/dev/loop3","devices":"loop3","deviceIDs":"","safeToDestroy":{"rc":11,"message":"Error EAGAIN: pgs not clean"}}}`)
	require.NoError(t, err)
	assert.Equal(t, []Pool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 2, 1, "osd"}}, f.Pools)
	assert.Equal(t, []Host{{Name: "node-a", OSDs: []HostOSD{{ID: 0, Up: true, In: true, PGs: 33, KB: 10485760, KBUsed: 1048576}, {ID: 1, In: true, KB: 10485760}}}}, f.Hosts)
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
		_, err := ParseFacts(answer)
		assert.Error(t, err, name)
	}
}

// The probe (probe.py) run by python3 against a fake librados that
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

	f, err := ParseFacts(string(out))
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "HEALTH_WARN", f.Health.Status)
	assert.Equal(t, "1 osds down", f.Health.Checks["OSD_DOWN"])
	assert.InDelta(t, 0.85, f.Ratios.Nearfull, 1e-6)
	assert.InDelta(t, 0.90, f.Ratios.Backfillfull, 1e-6)
	assert.InDelta(t, 0.95, f.Ratios.Full, 1e-6)
	assert.Equal(t, 250, f.MaxPGPerOSD)
	assert.InDelta(t, 3.0, f.HardRatio, 1e-9)
	assert.Equal(t, []Pool{{".mgr", 3, 2, "host"}, {"ceph-rook-db", 2, 1, "host"}, {"scratch", 2, 1, "osd"}}, f.Pools)
	assert.Equal(t, map[string]int{"active+clean": 29, "active+undersized+degraded": 12}, f.PGStates)
	assert.Equal(t, Recovery{Degraded: 1200, Misplaced: 35}, f.Recovery)
	assert.Equal(t, []Host{
		{Name: "node-a", OSDs: []HostOSD{{ID: 0, Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1572864}, {ID: 1, In: true, KB: 10485760, KBUsed: 524288}}},
		{Name: "node-b", OSDs: []HostOSD{{ID: 2, Up: true, In: true, PGs: 41, KB: 10485760, KBUsed: 1048576}, {ID: 3, Up: true}}},
	}, f.Hosts)
	assert.Equal(t, OSD{ID: 1, Exists: true, UUID: "1b7e2f4c-1f0a-4d3e-9c1a-6a1d2b3c4d51", In: true, DevNode: "/dev/loop3", Devices: "loop3"}, withoutSafe(f.OSD))
	assert.Equal(t, 16, f.OSD.SafeToDestroy.RC)
	assert.Equal(t, "Error EBUSY: OSD(s) 1 have 12 pgs currently mapped to them.", f.OSD.SafeToDestroy.Message, "as the ceph CLI says it")
	assert.False(t, f.SafeToDestroy())
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
