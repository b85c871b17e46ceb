#!/usr/bin/env bash
# Builds, once, a Debian 13 ("trixie") root filesystem tarball with Ceph 18.2.7
# (Reef) laid out for Rook v1.18, and prints its path. The tarball is the base
# layer of the e2e images quay.io/ceph/ceph:v18.2.7 and docker.io/rook/ceph
# (see internal/e2e/cmd/images and hack/e2e/README.md).
#
# Cached under ${CEPH_ROOK_CACHE:-$HOME/.cache/ceph-rook}/e2e/ceph-rootfs/<key>/
# where <key> hashes this script and its settings: a second run prints the
# cached path and does nothing else. Needs root (mmdebstrap's root mode) and
# the Debian mirror; installs mmdebstrap with apt-get if it is missing.
#
# What is in it, and why (read in Rook v1.18's source):
#   ceph-mon ceph-osd ceph-mgr ceph-mds radosgw  the daemons Rook starts
#   ceph-common ceph-base                        ceph, rados, rbd, ceph-authtool,
#                                                crushtool, radosgw-admin, ceph-crash
#   ceph-volume lvm2 gdisk udev util-linux       OSD prepare/activate (lvm, sgdisk,
#   cryptsetup-bin                               udevadm, lsblk, blkid, nsenter,
#                                                cryptsetup for encrypted OSDs)
#   rbd-mirror                                   CephRBDMirror
#   curl jq procps iproute2                      RGW startup probe, MDS liveness
#                                                probe, ps, ip (multus)
#   ca-certificates hostname mawk                curl over TLS, scripts
# Not available: ceph-exporter has no Debian package (Rook deploys it on every
# node unless metrics export is disabled), s5cmd (toolbox only), the dashboard
# (python3-bcrypt cannot load in mgr sub-interpreters; do not enable it).
#
# Fixes applied (hack/e2e/README.md, /work/shared/spec/real-node.md):
#   - users ceph 167:167 (before the Ceph packages install, so their postinst
#     keeps the uid Rook's crash collector assumes) and rook 2016:2016;
#   - mgr_util.py imports bcrypt lazily, MgrModule has NOTIFY_TYPES = [],
#     the restful mgr module (cannot import python3-cryptography) is removed;
#   - /var/lib/rook and /etc/ceph owned by rook (the operator runs as 2016).
#
# Environment: DEBIAN_MIRROR (default: the first http(s) Debian mirror named in
# /etc/apt/sources.list*), CEPH_ROOK_CACHE.
set -euo pipefail

# --- hooks: mmdebstrap runs this script again with the chroot as $2 ---------
if [[ "${1:-}" == "__hook" ]]; then
	stage="$2" root="$3"
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	case "$stage" in
	essential)
		# passwd/useradd are not installed yet (not Essential): write the
		# entries by hand. Debian's ceph-common postinst keeps an existing
		# ceph user and group.
		grep -q '^ceph:' "$root/etc/group" || echo 'ceph:x:167:' >>"$root/etc/group"
		grep -q '^ceph:' "$root/etc/passwd" ||
			echo 'ceph:x:167:167:Ceph storage service:/var/lib/ceph:/usr/sbin/nologin' >>"$root/etc/passwd"
		grep -q '^rook:' "$root/etc/group" || echo 'rook:x:2016:' >>"$root/etc/group"
		grep -q '^rook:' "$root/etc/passwd" ||
			echo 'rook:x:2016:2016:Rook:/var/lib/rook:/bin/sh' >>"$root/etc/passwd"
		for f in shadow gshadow; do
			[[ -f "$root/etc/$f" ]] || continue
			for u in ceph rook; do
				grep -q "^$u:" "$root/etc/$f" || {
					if [[ $f == shadow ]]; then echo "$u:!:19000::::::"; else echo "$u:!::"; fi
				} >>"$root/etc/$f"
			done
		done
		mkdir -p "$root/var/lib/ceph"
		chown 167:167 "$root/var/lib/ceph"
		;;
	customize)
		mgr="$root/usr/share/ceph/mgr"
		# 1. bcrypt: Debian's python3-bcrypt (pyo3) refuses to load in the
		# mgr's sub-interpreters; mgr_util imports it at the top, so no module
		# loads. Import it only where it is used (password hashing).
		chroot "$root" python3 - <<'PY'
import re, sys
p = "/usr/share/ceph/mgr/mgr_util.py"
s = open(p).read()
lazy = """class _E2eLazyBcrypt:  # e2e: import bcrypt on first use, see hack/e2e/ceph-rootfs.sh
    def __getattr__(self, name):
        import bcrypt as _bcrypt
        return getattr(_bcrypt, name)


bcrypt = _E2eLazyBcrypt()
"""
if "_E2eLazyBcrypt" not in s:
    s, n = re.subn(r"^import bcrypt[ \t]*\n", lambda _: lazy, s, count=1, flags=re.M)
    if n != 1:
        sys.exit("ceph-rootfs: no top-level 'import bcrypt' in mgr_util.py")
    open(p, "w").write(s)
    print("ceph-rootfs: mgr_util.py now imports bcrypt lazily", file=sys.stderr)
PY
		# 2. Python 3.13: a module class without NOTIFY_TYPES makes the mgr
		# write fake crash dumps; give the base class a default.
		chroot "$root" python3 - <<'PY'
import re, sys
p = "/usr/share/ceph/mgr/mgr_module.py"
s = open(p).read()
m = re.search(r"^class MgrModule\(.*\):\n", s, re.M)
if not m:
    sys.exit("ceph-rootfs: class MgrModule not found in mgr_module.py")
