// Package upgrade carries Rook and Ceph through an in-place upgrade, one
// checked step at a time: Rook's chart first, then Ceph's image, each only
// when its preflight passes and Ceph's PGs are all active+clean.
//
// Where each part lives:
//
//   - Versions and the preflight. Rook's release lines (the Ceph each
//     supports, where an upgrade to it may start), NextStep and Preflight
//     (upgrade.go): versions, health, settled daemons, no retirement under
//     way, fit nodes, clean PGs.
//   - What is read. Observed and Gather (gather.go): the operator, the
//     CephCluster, its daemons, and, when a step is due, the retirements
//     and the daemons' nodes; read once per look.
//   - The plan. PlanFrom, dueStep and FactsFrom (plan.go) judge the next
//     step on what was read; ProgressOf says how far each roll is.
//   - The record. State, DecideState, NextRecord and Event (progress.go):
//     what the plugin reports, what the CephCluster records for the
//     console (UpgradeAnnotation), and the Event each new stage announces.
//   - The reconciler. Reconciler (controller.go) asks Ceph for its PG
//     states by a Ceph Job named on the CephCluster before it runs
//     (UpgradePGJobAnnotation), takes the step the plan allows (the Rook
//     step through the plugin's TakeRookStep), and records the roll.
//
// It imports api/v1alpha1, internal/cephjob, internal/rook,
// internal/message, internal/patch and pluginruntime; never the
// retirement, whose DiskRetirements it reads through the API types only.
package upgrade
