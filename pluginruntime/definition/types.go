package definition

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// APIVersion and Kind identify a PluginDefinition document.
const (
	APIVersion = "fundament.io/v1"
	Kind       = "PluginDefinition"
)

// PluginDefinition is a plugin's definition.yaml: static metadata the
// platform shows in its catalogue, the permissions the plugin's
// ServiceAccount gets, and how the console presents the plugin's resources.
type PluginDefinition struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata identifies the plugin. Name is the plugin's identity within its
// organization and ends up in Kubernetes object names, so it is a DNS label.
type Metadata struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	// Version is the release tag, "v" and the version ("v0.3.0"). The
	// registry publishes the definition without the "v", and that form is
	// what an installation pins (PublishedVersion).
	Version     string   `json:"version,omitempty"`
	Description string   `json:"description,omitempty"`
	Author      string   `json:"author,omitempty"`
	License     string   `json:"license,omitempty"`
	Icon        string   `json:"icon,omitempty"`
	URLs        URLs     `json:"urls,omitzero"`
	Tags        []string `json:"tags,omitempty"`
}

// URLs link to the plugin's project.
type URLs struct {
	Homepage      string `json:"homepage,omitempty"`
	Repository    string `json:"repository,omitempty"`
	Documentation string `json:"documentation,omitempty"`
}

// Spec is what the plugin needs from, and offers to, the platform.
type Spec struct {
	Permissions Permissions `json:"permissions,omitzero"`
	Menu        Menu        `json:"menu,omitzero"`
	// CRDs are the <plural>.<group> names of the CustomResourceDefinitions
	// the plugin owns.
	CRDs []string `json:"crds,omitempty"`
	// CustomComponents maps a resource kind to the console files that
	// replace the generic views, relative to the plugin's console/ folder.
	CustomComponents map[string]CustomComponents `json:"customComponents,omitempty"`
	// UIHints tell the generic console views how to present a resource,
	// keyed by <plural>.<group>.
	UIHints map[string]UIHint `json:"uiHints,omitempty"`
	// AllowedResources is exactly what the plugin's console pages may call
	// through the platform; anything else is refused.
	AllowedResources []AllowedResource `json:"allowedResources,omitempty"`
	// ConfigSchema declares the FUNP_<NAME> settings an installer may set.
	ConfigSchema []ConfigField `json:"configSchema,omitempty"`
	// Image is injected at publish time, never authored, and is always
	// pinned by digest so the definition hash pins the code that runs.
	Image string `json:"image,omitempty"`
	// ImagePullPolicy is a Kubernetes pull policy, or empty for the
	// cluster's default.
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`
}

// Permissions are granted to the plugin's ServiceAccount beyond the admin
// role it always holds in its own namespace.
type Permissions struct {
	// Capabilities are platform capabilities such as "internet_access".
	Capabilities []string `json:"capabilities,omitempty"`
	// RBAC is copied verbatim into the plugin's ClusterRole.
	RBAC []rbacv1.PolicyRule `json:"rbac,omitempty"`
}

// Menu places the plugin's resources in the console navigation.
type Menu struct {
	Organization []MenuEntry `json:"organization,omitempty"`
	Project      []MenuEntry `json:"project,omitempty"`
}

// MenuEntry is one navigation entry for a resource.
type MenuEntry struct {
	// CRD is the resource's <plural>.<group>.
	CRD string `json:"crd"`
	// List and Detail enable the list and detail pages.
	List   bool   `json:"list,omitempty"`
	Detail bool   `json:"detail,omitempty"`
	Icon   string `json:"icon,omitempty"`
	Label  string `json:"label,omitempty"`
}

// CustomComponents are console files replacing the generic views of a kind.
type CustomComponents struct {
	List   string `json:"list,omitempty"`
	Detail string `json:"detail,omitempty"`
	Create string `json:"create,omitempty"`
	Edit   string `json:"edit,omitempty"`
}

// UIHint shapes the generic console views of one resource.
type UIHint struct {
	StatusMapping *StatusMapping `json:"statusMapping,omitempty"`
	FormGroups    []FormGroup    `json:"formGroups,omitempty"`
}

// StatusMapping turns the value at JSONPath into a badge.
type StatusMapping struct {
	JSONPath string                 `json:"jsonPath"`
	Values   map[string]StatusBadge `json:"values,omitempty"`
	// Default is shown for values not in Values.
	Default *StatusBadge `json:"default,omitempty"`
}

// StatusBadge is how one status value is shown.
type StatusBadge struct {
	Badge Badge  `json:"badge"`
	Label string `json:"label,omitempty"`
}

// Badge is a badge colour the console knows.
type Badge string

// The badges the console renders.
const (
	BadgeSuccess Badge = "success"
	BadgeWarning Badge = "warning"
	BadgeDanger  Badge = "danger"
	BadgeInfo    Badge = "info"
	BadgeNeutral Badge = "neutral"
)

// FormGroup groups fields of a create or edit form under a heading.
type FormGroup struct {
	Name   string   `json:"name"`
	Fields []string `json:"fields,omitempty"`
}

// AllowedResource is one Kubernetes resource the console pages may call,
// with the verbs they may use on it.
type AllowedResource struct {
	Group    string   `json:"group"`
	Version  string   `json:"version"`
	Resource string   `json:"resource"`
	Verbs    []string `json:"verbs"`
}

// ConfigField declares one FUNP_<Name> setting.
type ConfigField struct {
	// Name is the key without the FUNP_ prefix, in upper snake case so it
	// survives as an environment variable name.
	Name        string     `json:"name"`
	DisplayName string     `json:"displayName,omitempty"`
	Type        ConfigType `json:"type"`
	// Default is the value used when the installer sets none. Like every
	// value it is a string: the platform passes configuration as
	// environment variables.
	Default     string `json:"default,omitempty"`
	Description string `json:"description,omitempty"`
	// Advanced fields are collapsed in the install form.
	Advanced bool `json:"advanced,omitempty"`
	// Values are the choices of an enum, and only of an enum.
	Values []string `json:"values,omitempty"`
}

// ConfigType is the type of a configuration value.
type ConfigType string

// The configuration types.
const (
	ConfigInt    ConfigType = "int"
	ConfigBool   ConfigType = "bool"
	ConfigString ConfigType = "string"
	ConfigEnum   ConfigType = "enum"
)

// VersionPrefix starts a definition's metadata.version and is dropped in
// the version the registry publishes it under.
const VersionPrefix = "v"

// PublishedVersion is the version the registry publishes this definition
// under, and so what a PluginInstallation's pluginVersion must say:
// metadata.version without its "v" ("v0.3.0" is published as "0.3.0").
// It is empty when the definition states no version.
func (m *Metadata) PublishedVersion() string {
	return strings.TrimPrefix(m.Version, VersionPrefix)
}
