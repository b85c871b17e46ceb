package plugincontroller

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// The names of the objects an installation owns. Every namespaced object is
// called "plugin": the namespace already tells installations apart, and a
// fixed name lets the plugin find its own Service and ServiceAccount.
const (
	// ObjectName names the ServiceAccount, RoleBinding, Deployment, Service
	// and container of every installation.
	ObjectName = "plugin"
	// PluginPort serves the probes, the metadata API and the console.
	PluginPort = 8080
	// PluginPortName names the container and Service port.
	PluginPortName = "http"
	// NamespaceAdminRole is the built-in role the plugin holds in its own
	// namespace.
	NamespaceAdminRole = "admin"
)

// Labels and annotations the controller sets.
const (
	// LabelManagedBy marks every object this controller created.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is LabelManagedBy's value.
	ManagedByValue = "fundament-plugin-controller"
	// LabelName is the pods' app label.
	LabelName = "app.kubernetes.io/name"
	// LabelInstallation names the installation an object belongs to, made
	// label-safe by LabelValue.
	LabelInstallation = "plugins.fundament.io/installation"
	// AnnotationConfigHash on the pod template changes whenever the
	// definition or the config does, so either rolls the Deployment.
	AnnotationConfigHash = "plugins.fundament.io/config-hash"
	// Finalizer holds the installation until the plugin was asked to
	// uninstall and its cluster-scoped objects are gone.
	Finalizer = "plugins.fundament.io/finalizer"
)

// maxNameLength is the limit of a namespace name and of a label value
// (both are DNS labels, RFC 1123).
const maxNameLength = 63

// NamespaceName is the namespace of an installation: "plugin-<name>".
// Installation names reach 128 characters, beyond a namespace's 63, so a
// long one keeps its readable beginning and ends in a hash of the full
// name, which keeps it unique.
func NamespaceName(installation string) string {
	return shorten("plugin-"+installation, maxNameLength)
}

// ScopeClusterRoleName names the ClusterRole holding the definition's
// permissions.rbac and its ClusterRoleBinding. Cluster-scoped RBAC names may
// be long, so it is never shortened.
func ScopeClusterRoleName(installation string) string {
	return "plugin-" + installation + "-scope"
}

// LabelValue is the installation name made a valid label value.
func LabelValue(installation string) string {
	return shorten(installation, maxNameLength)
}

// shorten returns name when it fits in limit, and otherwise as much of its
// beginning as fits before "-" and ten hex digits of its SHA-256.
func shorten(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:10]
	// A trailing hyphen would make "--" before the hash; harmless, but
	// it reads like the organization separator.
	prefix := strings.TrimRight(name[:limit-len(suffix)-1], "-")
	return prefix + "-" + suffix
}
