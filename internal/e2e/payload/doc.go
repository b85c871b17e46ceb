// Package payload is the data just e2e writes into real Ceph before it
// moves copies around and reads back after: objects whose bytes follow
// from their index alone, so the writer and every later reader (the e2e
// itself through rados, a workload pod through S3) agree on each object's
// checksum without passing data between them.
package payload
