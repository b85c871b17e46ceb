#!/usr/bin/env bash
# What Ceph does with placement groups past its limits, measured on a
# cluster `just e2e -nodes 1 -until ceph -keep` left up (2 OSDs, one pool
# of the plugin's). The budget (budget.go) and docs/rook-contract.md's
# budget rows rest on what it printed (Ceph 18.2.7, 2026-12-05):
#
#  1. pools of 128 PGs, size 1, each on a CRUSH rule of its own as Rook
#     makes them: does the monitor refuse one past mon_max_pg_per_osd (250)
#     per OSD, and at what count do the OSDs withhold PGs
#     (osd_max_pg_per_osd_hard_ratio)? Answer: never refused; TOO_MANY_PGS
#     past 250; withheld at 750 on an OSD, those PGs inactive.
#  2. the control: the same check on a shared rule refuses (ERANGE).
#  3. the autoscaler: target_size_ratio 1 on the plugin's pool grows it.
#
# Everything it makes it removes; the pool's ratio is reset (the autoscaler
# then merges it back to 32 PGs, which takes minutes). Not run by CI: it
# takes the cluster past its limits on purpose.
set -uo pipefail
K=${KUBECTL:-$HOME/.cache/ceph-rook/envtest/k8s-v1.37.2-etcd-v3.7.3/kubectl}
KC=${KUBECONFIG_E2E:-/tmp/ceph-rook-e2e/admin.kubeconfig}
POOL=${POOL:-ceph-e2e}
ceph() { timeout 60 "$K" --kubeconfig "$KC" -n rook-ceph exec deploy/rook-ceph-operator -- ceph --conf=/var/lib/rook/rook-ceph/rook-ceph.config --keyring=/var/lib/rook/rook-ceph/client.admin.keyring --name=client.admin "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }
pergs() { ceph osd df -f json | json 'print(" ".join("osd.%d=%d"%(n["id"],n["pgs"]) for n in d["nodes"]))'; }
states() { ceph pg stat -f json | json 'print(", ".join("%d %s"%(s["num"],s["name"]) for s in d["pg_summary"]["num_pg_by_state"]))'; }
checks() { ceph health detail -f json | json 'print(d["status"], "; ".join(k+": "+v["summary"]["message"] for k,v in d["checks"].items()))'; }
report() { echo "PGs per OSD: $(pergs)"; echo "states: $(states)"; echo "health: $(checks)"; }

ceph version
for o in mon_max_pg_per_osd osd_max_pg_per_osd_hard_ratio mon_target_pg_per_osd osd_pool_default_pg_num; do echo "$o = $(ceph config get mon $o)"; done
report

echo "== 1. pools of 128 PGs, each on its own rule"
for i in $(seq 1 14); do
	ceph osd crush rule create-replicated pgtest-$i default osd >/dev/null
	echo "== $(date -u +%T) pgtest-$i: $(ceph osd pool create pgtest-$i 128 128 replicated pgtest-$i --size=1 --autoscale-mode=off 2>&1)"
	sleep 30
	report
done
echo "== OSD logs: withheld PGs"
for p in $("$K" --kubeconfig "$KC" -n rook-ceph get pods -l app=rook-ceph-osd -o name); do "$K" --kubeconfig "$KC" -n rook-ceph logs "$p" -c osd | grep -m3 maybe_wait_for_max_pg; done

echo "== 2. the control: 700 PGs beside a pool of 128 on a shared rule, then on a rule of its own"
ceph osd crush rule create-replicated ctl default osd >/dev/null
ceph osd crush rule create-replicated ctl2 default osd >/dev/null
ceph config set mon mon_allow_pool_delete true
for i in $(seq 1 14); do ceph osd pool rm pgtest-$i pgtest-$i --yes-i-really-really-mean-it >/dev/null; ceph osd crush rule rm pgtest-$i; done
sleep 30
ceph osd pool create ctl-a 128 128 replicated ctl --size=1 --autoscale-mode=off
echo "shared rule: $(ceph osd pool create ctl-b 700 700 replicated ctl --size=1 --autoscale-mode=off 2>&1)"
echo "own rule: $(ceph osd pool create ctl-c 700 700 replicated ctl2 --size=1 --autoscale-mode=off 2>&1)"
for p in ctl-a ctl-b ctl-c; do ceph osd pool rm $p $p --yes-i-really-really-mean-it 2>/dev/null; done
ceph osd crush rule rm ctl; ceph osd crush rule rm ctl2
ceph config set mon mon_allow_pool_delete false

echo "== 3. the autoscaler: $POOL with target_size_ratio 1"
ceph osd pool set "$POOL" target_size_ratio 1
sleep 100
ceph osd pool autoscale-status
ceph osd pool ls detail | grep "'$POOL'"
ceph osd pool set "$POOL" target_size_ratio 0
