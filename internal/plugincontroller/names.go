package plugincontroller

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
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

// hashChars is how many characters of a shortened name's hash are kept:
// 20 of base32, 100 bits. The hash is what keeps two long names apart
// that share the readable beginning, and a publisher chooses its plugin's
// name: taking another installation's namespace before it (which then
// fails with ObjectConflict) needs the same 35-character beginning and a
// second preimage of the hash, 2^100 SHA-256 computations. The earlier
// 10 hex digits, 40 bits, took a GPU minutes.
const hashChars = 20

// nameHash writes hashes in lowercase base32 (RFC 4648's alphabet): only
// letters and digits, so valid anywhere in a DNS label, at 5 bits a
// character where hex gives 4.
var nameHash = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NamespaceName is the namespace of a new installation: "plugin-<name>".
// Installation names reach 128 characters, beyond a namespace's 63, so a
// long one keeps its readable beginning and ends in a hash of the full
// name, which keeps it unique. Use InstallationNamespace for an existing
// installation.
func NamespaceName(installation string) string {
	return shorten("plugin-"+installation, maxNameLength)
}

// InstallationNamespace is where an installation's plugin runs. It is
// NamespaceName, except for an installation that already runs where an
// earlier controller put it (status.namespace says so) under the 40-bit
// scheme: moving it would start a second copy of the plugin in a new
// namespace, leave the first one running, and hand the cluster-wide
// permissions from one to the other. Only that one other derivation of the
// installation's own name is honoured, so whoever can write the status
// cannot point the controller at any other namespace. Names of up to 56
// characters are the same under both schemes.
func InstallationNamespace(inst *pluginsv1.PluginInstallation) string {
	if legacy := legacyNamespaceName(inst.Name); inst.Status.Namespace == legacy {
		return legacy
	}
	return NamespaceName(inst.Name)
}

// legacyNamespaceName is NamespaceName before hashChars grew: the name's
// beginning and ten hex digits (40 bits) of its SHA-256.
func legacyNamespaceName(installation string) string {
	name := "plugin-" + installation
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return joinHash(name, maxNameLength, hex.EncodeToString(sum[:])[:10])
}

// ScopeClusterRoleName names the ClusterRole holding the definition's
// permissions.rbac and its ClusterRoleBinding. Cluster-scoped RBAC names may
// be long, so it is never shortened.
func ScopeClusterRoleName(installation string) string {
	return "plugin-" + installation + "-scope"
}

// LabelValue is the installation name made a valid label value. Labels
// select only within the installation's own namespace, so a collision here
// would be harmless; it shares shorten with the namespace all the same, so
// there is one naming scheme to reason about.
func LabelValue(installation string) string {
	return shorten(installation, maxNameLength)
}

// shorten returns name when it fits in limit, and otherwise as much of its
// beginning as fits before "-" and hashChars of its SHA-256. The result
// depends on name alone, so every reconcile derives the same one.
func shorten(name string, limit int) string {
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return joinHash(name, limit, nameHash.EncodeToString(sum[:])[:hashChars])
}

// joinHash is name's beginning, "-" and hash, in limit characters.
func joinHash(name string, limit int, hash string) string {
	// A trailing hyphen would make "--" before the hash; harmless, but
	// it reads like the organization separator.
	prefix := strings.TrimRight(name[:limit-len(hash)-1], "-")
	return prefix + "-" + hash
}
