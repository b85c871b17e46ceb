package rook_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOSDDeployment(t *testing.T) {
	good := simulate.OSDDeployment("rook-ceph", 7, "node-a", "/dev/sdb")
	osd, err := rook.ParseOSDDeployment(good)
	require.NoError(t, err)
	assert.Equal(t, rook.OSD{ID: 7, Deployment: "rook-ceph-osd-7", Node: "node-a", UUID: "00000000-0000-4000-8000-000000000007", BlockPath: "/dev/sdb", Replicas: 1, Image: "quay.io/ceph/ceph:v19.2.3"}, osd, "the osd container's image: the Ceph that runs it")

	lvm := simulate.OSDDeployment("rook-ceph", 8, "node-a", "")
	env := lvm.Spec.Template.Spec.Containers[0].Env
	for i := range env {
		if env[i].Name == "ROOK_BLOCK_PATH" {
			env[i] = corev1.EnvVar{Name: "ROOK_LV_PATH", Value: "/dev/ceph-1/osd-block-2"}
		}
	}
	osd, err = rook.ParseOSDDeployment(lvm)
	require.NoError(t, err)
	assert.Equal(t, "/dev/ceph-1/osd-block-2", osd.BlockPath, "an LVM OSD's path is ROOK_LV_PATH, as getOSDInfo reads it")

	sidecarFirst := simulate.OSDDeployment("rook-ceph", 9, "node-b", "/dev/sdc")
	pod := &sidecarFirst.Spec.Template.Spec
	pod.Containers = append([]corev1.Container{{Name: "log-collector", Env: []corev1.EnvVar{{Name: "ROOK_NODE_NAME", Value: "elsewhere"}}}}, pod.Containers...)
	osd, err = rook.ParseOSDDeployment(sidecarFirst)
	require.NoError(t, err)
	assert.Equal(t, "node-b", osd.Node, "the OSD's facts come from the container named osd, as Rook v1.18.10's findOSDContainer reads them")
	assert.Equal(t, "/dev/sdc", osd.BlockPath)

	t.Run("the device class", func(t *testing.T) {
		cases := []struct {
			name, env, label, want string
		}{
			{name: "from ROOK_OSD_DEVICE_CLASS, as getOSDInfo reads it", env: "ssd", label: "ssd", want: "ssd"},
			{name: "the variable wins over the label", env: "nvme", label: "ssd", want: "nvme"},
			{name: "the label when the variable is absent", label: "hdd", want: "hdd"},
			{name: "None from ceph-volume lvm list is none, the label then", env: "None", label: "hdd", want: "hdd"},
			{name: "None everywhere is none", env: "None", label: "None", want: ""},
			{name: "neither: none, and not a failure"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := simulate.OSDDeployment("rook-ceph", 4, "node-a", "/dev/sdb")
				if tc.env != "" {
					c := &d.Spec.Template.Spec.Containers[0]
					c.Env = append(c.Env, corev1.EnvVar{Name: rook.EnvOSDDeviceClass, Value: tc.env})
				}
				if tc.label != "" {
					d.Labels[rook.OSDDeviceClassLabel] = tc.label
				}
				osd, err := rook.ParseOSDDeployment(d)
				require.NoError(t, err)
				assert.Equal(t, tc.want, osd.DeviceClass)
			})
		}
	})

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
		"no containers":          func() { good.Spec.Template.Spec.Containers = nil },
		"no container named osd": func() { good.Spec.Template.Spec.Containers[0].Name = "daemon" },
	}
	for name, spoil := range refusals {
		t.Run(name, func(t *testing.T) {
			good = simulate.OSDDeployment("rook-ceph", 7, "node-a", "/dev/sdb")
			spoil()
			_, err := rook.ParseOSDDeployment(good)
			assert.Error(t, err)
		})
	}
}
