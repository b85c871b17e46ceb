package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DefinitionRef pins the published PluginDefinition to run. A plugin's
// identity is the pair (OrganizationName, PluginName); the version and hash
// choose one immutable definition of it.
type DefinitionRef struct {
	// OrganizationName is the publishing organization. It may not contain
	// "--", so that the installation name <organizationName>--<pluginName>
	// splits back into its two parts in exactly one way.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]+(-[a-z0-9]+)*$`
	OrganizationName string `json:"organizationName"`
	// PluginName is the plugin's name within its organization, the
	// definition's metadata.name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	PluginName string `json:"pluginName"`
	// PluginVersion is the published version, without a "v" prefix
	// ("1.17.2").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[0-9][0-9A-Za-z.+-]*$`
	PluginVersion string `json:"pluginVersion"`
	// DefinitionHash is "sha256:" and the hex SHA-256 of the definition's
	// raw bytes as published. The controller runs nothing whose definition
	// hashes differently, so the hash is what the installer approved.
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	DefinitionHash string `json:"definitionHash"`
}

// PluginInstallationSpec is what the installer asked for.
type PluginInstallationSpec struct {
	// DefinitionRef names the definition to run.
	DefinitionRef DefinitionRef `json:"definitionRef"`
	// Config becomes one FUNP_<KEY> environment variable per entry in the
	// plugin's container: {LOG_LEVEL: debug} is FUNP_LOG_LEVEL=debug.
	// Changing it rolls the plugin's Deployment.
	// +kubebuilder:validation:MaxProperties=128
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Z][A-Z0-9_]*$'))",message="config keys are upper snake case (LOG_LEVEL): each becomes the variable FUNP_<KEY>"
	// +optional
	Config map[string]string `json:"config,omitempty"`
}

// Phase is the plugin's lifecycle phase as the plugin reports it through
// GetStatus, or failed when the controller cannot run it at all.
// +kubebuilder:validation:Enum=installing;running;degraded;failed;uninstalling
type Phase string

// The phases of the plugin lifecycle (see the plugin runtime).
const (
	PhaseInstalling   Phase = "installing"
	PhaseRunning      Phase = "running"
	PhaseDegraded     Phase = "degraded"
	PhaseFailed       Phase = "failed"
	PhaseUninstalling Phase = "uninstalling"
)

// PluginInstallationStatus is what the controller observed.
type PluginInstallationStatus struct {
	// Phase is the plugin's last reported phase; failed also when the
	// controller refuses to run the definition (see message).
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Ready is true while the plugin reports running.
	// +optional
	Ready bool `json:"ready"`
	// Message explains the phase, in the plugin's or the controller's words.
	// +optional
	Message string `json:"message,omitempty"`
	// Namespace is where the plugin runs, once anything was deployed.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (with the reason the plugin is not running).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionReady is true while the plugin is deployed as its definition
// says and reports running.
const ConditionReady = "Ready"

// PluginInstallation runs one published plugin in this cluster: its own
// namespace with a ServiceAccount, Deployment and Service, the namespace's
// admin role, and the cluster-wide permissions its definition declares.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=pi,categories=fundament
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.definitionRef.organizationName + '--' + self.spec.definitionRef.pluginName",message="metadata.name must equal <organizationName>--<pluginName>"
// +kubebuilder:printcolumn:name="Plugin",type=string,JSONPath=`.spec.definitionRef.pluginName`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.definitionRef.pluginVersion`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=boolean,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.status.namespace`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PluginInstallation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PluginInstallationSpec `json:"spec"`
	// +optional
	Status PluginInstallationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PluginInstallationList is a list of PluginInstallations.
type PluginInstallationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PluginInstallation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PluginInstallation{}, &PluginInstallationList{})
}
