// Package retirement retires a disk: a DiskRetirement takes one OSD out of
// Ceph in Ceph's own order, asks Ceph before each irreversible step, and
// can abort back to where it started.
//
// Where each part lives:
//
//   - The facts. FindOSD and FindOSDByLabel (retirement.go): which of
//     Rook's OSD Deployments runs the disk; QueueOf: one retirement at a
//     time, oldest first; Preflight: what the consumers need (enough hosts
//     or OSDs per device class, a second copy); WipeInstructions.
//   - Ceph's own checks. CephChecks (ceph.go), on the facts a Ceph Job's
//     probe read (internal/cephjob): health, pools, capacity, PGs per OSD.
//   - The step machine. Next (step.go) names the status to write and then
//     the one action to take: status first, so that a crash between any
//     two steps decides the same again; every step a Ceph Job answered is
//     read from the status, never from memory.
//   - The reconciler. Reconciler (controller.go) gathers the facts, writes
//     the status Next names and takes its action; it reads the rest of the
//     plugin through Cluster (the CephCluster's device list and the
//     consumers' needs), which the plugin implements.
//   - Half-done retirements. SweepOSD and Sweeper (sweep.go) give back an
//     OSD a deleted retirement left stopped or out.
//   - The finalizer guard. FinalizerGuardPolicy and ApplyFinalizerGuard
//     (finalizerguard.go): only the plugin may take a retirement's
//     finalizer off.
//
// It imports api/v1alpha1, internal/cephjob, internal/rook,
// internal/message and internal/patch, never the plugin's root or the
// upgrade.
package retirement
