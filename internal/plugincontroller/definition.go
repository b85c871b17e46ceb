package plugincontroller

import (
	"fmt"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// Reasons a definition is refused. Invalid and Mismatch are final for the
// installation's current spec: the bytes behind a hash never change, so
// only an edit of the installation can make them acceptable. HashMismatch
// is about what the source served, which the source may still correct.
const (
	ReasonDefinitionHashMismatch = "DefinitionHashMismatch"
	ReasonDefinitionInvalid      = "DefinitionInvalid"
	ReasonDefinitionMismatch     = "DefinitionMismatch"
)

// DefinitionVerdict is whether a fetched definition may run: Definition on
// success, otherwise Reason and Message say why not.
type DefinitionVerdict struct {
	Definition *definition.PluginDefinition
	Reason     string
	Message    string
}

// definitionCheck is one rule a fetched definition must pass. It sees the
// raw bytes and, once parsed, the definition; it returns a reason and
// message when the rule fails.
type definitionCheck func(ref pluginsv1.DefinitionRef, raw []byte, def *definition.PluginDefinition) (reason, message string, failed bool)

// CheckDefinition decides whether raw, fetched for ref, may run. The hash
// is checked first and on the bytes, before anything is parsed: the hash is
// what the installer approved, so unapproved bytes are not even read.
func CheckDefinition(ref pluginsv1.DefinitionRef, raw []byte) DefinitionVerdict {
	if got := definition.Hash(raw); got != ref.DefinitionHash {
		return DefinitionVerdict{
			Reason: ReasonDefinitionHashMismatch,
			Message: fmt.Sprintf("definition %s/%s %s hashes to %s, not the approved %s; nothing is deployed",
				ref.OrganizationName, ref.PluginName, ref.PluginVersion, got, ref.DefinitionHash),
		}
	}
	// A published definition carries its digest-pinned image; without one
	// there is nothing to run.
	def, err := definition.ParseDefinition(raw, definition.RequireImage())
	if err != nil {
		return DefinitionVerdict{Reason: ReasonDefinitionInvalid, Message: err.Error()}
	}
	for _, check := range []definitionCheck{namesThePlugin, hasTheVersion} {
		if reason, message, failed := check(ref, raw, def); failed {
			return DefinitionVerdict{Reason: reason, Message: message}
		}
	}
	return DefinitionVerdict{Definition: def}
}

// namesThePlugin: a registry that serves another plugin's definition under
// this name is misconfigured, and running it would give it this plugin's
// namespace and identity.
func namesThePlugin(ref pluginsv1.DefinitionRef, _ []byte, def *definition.PluginDefinition) (string, string, bool) {
	if def.Metadata.Name != ref.PluginName {
		return ReasonDefinitionMismatch, fmt.Sprintf("the definition is for plugin %q, not %q", def.Metadata.Name, ref.PluginName), true
	}
	return "", "", false
}

// hasTheVersion: a definition that states a version must state the one
// that was asked for. The definition carries the release tag ("v0.3.0"),
// the installation the published version without the "v" ("0.3.0").
func hasTheVersion(ref pluginsv1.DefinitionRef, _ []byte, def *definition.PluginDefinition) (string, string, bool) {
	if v := def.Metadata.PublishedVersion(); v != "" && v != ref.PluginVersion {
		return ReasonDefinitionMismatch, fmt.Sprintf("the definition is version %q (published as %q), not %q",
			def.Metadata.Version, v, ref.PluginVersion), true
	}
	return "", "", false
}
