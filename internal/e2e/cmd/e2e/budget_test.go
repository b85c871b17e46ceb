package main

import (
	"encoding/json"
	"testing"
)

// The pools as `ceph osd pool ls detail -f json` lists them (Ceph 18.2.7,
// fields trimmed): a CephFS metadata pool carries the options `fs new`
// set on it.
func TestCreatedPGs(t *testing.T) {
	tests := []struct {
		name, pool string
		want       int
	}{
		{"metadata pool shrunk to its pg_num_min counts as created",
			`{"pool_name":"cephfs-e2e-metadata","size":1,"pg_num_target":16,"options":{"pg_autoscale_bias":4,"pg_num_min":16,"recovery_priority":5},"application_metadata":{"cephfs":{"metadata":"cephfs-e2e"}}}`, 32},
		{"metadata pool still at its creation count",
			`{"pool_name":"cephfs-e2e-metadata","size":1,"pg_num_target":32,"options":{"pg_autoscale_bias":4,"pg_num_min":16},"application_metadata":{"cephfs":{"metadata":"cephfs-e2e"}}}`, 32},
		{"metadata pool grown past its creation count",
			`{"pool_name":"cephfs-e2e-metadata","size":1,"pg_num_target":64,"options":{"pg_num_min":16},"application_metadata":{"cephfs":{"metadata":"cephfs-e2e"}}}`, 64},
		{"CephFS data pool is taken as Ceph holds it",
			`{"pool_name":"cephfs-e2e-data","size":1,"pg_num_target":16,"options":{"pg_num_min":16},"application_metadata":{"cephfs":{"data":"cephfs-e2e"}}}`, 16},
		{"RGW metadata pool at its pg_num_min is as made",
			`{"pool_name":"cephobj-e2e.rgw.meta","size":1,"pg_num_target":8,"options":{"pg_num_min":8},"application_metadata":{"rgw":{}}}`, 8},
		{"block pool without options",
			`{"pool_name":"ceph-e2e","size":3,"pg_num_target":32,"options":{},"application_metadata":{"rbd":{}}}`, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p poolDetail
			if err := json.Unmarshal([]byte(tt.pool), &p); err != nil {
				t.Fatal(err)
			}
			if got := p.createdPGs(); got != tt.want {
				t.Errorf("createdPGs() = %d, want %d", got, tt.want)
			}
		})
	}
}
