// Package cephjob is the plugin's one way to Ceph: a Job in the cluster
// namespace that runs one verb with the Rook operator's image and Rook's
// admin credentials, and answers in its container's termination message.
//
// Where each part lives:
//
//   - The verbs and the Job. Verb and its constants, Request, Name and
//     ParseName (one Job per owner, verb and sequence), Render (job.go):
//     the Job as Rook's own OSD removal Job is built, node verbs privileged
//     on the disk's node; the shell of each verb, whose inputs come from
//     the environment and never from the script.
//   - The answer. Answer and Read (job.go): a finished Job's verb and
//     message; a failed verb is an answer too, never a success. LabelUUID
//     and ParsePGStates read the identify and pgs answers.
//   - The I/O. Get, Delete and OperatorImage (client.go): read a Job and
//     its answer, delete one once read, the image every Job runs.
//   - Ceph's facts. Facts and ParseFacts (facts.go): what the probe
//     (probe.py, embedded) reads of one OSD and the cluster around it.
//
// Every verb is idempotent and every step re-reads Ceph before it acts, so
// a Job that ran twice, or whose answer was lost, changes nothing. The
// retirement (internal/retirement) and the upgrade (internal/upgrade) use
// it; it imports only internal/rook and Kubernetes' client.
package cephjob
