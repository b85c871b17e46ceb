package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

func TestParseOSDDeployment(t *testing.T) {
	good := simulate.OSDDeployment("rook-ceph", 7, "node-a", "/dev/sdb")
	osd, err := ParseOSDDeployment(good)
	require.NoError(t, err)
	assert.Equal(t, OSD{ID: 7, Deployment: "rook-ceph-osd-7", Node: "node-a", UUID: "00000000-0000-4000-8000-000000000007", BlockPath: "/dev/sdb", Replicas: 1}, osd)

	lvm := simulate.OSDDeployment("rook-ceph", 8, "node-a", "")
	env := lvm.Spec.Template.Spec.Containers[0].Env
	for i := range env {
		if env[i].Name == "ROOK_BLOCK_PATH" {
			env[i] = corev1.EnvVar{Name: "ROOK_LV_PATH", Value: "/dev/ceph-1/osd-block-2"}
		}
	}
	osd, err = ParseOSDDeployment(lvm)
	require.NoError(t, err)
	assert.Equal(t, "/dev/ceph-1/osd-block-2", osd.BlockPath, "an LVM OSD's path is ROOK_LV_PATH, as getOSDInfo reads it")

	refusals := map[string]func(){
		"no ceph-osd-id label":  func() { delete(good.Labels, "ceph-osd-id") },
		"an ID that is not one": func() { good.Labels["ceph-osd-id"] = "seven" },
		"a negative ID":         func() { good.Labels["ceph-osd-id"] = "-1" },
		"no UUID": func() {
			good.Spec.Template.Spec.Containers[0].Env = good.Spec.Template.Spec.Containers[0].Env[2:]
		},
		"an OSD on a PVC": func() {
			c := &good.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "ROOK_PVC_BACKED_OSD", Value: "true"})
		},
		"no containers": func() { good.Spec.Template.Spec.Containers = nil },
	}
	for name, spoil := range refusals {
		t.Run(name, func(t *testing.T) {
			good = simulate.OSDDeployment("rook-ceph", 7, "node-a", "/dev/sdb")
			spoil()
			_, err := ParseOSDDeployment(good)
			assert.Error(t, err)
		})
	}
}

func retirementDisk(name, node, path, stable string) *cephv1alpha1.Disk {
	d := &cephv1alpha1.Disk{}
	d.Name = name
	d.Status = cephv1alpha1.DiskStatus{NodeName: node, Path: path, StablePath: stable, State: cephv1alpha1.DiskInUse, ClaimedBy: "pool"}
	size := resource.MustParse("100Gi")
	d.Status.Size = &size
	return d
}

func TestFindOSD(t *testing.T) {
	disk := retirementDisk("a-sdb", "node-a", "/dev/sdb", "/dev/disk/by-id/wwn-0xb")
	osd := func(id int32, node, path string) OSD {
		return OSD{ID: id, Node: node, BlockPath: path, UUID: "u", Deployment: "rook-ceph-osd-" + string(rune('0'+id))}
	}
	nodePaths := map[string]bool{"/dev/sdb": true, "/dev/disk/by-id/wwn-0xb": true, "/dev/sdc": true}
	tests := []struct {
		name       string
		osds       []OSD
		unreadable []string
		wantID     int32 // -1: none
		refusal    string
	}{
		{name: "by kernel path on the node", osds: []OSD{osd(1, "node-a", "/dev/sdc"), osd(2, "node-a", "/dev/sdb")}, wantID: 2},
		{name: "by stable path", osds: []OSD{osd(3, "node-a", "/dev/disk/by-id/wwn-0xb")}, wantID: 3},
		{name: "the same path on another node is another disk", osds: []OSD{osd(4, "node-b", "/dev/sdb")}, wantID: -1},
		{name: "no OSD at all", wantID: -1},
		{name: "two OSDs on the device", osds: []OSD{osd(1, "node-a", "/dev/sdb"), osd(5, "node-a", "/dev/sdb")}, wantID: -1, refusal: "osd.1 and osd.5 all run on /dev/sdb of node node-a"},
		{name: "an OSD of the node on a path no Disk names may be this one", osds: []OSD{osd(6, "node-a", "/dev/ceph-x/osd-block-y")}, wantID: -1, refusal: "osd.6 on /dev/ceph-x/osd-block-y of node node-a name no Disk"},
		{name: "an unreadable OSD Deployment may be this one", unreadable: []string{"rook-ceph-osd-9"}, wantID: -1, refusal: "rook-ceph-osd-9 cannot be read"},
		{name: "a found OSD wins over unreadable ones", osds: []OSD{osd(2, "node-a", "/dev/sdb")}, unreadable: []string{"rook-ceph-osd-9"}, wantID: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FindOSD(disk, tc.osds, nodePaths, tc.unreadable)
			if tc.wantID < 0 {
				assert.Nil(t, got.OSD)
			} else if assert.NotNil(t, got.OSD) {
				assert.Equal(t, tc.wantID, got.OSD.ID)
			}
			if tc.refusal == "" {
				assert.Empty(t, got.Refusal)
			} else {
				assert.Contains(t, got.Refusal, tc.refusal)
			}
		})
	}
}

