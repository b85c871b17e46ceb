// Package plugincontroller runs published plugins in a cluster: for every
// PluginInstallation (plugins.fundament.io/v1) it resolves the pinned
// PluginDefinition, deploys the plugin into a namespace of its own with the
// permissions the definition declares, follows the plugin's phase through
// its metadata API, and asks it to uninstall before removing it.
//
// The decisions are pure functions beside their table tests: names.go
// (object names), definition.go (whether a definition may run), render.go
// (the desired objects), sync.go (whether a live object drifted and how to
// repair it) and status.go (what the installation reports). reconciler.go
// is the glue that reads, calls them and writes.
//
// A plugin's metadata API (GetStatus, RequestUninstall) answers only the
// controller. The controller signs short-lived JWTs (EdDSA, valid for a
// minute, minted per call) with an Ed25519 key it keeps in the Secret
// SigningKeySecretName of its own namespace, created on first start;
// the claims are iss and sub TokenIssuer, aud the installation's name,
// iat, nbf and exp. Every plugin's Deployment carries the variables that
// make the plugin runtime demand such a token: FUNDAMENT_TOKEN_ISSUER,
// FUNDAMENT_TOKEN_AUDIENCE (the installation, so a token for one plugin
// opens no other) and FUNDAMENT_TOKEN_PUBLIC_KEYS (the key's public half).
// tokens.go holds the claims and the rendered variables, signingkey.go the
// key's Secret; the controller needs get and create on Secrets in its
// own namespace, and nothing more of them.
package plugincontroller
