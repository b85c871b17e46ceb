package rook

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// What Rook v1.18 publishes about an OSD on its Deployment
// (pkg/operator/ceph/cluster/osd: labels.go OsdIdLabelKey, envs.go,
// spec.go; osd.go getOSDInfo reads them back the same way).
const (
	EnvNodeName         = "ROOK_NODE_NAME"
	EnvOSDUUID          = "ROOK_OSD_UUID"
	EnvBlockPath        = "ROOK_BLOCK_PATH"
	EnvLVPath           = "ROOK_LV_PATH"
	EnvPVCBacked        = "ROOK_PVC_BACKED_OSD"
	osdDeploymentPrefix = "rook-ceph-osd-" // + id: Rook's name, which its removal deletes
	OSDContainer        = "osd"

	// EnvOSDDeviceClass and OSDDeviceClassLabel carry the OSD's device
	// class on its Deployment, both written from the same value by
	// makeDeployment (envs.go dataDeviceClassEnvVar, labels.go
	// getOSDLabels); getOSDInfo reads the variable back as the class Rook
	// keeps CRUSH at (allowDeviceClassUpdate: osd.go
	// updateDeviceClassIfChanged).
	EnvOSDDeviceClass   = "ROOK_OSD_DEVICE_CLASS"
	OSDDeviceClassLabel = "device-class"
)

// OSDDeploymentName is Rook's Deployment of OSD id.
func OSDDeploymentName(id int32) string {
	return osdDeploymentPrefix + strconv.Itoa(int(id))
}

// OSD is one OSD as its Rook Deployment describes it.
type OSD struct {
	ID         int32
	Deployment string
	Node       string
	UUID       string
	// BlockPath is the device the OSD runs on: for a raw-mode OSD the
	// kernel path `ceph-volume raw list` reported at prepare time
	// (pkg/daemon/ceph/osd/volume.go), for an LVM one the logical volume.
	BlockPath string
	// Replicas is the Deployment's spec.replicas; Running its
	// status.replicas (pods that exist, stopping ones included).
	Replicas, Running int32
	// DeviceClass is the device class the Deployment carries: the one the
	// OSD was prepared with (or that CRUSH had when Rook first rewrote an
	// older Deployment naming none), which Rook sets CRUSH's class back
	// to after each OSD reconcile while allowDeviceClassUpdate is on, as
	// the plugin has it. Empty when the Deployment names none (Rook then
	// takes CRUSH's class as it is: update.go updateExistingOSDs).
	DeviceClass string
	// Image is the image of its "osd" container: the Ceph release that
	// runs the OSD, whose tools read the labels it wrote.
	Image string
}

// ParseOSDDeployment reads an OSD Deployment as Rook's getOSDInfo does: the
// ID from the ceph-osd-id label, the node, UUID and block path from the
// environment of the container named "osd" (ROOK_BLOCK_PATH, or
// ROOK_LV_PATH for an LVM OSD), and the device class from
// ROOK_OSD_DEVICE_CLASS, else the device-class label ("None", what
// ceph-volume lvm list says of a class it lacks, is none). Rook v1.18.10
// stopped reading the first container (findOSDContainer), since a sidecar
// may come first. Rook's own reader fails on a missing UUID or block path,
// and so does this one; a missing class is none, not a failure. OSDs on
// PVCs are not the plugin's (it lists host devices only) and are refused.
func ParseOSDDeployment(d *appsv1.Deployment) (OSD, error) {
	raw, ok := d.Labels[OSDIDLabel]
	if !ok {
		return OSD{}, fmt.Errorf("deployment %s has no %s label", d.Name, OSDIDLabel)
	}
	id, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || id < 0 {
		return OSD{}, fmt.Errorf("deployment %s: label %s=%q is not an OSD ID", d.Name, OSDIDLabel, raw)
	}
	container := osdContainer(d.Spec.Template.Spec.Containers)
	if container == nil {
		return OSD{}, fmt.Errorf("deployment %s has no container named %q", d.Name, OSDContainer)
	}
	osd := OSD{ID: int32(id), Deployment: d.Name, Running: d.Status.Replicas, Replicas: 1, Image: container.Image}
	if d.Spec.Replicas != nil {
		osd.Replicas = *d.Spec.Replicas
	}
	for _, env := range container.Env {
		switch env.Name {
		case EnvNodeName:
			osd.Node = env.Value
		case EnvOSDUUID:
			osd.UUID = env.Value
		case EnvBlockPath, EnvLVPath:
			osd.BlockPath = env.Value
		case EnvOSDDeviceClass:
			osd.DeviceClass = env.Value
		case EnvPVCBacked:
			return OSD{}, fmt.Errorf("deployment %s: osd.%d is on a PVC, not a host device", d.Name, id)
		}
	}
	if osd.DeviceClass == "" || osd.DeviceClass == noDeviceClass {
		osd.DeviceClass = d.Labels[OSDDeviceClassLabel]
	}
	if osd.DeviceClass == noDeviceClass {
		osd.DeviceClass = ""
	}
	if osd.UUID == "" || osd.BlockPath == "" || osd.Node == "" {
		return OSD{}, fmt.Errorf("deployment %s: osd.%d names no node, UUID or block path (%s, %s, %s)", d.Name, id, EnvNodeName, EnvOSDUUID, EnvBlockPath)
	}
	return osd, nil
}

// noDeviceClass is how `ceph-volume lvm list` reports an OSD without a
// class, which Rook v1.18 reads as none (update.go, tracker 53425).
const noDeviceClass = "None"

// osdContainer is the container Rook runs the OSD daemon in, or nil.
func osdContainer(containers []corev1.Container) *corev1.Container {
	for i := range containers {
		if containers[i].Name == OSDContainer {
			return &containers[i]
		}
	}
	return nil
}
