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
package plugincontroller
