// Package simulate stands in for what cannot run without real nodes: Rook's
// discovery daemon (it publishes discovery ConfigMaps for simulated nodes)
// and Rook's operator (it marks the objects the plugin derives Ready and
// fills the CephCluster's capacity). It exists for `just run`, benchmarks
// and tests, never for the plugin's own code path, and every object it
// writes carries the SimulatedLabel.
package simulate
