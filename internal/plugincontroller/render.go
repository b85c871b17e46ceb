package plugincontroller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// ClusterIdentity is what the platform told the controller about the
// cluster it runs in; every plugin receives it as FUNDAMENT_ variables.
type ClusterIdentity struct {
	ClusterID      string
	OrganizationID string
}

// RenderInput is everything the desired objects depend on.
type RenderInput struct {
	Installation *pluginsv1.PluginInstallation
	// Definition passed CheckDefinition for the installation's ref.
	Definition *definition.PluginDefinition
	Cluster    ClusterIdentity
	// Tokens is how the plugin verifies the controller's calls to its
	// metadata API (TokenSigner.Trust).
	Tokens TokenTrust
}

// Objects are what one installation consists of. Cluster-scoped RBAC is
// separate from the namespace because deleting the namespace does not
// remove it.
type Objects struct {
	Namespace          *corev1.Namespace
	ServiceAccount     *corev1.ServiceAccount
	RoleBinding        *rbacv1.RoleBinding
	Deployment         *appsv1.Deployment
	Service            *corev1.Service
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
}

// RenderObjects returns the objects of an installation, in the order they
// are applied: the namespace first, the identity before the workload that
// uses it. Every object is labelled and controlled by the installation.
func RenderObjects(in RenderInput) Objects {
	inst := in.Installation
	ns := InstallationNamespace(inst)
	scope := ScopeClusterRoleName(inst.Name)
	meta := func(namespace, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name:            name,
			Namespace:       namespace,
			Labels:          objectLabels(inst.Name),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(inst, pluginsv1.GroupVersion.WithKind("PluginInstallation"))},
		}
	}
	pluginSubject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ObjectName, Namespace: ns}}
	namespace := &corev1.Namespace{ObjectMeta: meta("", ns)}
	// The plugin's pod meets Pod Security "restricted", so its namespace
	// enforces it: nothing less secure can be started there in its name.
	maps.Copy(namespace.Labels, PodSecurityLabels)
	return Objects{
		Namespace:      namespace,
		ServiceAccount: &corev1.ServiceAccount{ObjectMeta: meta(ns, ObjectName)},
		RoleBinding: &rbacv1.RoleBinding{
			ObjectMeta: meta(ns, ObjectName),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: NamespaceAdminRole},
			Subjects:   pluginSubject,
		},
		Deployment: &appsv1.Deployment{
			ObjectMeta: meta(ns, ObjectName),
			Spec:       renderDeploymentSpec(in),
		},
		Service: &corev1.Service{
			ObjectMeta: meta(ns, ObjectName),
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: podLabels(inst.Name),
				Ports: []corev1.ServicePort{{
					Name:       PluginPortName,
					Protocol:   corev1.ProtocolTCP,
					Port:       PluginPort,
					TargetPort: intstr.FromString(PluginPortName),
				}},
			},
		},
		// The rules are the definition's, verbatim: what the installer
		// approved by pinning its hash, resourceNames included.
		ClusterRole: &rbacv1.ClusterRole{
			ObjectMeta: meta("", scope),
			Rules:      clonePolicyRules(in.Definition.Spec.Permissions.RBAC),
		},
		ClusterRoleBinding: &rbacv1.ClusterRoleBinding{
			ObjectMeta: meta("", scope),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scope},
			Subjects:   pluginSubject,
		},
	}
}

// PodSecurityLabels make a plugin namespace enforce Pod Security
// "restricted" at the API server's version.
var PodSecurityLabels = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
}

// objectLabels mark an object as this controller's, for this installation.
func objectLabels(installation string) map[string]string {
	return map[string]string{
		LabelManagedBy:    ManagedByValue,
		LabelInstallation: LabelValue(installation),
	}
}

// podLabels select the plugin's pods. They are the Deployment's selector,
// which is immutable, so they derive from the installation's name only.
func podLabels(installation string) map[string]string {
	return map[string]string{
		LabelName:         ObjectName,
		LabelInstallation: LabelValue(installation),
	}
}

// PluginUser is the numeric user and group every plugin container runs as:
// distroless's "nonroot" (65532), which both Dockerfiles name by number.
// A kubelet verifies runAsNonRoot only against a numeric user: an image
// whose USER is a name, with no runAsUser in the pod, fails with
// CreateContainerConfigError. dockerfile_test.go keeps the three in step.
const PluginUser int64 = 65532

// TerminationGracePeriod outlasts the runtime's shutdown deadline, so that
// the runtime, not SIGKILL, ends the process (readiness first, then the
// plugin, the HTTP server and telemetry).
var TerminationGracePeriod = pluginruntime.DefaultShutdownTimeout + 15*time.Second