func TestPreflight(t *testing.T) {
	const gi = int64(1) << 30
	healthy := PreflightInput{
		HostsAfter: 3, OSDsAfter: 5,
		Consumers: []ConsumerNeed{{Consumer: "BlockStorage db", Size: 3, Domain: FailureDomainHost}},
		Health:    "HEALTH_OK", UsedBytes: 100 * gi, TotalBytes: 600 * gi, DiskBytes: 100 * gi,
	}
	tests := []struct {
		name   string
		change func(*PreflightInput)
		failed map[string]string // check name -> part of its message
	}{
		{name: "a healthy cluster with room", change: func(*PreflightInput) {}},
		{name: "too few hosts for a consumer's copies", change: func(in *PreflightInput) { in.HostsAfter = 2 },
			failed: map[string]string{CheckHosts: "2 hosts and 5 OSDs would remain: too few for BlockStorage db keeps 3 copies on different hosts"}},
		{name: "copies on OSDs count OSDs", change: func(in *PreflightInput) {
			in.HostsAfter, in.OSDsAfter = 1, 1
			in.Consumers = []ConsumerNeed{{Consumer: "FileStorage f", Size: 2, Domain: FailureDomainOSD}}
		}, failed: map[string]string{CheckHosts: "FileStorage f keeps 2 copies on different OSDs"}},
		{name: "two copies on the OSDs of one node that remain", change: func(in *PreflightInput) {
			in.HostsAfter, in.OSDsAfter = 1, 2
			in.Consumers = []ConsumerNeed{{Consumer: "FileStorage f", Size: 2, Domain: FailureDomainOSD}}
		}},
		{name: "data that would pass the nearfull ratio", change: func(in *PreflightInput) { in.UsedBytes = 430 * gi },
			failed: map[string]string{CheckCapacity: "430.0 GiB used of 500.0 GiB that would remain (425.0 GiB before Ceph's nearfull ratio of 85%): the data would not fit"}},
		{name: "data just below it", change: func(in *PreflightInput) { in.UsedBytes = 425 * gi }},
		{name: "a replacement not yet an OSD counts as joined", change: func(in *PreflightInput) { in.UsedBytes, in.JoiningBytes = 430*gi, 100*gi }},
		{name: "no capacity reported", change: func(in *PreflightInput) { in.TotalBytes = 0 },
			failed: map[string]string{CheckCapacity: "has not reported its capacity"}},
		{name: "HEALTH_ERR", change: func(in *PreflightInput) { in.Health = "HEALTH_ERR" },
			failed: map[string]string{CheckHealth: "HEALTH_ERR"}},
		{name: "HEALTH_WARN passes", change: func(in *PreflightInput) { in.Health = "HEALTH_WARN" }},
		{name: "a consumer with a single copy", change: func(in *PreflightInput) {
			in.Consumers = append(in.Consumers, ConsumerNeed{Consumer: "ObjectStorage media", Size: 1, Domain: FailureDomainOSD})
		}, failed: map[string]string{CheckCopies: "ObjectStorage media keeps a single copy"}},
		{name: "unknown health", change: func(in *PreflightInput) { in.Health = "" },
			failed: map[string]string{CheckHealth: "has not reported its health"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := healthy
			tc.change(&in)
			checks := Preflight(in)
			require.Len(t, checks, 4, "every check is reported")
			for _, c := range checks {
				want, fails := tc.failed[c.Name]
				assert.Equal(t, !fails, c.Passed, "%s: %s", c.Name, c.Message)
				if fails {
					assert.Contains(t, c.Message, want)
				}
			}
			passed, why := PreflightPassed(checks)
			assert.Equal(t, len(tc.failed) == 0, passed, why)
		})
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 3 << 30: "3.0 GiB", 4000787030016: "3.6 TiB"} {
		assert.Equal(t, want, humanBytes(n), "%d", n)
	}
}

// TestRemovalJobHasTheShapeOfRooksOwn compares the rendered Job with Rook's
// deploy/examples/osd-purge.yaml (as cached by hack/rook): the same
// container arguments, environment, mounts, volumes and service account;
// only the name, the image and the OSD ID differ.
func TestRemovalJobHasTheShapeOfRooksOwn(t *testing.T) {
	raw, err := os.ReadFile(cachedir.RookOSDPurgeJob())
	require.NoError(t, err, "run `just rook-artifacts`")
	var rook batchv1.Job
	require.NoError(t, yaml.Unmarshal(raw, &rook))
	ours := RenderRemovalJob("rook-ceph", "retire-sdb", 3, "docker.io/rook/ceph:v1.18.0")

	want := rook.Spec.Template.Spec
	got := ours.Spec.Template.Spec
	assert.Equal(t, want.ServiceAccountName, got.ServiceAccountName)
	assert.Equal(t, want.RestartPolicy, got.RestartPolicy)
	assert.Equal(t, want.Volumes, got.Volumes)
	require.Len(t, got.Containers, 1)
	wc, gc := want.Containers[0], got.Containers[0]
	assert.Equal(t, wc.Name, gc.Name)
	assert.Equal(t, wc.Env, gc.Env)
	assert.Equal(t, wc.VolumeMounts, gc.VolumeMounts)
	wantArgs := append([]string(nil), wc.Args...)
	wantArgs[len(wantArgs)-1] = "3" // Rook's "<OSD-IDs>" placeholder
	assert.Equal(t, wantArgs, gc.Args)
	assert.Contains(t, gc.Args, "--force-osd-removal")
	assert.Equal(t, "false", gc.Args[6], "never forced: Rook waits until Ceph says the OSD is safe to destroy")
	assert.Equal(t, rook.Spec.Template.Labels["app"], ours.Spec.Template.Labels["app"])
	assert.Equal(t, "ceph-rook-remove-osd-3", ours.Name, "one name per OSD: a second Job for it is refused by the API server")
	assert.Equal(t, "retire-sdb", ours.Labels[RetirementLabel])
}
