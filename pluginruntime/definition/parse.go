// Package definition reads and validates a plugin's definition.yaml, the
// document the platform pins by hash when a plugin is published and that the
// plugin controller turns into RBAC, a Deployment and console pages.
//
// Parsing is strict, because a typo in a definition is otherwise silently a
// missing permission or a missing menu entry:
//
//	//go:embed definition.yaml
//	var definitionYAML []byte
//
//	var def = definition.MustParseDefinition(definitionYAML)
//
// The platform publishes a definition with its image injected; consumers of
// published definitions (the plugin controller, the catalogue) parse with
// RequireImage so an unpinned definition never runs:
//
//	def, err := definition.ParseDefinition(raw, definition.RequireImage())
//	if err != nil { ... }
//	if definition.Hash(raw) != installation.Spec.DefinitionRef.DefinitionHash { ... }
package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"sigs.k8s.io/yaml"
)

// ParseOption changes what ParseDefinition accepts.
type ParseOption func(*parseOptions)

type parseOptions struct {
	requireImage bool
}

// RequireImage makes spec.image mandatory, as it is in a published
// definition. Without it, an authored definition.yaml (which has no image
// yet) is valid; an image that is present must be digest-pinned either way.
func RequireImage() ParseOption {
	return func(o *parseOptions) { o.requireImage = true }
}

// ParseDefinition decodes a definition.yaml and validates it. Unknown or
// duplicated fields are errors, as are a wrong apiVersion or kind, a missing
// metadata.name and an image referenced by a mutable tag.
func ParseDefinition(data []byte, opts ...ParseOption) (*PluginDefinition, error) {
	var def PluginDefinition
	if err := yaml.UnmarshalStrict(data, &def); err != nil {
		return nil, fmt.Errorf("parse plugin definition: %w", err)
	}
	if err := def.Validate(opts...); err != nil {
		return nil, err
	}
	return &def, nil
}

// MustParseDefinition is ParseDefinition for definitions compiled into the
// plugin binary, where an invalid definition is a programming error. It
// panics on error.
func MustParseDefinition(data []byte, opts ...ParseOption) *PluginDefinition {
	def, err := ParseDefinition(data, opts...)
	if err != nil {
		panic(err)
	}
	return def
}

// Hash pins a definition by content: "sha256:" and the hex SHA-256 of the
// raw bytes exactly as published. It hashes bytes, not the parsed
// structure, so that any edit — even reformatting — is a new definition the
// installer has to approve again.
func Hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
