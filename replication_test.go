package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComputeReplication(t *testing.T) {
	three, two, one := int32(3), int32(2), int32(1)
	cases := []struct {
		name      string
		requested *int32
		nodes     int
		want      Replication
	}{
		{
			name:  "auto on two nodes gives two replicas across hosts",
			nodes: 2,
			want:  Replication{Size: 2, FailureDomain: "host", RequireSafeReplicaSize: true},
		},
		{
			name:  "auto on five nodes is capped at three",
			nodes: 5,
			want:  Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true},
		},
		{
			name:  "auto on a single node is one replica on osd with the safety check off",
			nodes: 1,
			want:  Replication{Size: 1, FailureDomain: "osd", RequireSafeReplicaSize: false},
		},
		{
			name:      "three requested on two nodes clamps to two with the reason",
			requested: &three, nodes: 2,
			want: Replication{Size: 2, FailureDomain: "host", RequireSafeReplicaSize: true,
				Message: "3 replicas requested but disks come from only 2 nodes; using 2"},
		},
		{
			name:      "two requested on one node clamps to one, osd, size 1 allowed",
			requested: &two, nodes: 1,
			want: Replication{Size: 1, FailureDomain: "osd", RequireSafeReplicaSize: false,
				Message: "2 replicas requested but disks come from only 1 node; using 1"},
		},
		{
			name:      "one requested on three nodes stays one, osd domain, safety check off",
			requested: &one, nodes: 3,
			want: Replication{Size: 1, FailureDomain: "osd", RequireSafeReplicaSize: false},
		},
		{
			name:      "three requested on four nodes is honoured without a message",
			requested: &three, nodes: 4,
			want: Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true},
		},
		{
			name:      "an out-of-range request the CRD should have stopped is capped at three",
			requested: ptrTo(int32(5)), nodes: 4,
			want: Replication{Size: 3, FailureDomain: "host", RequireSafeReplicaSize: true,
				Message: "5 replicas requested; using the maximum of 3"},
		},
		{
			name:      "zero requested is raised to one",
			requested: ptrTo(int32(0)), nodes: 2,
			want: Replication{Size: 1, FailureDomain: "osd", RequireSafeReplicaSize: false,
				Message: "0 replicas requested; using 1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ComputeReplication(tc.requested, tc.nodes)
			require.NoError(t, err)
			tc.want.Nodes = tc.nodes // what it was sized against
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAutomaticIsWhatAnAbsentRequestGivesOnTheSameNodes(t *testing.T) {
	for _, requested := range []*int32{nil, ptrTo(int32(1)), ptrTo(int32(2)), ptrTo(int32(3))} {
		for nodes := 1; nodes <= 4; nodes++ {
			asked := mustReplication(t, requested, nodes)
			assert.Equal(t, mustReplication(t, nil, nodes), asked.Automatic(), "requested %v on %d nodes", requested, nodes)
		}
	}
}

func TestComputeReplicationWithoutDisksIsAnError(t *testing.T) {
	for _, requested := range []*int32{nil, ptrTo(int32(2))} {
		_, err := ComputeReplication(requested, 0)
		require.ErrorIs(t, err, ErrNoDisks)
		assert.EqualError(t, err, "no DiskPool contributes disks")
	}
}

func TestDescribeReplicationChange(t *testing.T) {
	cases := []struct {
		name        string
		oldSize     int32
		oldDomain   string
		next        Replication
		specChanged bool
		wantReason  string
		want        string
	}{
		{name: "first sizing is not a change", oldSize: 0, next: Replication{Size: 3, FailureDomain: "host"}},
		{name: "unchanged sizing says nothing", oldSize: 2, oldDomain: "host", next: Replication{Size: 2, FailureDomain: "host"}},
		{
			name: "a node joining grows two to three", oldSize: 2, oldDomain: "host",
			next:       Replication{Size: 3, FailureDomain: "host"},
			wantReason: ReasonNodesJoined,
			want:       "replication changes from 2 (host) to 3 (host): Ceph re-replicates every byte in the pool",
		},
		{
			name: "osd to host with growth", oldSize: 1, oldDomain: "osd",
			next:       Replication{Size: 2, FailureDomain: "host"},
			wantReason: ReasonNodesJoined,
			want: "replication changes from 1 (osd) to 2 (host): Ceph re-replicates every byte in the pool, " +
				"and Rook gives it a new CRUSH rule that moves the copies onto separate hosts",
		},
		{
			name: "nodes leaving shrink it, and that is said too", oldSize: 3, oldDomain: "host",
			next:       Replication{Size: 2, FailureDomain: "host"},
			wantReason: ReasonNodesLeft,
			want:       "replication changes from 3 (host) to 2 (host): Ceph drops the extra copies",
		},
		{
			name: "down to one node narrows to osd", oldSize: 2, oldDomain: "host",
			next:       Replication{Size: 1, FailureDomain: "osd"},
			wantReason: ReasonNodesLeft,
			want: "replication changes from 2 (host) to 1 (osd): Ceph drops the extra copies, " +
				"and Rook gives it a new CRUSH rule that lets copies share a host",
		},
		{
			name: "an edited replicas field is the spec's doing, not the nodes'", oldSize: 2, oldDomain: "host",
			next: Replication{Size: 3, FailureDomain: "host"}, specChanged: true,
			wantReason: ReasonSpecChanged,
			want:       "replication changes from 2 (host) to 3 (host): Ceph re-replicates every byte in the pool",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := DescribeReplicationChange(Placed{Size: tc.oldSize, FailureDomain: tc.oldDomain}, samePlacement(tc.next), tc.specChanged)
			assert.Equal(t, tc.wantReason, reason)
			assert.Equal(t, tc.want, msg)
		})
	}
}
