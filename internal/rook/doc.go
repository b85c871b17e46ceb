// Package rook is what Rook publishes, as the plugin reads it: the names
// Rook's operator and chart put on the objects it makes (names.go), an OSD
// as Rook's own reader takes it from its Deployment (osd.go), and why Rook
// last failed to reconcile an object, from the Events it writes
// (failure.go).
//
// Every name here is Rook's, not the plugin's, and cites where Rook sets
// it; docs/rook-contract.md says what Rook does with each field the plugin
// writes. The package imports Kubernetes' API types only, so that
// everything that reads Rook's objects (the retirement, the upgrade, the
// Ceph Job protocol, the simulation and the e2e) reads them one way.
package rook
