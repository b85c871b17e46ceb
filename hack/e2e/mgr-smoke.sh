#!/usr/bin/env bash
# Runs INSIDE the Ceph image (hack/e2e/verify-images.sh with MGR_CHECK=1
# bind-mounts it): bootstraps a one-mon cluster on 127.0.0.1 in the
# container's own network namespace, starts a mgr as user ceph, and checks
# that the mgr's always-on modules load (no MGR_MODULE_DEPENDENCY /
# MGR_MODULE_ERROR: the bcrypt and NOTIFY_TYPES fixes of ceph-rootfs.sh).
set -euo pipefail
log() { echo "mgr-smoke: $*" >&2; }

fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
cat >/etc/ceph/ceph.conf <<EOF
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:3300
mon_initial_members = a
auth_allow_insecure_global_id_reclaim = false
mon_allow_pool_size_one = true
osd_pool_default_size = 1
mon_warn_on_pool_no_redundancy = false
EOF
ceph-authtool --create-keyring /tmp/mon.keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool --create-keyring /etc/ceph/ceph.client.admin.keyring --gen-key -n client.admin \
	--cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool /tmp/mon.keyring --import-keyring /etc/ceph/ceph.client.admin.keyring >/dev/null
monmaptool --create --addv a '[v2:127.0.0.1:3300]' --fsid "$fsid" /tmp/monmap >/dev/null
chown ceph:ceph /tmp/mon.keyring /tmp/monmap
mkdir -p /var/lib/ceph/mon/ceph-a /var/lib/ceph/mgr/ceph-x /var/log/ceph /run/ceph
chown -R ceph:ceph /var/lib/ceph /var/log/ceph /run/ceph
ceph-mon --mkfs -i a --monmap /tmp/monmap --keyring /tmp/mon.keyring --setuser ceph --setgroup ceph
ceph-mon -i a --setuser ceph --setgroup ceph
for _ in $(seq 30); do ceph -s --connect-timeout 2 >/dev/null 2>&1 && break; sleep 1; done
log "mon up: $(ceph mon stat)"
ceph auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' >/var/lib/ceph/mgr/ceph-x/keyring
chown -R ceph:ceph /var/lib/ceph/mgr
ceph-mgr -i x --setuser ceph --setgroup ceph
for _ in $(seq 60); do
	[[ "$(ceph mgr stat -f json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin).get("available"))')" == True ]] && break
	sleep 1
done
sleep 10 # let the modules finish loading
ceph mgr stat
ceph health detail
ceph mgr module ls 2>/dev/null | head -n 20
# A module that needs the mgr's Python modules in full (Rook runs it): enable
# and call it.
ceph mgr module enable prometheus >/dev/null 2>&1 || true
ceph fs volume ls
crashes=$(ls /var/lib/ceph/crash 2>/dev/null | grep -v '^posted$' || true)
for c in $crashes; do
	log "crash dump $c:"
	python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m.get("mgr_module"), m.get("backtrace", [""])[-1])' "/var/lib/ceph/crash/$c/meta" >&2 || true
done
if ceph health detail | grep -qE 'MGR_MODULE_(DEPENDENCY|ERROR)'; then
	log "FAIL: mgr modules did not load"
	grep -hE 'Traceback|Error|bcrypt' /var/log/ceph/ceph-mgr.x.log | head -n 20 >&2 || true
	exit 1
fi
[[ -z "$crashes" ]] || { log "FAIL: the mgr wrote crash dumps"; exit 1; }
log "OK: mgr modules loaded, no crash dumps"