// The plugin's resources, from what `just bench` measured for ceph-rook
// (docs/performance.md): the plugin and its Helm helper together peak at
// about 117 MiB while installing, the plugin alone at about 109 MiB at
// 10,000 disks; discovery convergence keeps about one core busy. The
// request is what the plugin needs to run; the memory limit doubles it for
// headroom. No CPU limit: throttling a controller only delays its work,
// and the request already reserves its share.
var (
	PluginCPURequest    = resource.MustParse("100m")
	PluginMemoryRequest = resource.MustParse("128Mi")
	PluginMemoryLimit   = resource.MustParse("256Mi")
)

// Writable scratch space under a read-only root filesystem: os.TempDir,
// where the Helm helper writes its kubeconfig and Helm its chart cache.
const (
	TmpVolumeName = "tmp"
	TmpMountPath  = "/tmp"
)

// tmpSizeLimit bounds that scratch space; Rook's packaged chart and its
// index take under 1 MiB.
var tmpSizeLimit = resource.MustParse("64Mi")

func renderDeploymentSpec(in RenderInput) appsv1.DeploymentSpec {
	inst, def := in.Installation, in.Definition
	templateLabels := podLabels(inst.Name)
	templateLabels[LabelManagedBy] = ManagedByValue
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(PluginPort)},
		}}
	}
	return appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: podLabels(inst.Name)},
		// A plugin installs and upgrades software; two of them at once
		// (old and new during a rolling update) would fight over it.
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      templateLabels,
				Annotations: map[string]string{AnnotationConfigHash: ConfigHash(inst.Spec.DefinitionRef.DefinitionHash, inst.Spec.Config)},
			},
			Spec: corev1.PodSpec{
				ServiceAccountName:            ObjectName,
				TerminationGracePeriodSeconds: ptr.To(int64(TerminationGracePeriod.Seconds())),
				// Pod Security "restricted": a numeric non-root user,
				// RuntimeDefault seccomp, no capabilities, no escalation.
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					RunAsUser:      ptr.To(PluginUser),
					RunAsGroup:     ptr.To(PluginUser),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Volumes: []corev1.Volume{{
					Name:         TmpVolumeName,
					VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &tmpSizeLimit}},
				}},
				Containers: []corev1.Container{{
					Name:            ObjectName,
					Image:           def.Spec.Image,
					ImagePullPolicy: corev1.PullPolicy(def.Spec.ImagePullPolicy),
					Ports:           []corev1.ContainerPort{{Name: PluginPortName, ContainerPort: PluginPort, Protocol: corev1.ProtocolTCP}},
					Env:             PluginEnv(in),
					LivenessProbe:   probe(pluginruntime.LivenessPath),
					ReadinessProbe:  probe(pluginruntime.ReadinessPath),
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: PluginCPURequest, corev1.ResourceMemory: PluginMemoryRequest},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: PluginMemoryLimit},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: TmpVolumeName, MountPath: TmpMountPath}},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						ReadOnlyRootFilesystem:   ptr.To(true),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
			},
		},
	}
}

// PluginEnv is the plugin's environment: the three FUNDAMENT_ ids the
// runtime requires, the three FUNDAMENT_TOKEN_ variables that make its
// metadata API answer only the controller (TokenEnv), then one FUNP_<KEY>
// per config entry in key order (so the same config always renders the
// same list and rolls nothing). Being in the pod template, a new signing
// key rolls the Deployment as a config edit does.
func PluginEnv(in RenderInput) []corev1.EnvVar {
	inst := in.Installation
	env := []corev1.EnvVar{
		{Name: pluginruntime.EnvClusterID, Value: in.Cluster.ClusterID},
		{Name: pluginruntime.EnvInstallID, Value: string(inst.UID)},
		{Name: pluginruntime.EnvOrganizationID, Value: in.Cluster.OrganizationID},
	}
	env = append(env, TokenEnv(in.Tokens, TokenAudience(inst.Name))...)
	config := inst.Spec.Config
	for _, key := range slices.Sorted(maps.Keys(config)) {
		env = append(env, corev1.EnvVar{Name: pluginruntime.ConfigPrefix + key, Value: config[key]})
	}
	return env
}

// ConfigHash is "sha256:" over the definition hash and the config. It is a
// pod-template annotation, so that a new definition or config rolls the
// Deployment even when nothing else in the template changes.
func ConfigHash(definitionHash string, config map[string]string) string {
	data, err := json.Marshal(struct {
		Definition string            `json:"definition"`
		Config     map[string]string `json:"config"`
	}{definitionHash, config}) // encoding/json sorts map keys
	if err != nil {
		panic("marshal a string map: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func clonePolicyRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	if len(rules) == 0 {
		return nil
	}
	out := make([]rbacv1.PolicyRule, len(rules))
	for i := range rules {
		rules[i].DeepCopyInto(&out[i])
	}
	return out
}