body = s[m.end():]
nxt = re.search(r"^\S", body, re.M)
cls = body[: nxt.start()] if nxt else body
if not re.search(r"^    NOTIFY_TYPES\b", cls, re.M):
    s = s[: m.end()] + "    NOTIFY_TYPES = []  # e2e: see hack/e2e/ceph-rootfs.sh\n" + s[m.end():]
    open(p, "w").write(s)
    print("ceph-rootfs: MgrModule.NOTIFY_TYPES = [] added", file=sys.stderr)
PY
		# 3. restful imports python3-cryptography (pyo3) at the top, which
		# cannot load in a sub-interpreter either: every mgr start writes a
		# crash dump (RECENT_CRASH once the crash collector posts it). Rook
		# does not use it; remove it.
		rm -rf "$mgr/restful"
		# Byte-compiled caches of the patched files are stale now.
		rm -rf "$mgr/__pycache__"
		# The operator (uid 2016) writes its config and keyrings here.
		mkdir -p "$root/var/lib/rook" "$root/etc/ceph" "$root/etc/rook" "$root/var/log/ceph" "$root/var/lib/ceph/crash/posted"
		chown 2016:2016 "$root/var/lib/rook" "$root/etc/ceph" "$root/etc/rook"
		chown -R 167:167 "$root/var/lib/ceph" "$root/var/log/ceph"
		# Checks: fail the build, not the e2e run, when something is missing.
		for u in ceph:167:167 rook:2016:2016; do
			IFS=: read -r name uid gid <<<"$u"
			got=$(chroot "$root" id -u "$name"):$(chroot "$root" id -g "$name")
			[[ "$got" == "$uid:$gid" ]] || { echo "ceph-rootfs: $name is $got, want $uid:$gid" >&2; exit 1; }
		done
		for b in ceph ceph-mon ceph-osd ceph-mgr ceph-mds radosgw radosgw-admin rados rbd rbd-mirror \
			ceph-authtool crushtool monmaptool ceph-volume ceph-bluestore-tool ceph-crash \
			lvm sgdisk udevadm lsblk blkid nsenter cryptsetup curl jq ps ip stdbuf timeout bash hostname awk; do
			chroot "$root" sh -c "command -v $b" >/dev/null || { echo "ceph-rootfs: $b missing" >&2; exit 1; }
		done
		chroot "$root" ceph --version >"$root/etc/ceph-version"
		grep -q ' reef ' "$root/etc/ceph-version" || { echo "ceph-rootfs: not Reef: $(cat "$root/etc/ceph-version")" >&2; exit 1; }
		chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$root/etc/e2e-packages.txt"
		;;
	*) echo "unknown hook $stage" >&2; exit 2 ;;
	esac
	exit 0
fi

log() { echo "hack/e2e/ceph-rootfs: $*" >&2; }

SUITE=trixie
PACKAGES=(
	ceph-mon ceph-osd ceph-mgr ceph-mds radosgw ceph-volume ceph-common ceph-base rbd-mirror
	lvm2 util-linux udev gdisk cryptsetup-bin
	curl jq procps iproute2 ca-certificates hostname mawk
)

find_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[[ -f "$f" ]] || continue
		# one-line "deb URL suite" and deb822 "URIs: URL"; the main archive, not security
		grep -hoE '^(deb(\s+\[[^]]*\])?\s+|URIs:\s*)https?://[^ ]+' "$f" 2>/dev/null |
			grep -oE 'https?://[^ ]+' | grep -v -- '-security' | grep -E '/debian/?$' || true
	done | head -n1
}

MIRROR="${DEBIAN_MIRROR:-$(find_mirror)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
MIRROR="${MIRROR%/}"

CACHE_ROOT="${CEPH_ROOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceph-rook}"
SELF="$(readlink -f "${BASH_SOURCE[0]}")"
KEY=$( { cat "$SELF"; echo "$SUITE ${PACKAGES[*]}"; } | sha256sum | cut -c1-16)
OUT_DIR="$CACHE_ROOT/e2e/ceph-rootfs/$KEY"
OUT="$OUT_DIR/rootfs.tar"

if [[ -f "$OUT" && -f "$OUT_DIR/ceph-version" ]]; then
	echo "$OUT"
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	log "must run as root (mmdebstrap root mode, chown to 167 and 2016)"
	exit 1
fi
if ! command -v mmdebstrap >/dev/null; then
	log "installing mmdebstrap"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap >/dev/null
fi

mkdir -p "$OUT_DIR"
tmp="$OUT_DIR/rootfs.tar.tmp"
rm -f "$tmp"
start=$SECONDS
log "building Debian $SUITE + Ceph into $OUT from $MIRROR (cold ~3 min)"
incl=$(IFS=,; echo "${PACKAGES[*]}")
nice -n 10 mmdebstrap --variant=apt --mode=root --format=tar \
	--skip=output/dev \
	--aptopt='Acquire::Retries "3"' \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--essential-hook="\"$SELF\" __hook essential \"\$1\"" \
	--customize-hook="\"$SELF\" __hook customize \"\$1\"" \
	--include="$incl" \
	"$SUITE" "$tmp" "$MIRROR" >"$OUT_DIR/mmdebstrap.log" 2>&1 ||
	{ tail -n 40 "$OUT_DIR/mmdebstrap.log" >&2; log "mmdebstrap failed (log: $OUT_DIR/mmdebstrap.log)"; exit 1; }
# Record what was built next to the tarball.
tar -xOf "$tmp" ./etc/ceph-version >"$OUT_DIR/ceph-version"
tar -xOf "$tmp" ./etc/e2e-packages.txt >"$OUT_DIR/packages.txt"
mv "$tmp" "$OUT"
log "built in $((SECONDS - start)) s: $(du -h "$OUT" | cut -f1), $(cat "$OUT_DIR/ceph-version")"
echo "$OUT"
