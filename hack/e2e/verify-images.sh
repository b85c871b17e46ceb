#!/usr/bin/env bash
# Checks the e2e image archives for real: starts a private containerd (no
# systemd: by hand, everything under $E2E_CTRD, default /tmp/e2e-containerd),
# imports the archives built by `go run ./internal/e2e/cmd/images` into the
# k8s.io namespace, runs the Ceph, Rook and pause images with `ctr run`, then
# stops containerd (by PID) and removes the folder. Needs root and
# `apt-get install -y containerd runc` (done here when missing).
#
#   hack/e2e/verify-images.sh            # build (cached) + verify
#   KEEP=1 hack/e2e/verify-images.sh     # leave containerd running
#   MGR_CHECK=0 hack/e2e/verify-images.sh  # skip the mon + mgr check (~40 s)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=containerd.sh
source hack/e2e/containerd.sh
E2E_CTRD="${E2E_CTRD:-/tmp/e2e-containerd}"
SOCK="$E2E_CTRD/containerd.sock"
log() { echo "hack/e2e/verify-images: $*" >&2; }
t0=$SECONDS
lap() { log "$1: $((SECONDS - t0)) s"; t0=$SECONDS; }

if ! command -v containerd >/dev/null || ! command -v runc >/dev/null; then
	log "installing containerd and runc from Debian"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q containerd runc >/dev/null
	lap "apt-get install"
fi

list=$(nice -n 10 go run ./internal/e2e/cmd/images)
mapfile -t lines <<<"$list"
lap "images (build or cache)"

if [[ -e "$E2E_CTRD/containerd.pid" ]] && kill -0 "$(cat "$E2E_CTRD/containerd.pid")" 2>/dev/null; then
	log "a containerd from an earlier run is still up (PID $(cat "$E2E_CTRD/containerd.pid")); stop it first"
	exit 1
fi
rm -rf "$E2E_CTRD"
mkdir -p "$E2E_CTRD"/{root,state,cni,opt}
containerd_config "$E2E_CTRD" "$E2E_CTRD/cni" >"$E2E_CTRD/config.toml"

# `ctr run` puts tasks in /sys/fs/cgroup/<controller>/k8s.io/<id> (cgroup
# v1); remember which parents exist so that cleanup removes only ours.
new_cgroups=()
for c in /sys/fs/cgroup/*/; do [[ -d "${c}k8s.io" ]] || new_cgroups+=("${c}k8s.io"); done

containerd --config "$E2E_CTRD/config.toml" >"$E2E_CTRD/containerd.log" 2>&1 &
echo $! >"$E2E_CTRD/containerd.pid"
cleanup() {
	[[ -n "${KEEP:-}" ]] && { log "KEEP set: containerd PID $(cat "$E2E_CTRD/containerd.pid"), socket $SOCK"; return; }
	for id in e2e-ceph e2e-rook e2e-pause e2e-mgr; do
		ctr --address "$SOCK" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
		ctr --address "$SOCK" -n k8s.io containers rm "$id" >/dev/null 2>&1 || true
	done
	pid=$(cat "$E2E_CTRD/containerd.pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	# overlay snapshots can stay mounted when a task was killed hard
	grep -o " $E2E_CTRD/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$E2E_CTRD"
	for c in "${new_cgroups[@]}"; do [[ -d "$c" ]] && rmdir "$c" 2>/dev/null || true; done
	log "containerd stopped, $E2E_CTRD and its cgroups removed"
}
trap cleanup EXIT
for _ in $(seq 100); do [[ -S "$SOCK" ]] && break; sleep 0.1; done
ctr --address "$SOCK" version >/dev/null
lap "containerd up"

for l in "${lines[@]}"; do
	archive="${l%%$'\t'*}"
	log "importing $archive ($(du -h "$archive" | cut -f1))"
	ctr --address "$SOCK" -n k8s.io images import "$archive" >&2
done
lap "import"
log "containerd root after import: $(du -sh "$E2E_CTRD/root" | cut -f1)"
ctr --address "$SOCK" -n k8s.io images ls >&2

run() { ctr --address "$SOCK" -n k8s.io run --rm "$@"; }
out=$(run quay.io/ceph/ceph:v18.2.7 e2e-ceph sh -c 'ceph --version; id ceph; id rook; stat -c "%n %u:%g %a" /etc/ceph /var/lib/rook /var/lib/ceph')
echo "$out"
grep -q 'ceph version 18\.2\.7 .* reef (stable)' <<<"$out" || { log "FAIL: ceph --version"; exit 1; }
grep -q 'uid=167(ceph) gid=167(ceph)' <<<"$out" || { log "FAIL: id ceph"; exit 1; }
out=$(run docker.io/rook/ceph:v1.18.11 e2e-rook sh -c 'id; /usr/local/bin/rook version; ls /usr/local/bin; touch /var/lib/rook/x /etc/ceph/x && echo writable')
echo "$out"
grep -q 'uid=2016(rook) gid=2016(rook)' <<<"$out" || { log "FAIL: rook user"; exit 1; }
grep -q 'rook: v1.18.11' <<<"$out" || { log "FAIL: rook version"; exit 1; }
grep -q '^writable$' <<<"$out" || { log "FAIL: /var/lib/rook, /etc/ceph not writable by 2016"; exit 1; }
# pause: must keep running until signalled, then exit 0.
ctr --address "$SOCK" -n k8s.io run -d registry.k8s.io/pause:3.10 e2e-pause >/dev/null
sleep 1
ctr --address "$SOCK" -n k8s.io tasks ls | grep -q 'e2e-pause.*RUNNING' || { log "FAIL: pause not running"; exit 1; }
ctr --address "$SOCK" -n k8s.io tasks kill -s TERM e2e-pause
for _ in $(seq 50); do ctr --address "$SOCK" -n k8s.io tasks ls | grep -q 'e2e-pause.*STOPPED' && break; sleep 0.1; done
ctr --address "$SOCK" -n k8s.io tasks ls | grep -q 'e2e-pause.*STOPPED' || { log "FAIL: pause ignored SIGTERM"; exit 1; }
ctr --address "$SOCK" -n k8s.io tasks rm e2e-pause >/dev/null
ctr --address "$SOCK" -n k8s.io containers rm e2e-pause
lap "ctr run checks"
# mon + mgr in the Ceph image, on the container's own loopback.
if [[ "${MGR_CHECK:-1}" != 0 ]]; then
	run --mount "type=bind,src=$PWD/hack/e2e/mgr-smoke.sh,dst=/e2e/mgr-smoke.sh,options=rbind:ro" \
		quay.io/ceph/ceph:v18.2.7 e2e-mgr bash /e2e/mgr-smoke.sh
	lap "mon + mgr check"
fi
log "OK"
