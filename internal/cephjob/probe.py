# The plugin's probe of Ceph for one OSD (cephjob.go runs it in Rook's own
# image, with Rook's admin credentials, as a Job). It only reads: every
# command is a query, through librados, of what `ceph ... -f json` would
# print, and it prints one JSON object of the fields the plugin decides on
# (facts.go). The object must fit a container's termination message (4096
# bytes; Kubernetes keeps only the tail), whatever the cluster's size, so
# the probe sums what the plugin counts (hosts, OSDs, capacity and PGs per
# device class, pools per kind) instead of listing every OSD and pool; it
# decides nothing. Its arguments: the OSD, another OSD whose state to tell
# (-1: none), then the ceph CLI's connection options.
import errno
import json
import sys

import rados

LIMIT = 4000
TIMEOUT = 60


def connect(argv):
    # The arguments the ceph CLI would get: --conf F --keyring K --name N.
    opts = dict(zip(argv[::2], argv[1::2]))
    cluster = rados.Rados(conffile=opts["--conf"], name=opts["--name"], conf={"keyring": opts["--keyring"]})
    cluster.connect(timeout=TIMEOUT)
    return cluster


# One librados connection answers every query: the ceph CLI would start a
# Python process per command, connect, and read every command's
# description from the monitor first (about a CPU-second each on a small
# node), for ten commands a probe. MGR marks the commands the manager
# answers (src/mgr/MgrCommands.h); the others are the monitor's.
MGR = {"osd df", "pg stat", "osd safe-to-destroy"}


def command(prefix, **args):
    cmd = json.dumps(dict(prefix=prefix, **args))
    send = CLUSTER.mgr_command if prefix in MGR else CLUSTER.mon_command
    ret, out, outs = send(cmd, b"", timeout=TIMEOUT)
    if ret < 0:
        # What the CLI would say (src/ceph.in): its exit code is the errno,
        # its message names it.
        outs = "Error %s: %s" % (errno.errorcode.get(-ret, "Unknown"), outs)
    return -ret, out.decode(), outs


def query(prefix, **args):
    rc, out, err = command(prefix, format="json", **args)
    if rc != 0:
        raise SystemExit("ceph %s: exit %d: %s" % (prefix, rc, err[-300:]))
    return json.loads(out)


def plain(prefix, **args):
    rc, out, err = command(prefix, **args)
    if rc != 0:
        raise SystemExit("ceph %s: exit %d: %s" % (prefix, rc, err[-300:]))
    return out.strip()


def rule_targets():
    # A rule's device class is its take step's ("default~ssd": the class's
    # shadow tree, as `ceph osd crush rule create-replicated ... <class>`
    # makes it), its failure domain the type of its last choose step. A
    # rule that takes several classes (Rook's hybridStorage: the primary on
    # one, the other copies on another) is named by them all, "hdd+ssd",
    # which the plugin does not count.
    targets = {}
    for rule in query("osd crush rule dump"):
        domain, classes = "", set()
        for step in rule.get("steps", []):
            op = step.get("op", "")
            if op == "take":
                classes.add(step.get("item_name", "").partition("~")[2])
            elif op.startswith("choose"):
                domain = step.get("type", "")
        targets[rule["rule_id"]] = (domain, "+".join(sorted(classes)))
    return targets


class Room:
    """What one device class ("": every class) keeps without the probed
    OSD: hosts and OSDs up and in, and the load of the OSDs that would take
    its data."""

    def __init__(self):
        self.hosts = set()  # hosts with an OSD up and in, the probed one aside
        self.hosts_with = set()  # the same, the probed OSD's host counted
        self.osds = 0
        self.kb = self.used = 0  # of the OSDs in, the probed one counted
        self.takers = self.most = 0  # OSDs up and in that take PGs, and the most PGs one holds

    def add(self, host, osd, df, target):
        up_in = osd.get("up", 0) == 1 and osd.get("in", 0) == 1
        if up_in or target:
            self.hosts_with.add(host)
        if osd.get("in", 0) == 1 or target:
            self.kb += df.get("kb", 0)
            self.used += df.get("kb_used", 0)
        if up_in and not target:
            self.hosts.add(host)
            self.osds += 1
            self.takers += 1
            self.most = max(self.most, df.get("pgs", 0))

    def load(self):
        return [self.kb, self.used, self.takers, self.most]

    def answer(self):
        return [len(self.hosts), len(self.hosts_with), self.osds] + self.load()


MISSING_LISTED = 8


def fit(answer):
    """The answer as text, within a termination message: health messages
    are shortened, then fewer missing OSDs named (their count stays); an
    answer that still does not fit fails the probe, never cut."""
    for cut in (None, 80, 0):
        if cut is not None:
            answer["health"]["checks"] = {k: v[:cut] for k, v in answer["health"]["checks"].items()}
            answer["missing"] = answer["missing"][:2]
        text = json.dumps(answer, separators=(",", ":"))
        if len(text) <= LIMIT:
            return text
    raise SystemExit("the probe's answer is %d bytes, more than a termination message holds" % len(text))


def main():
    osd_id, also_id = int(sys.argv[1]), int(sys.argv[2])
    health = query("health")
    dump = query("osd dump")
    targets = rule_targets()
    tree = query("osd df", output_method="tree")
    pgstat = query("pg stat")
    summary = pgstat.get("pg_summary", pgstat)
    states = summary.get("num_pg_by_state", [])

    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    osds = {o["osd"]: o for o in dump.get("osds", [])}
    placed = {}  # OSD id -> CRUSH host
    for n in tree.get("nodes", []):
        if n.get("type") == "host":
            for child in n.get("children", []):
                if nodes.get(child, {}).get("type") == "osd":
                    placed[child] = n["name"]

    # Pools, one entry per kind (copies, min_size, domain, class): how many
    # and the first one's name. A cluster has few kinds, however many pools.
    kinds = {}
    for p in dump.get("pools", []):
        domain, device_class = targets.get(p.get("crush_rule"), ("", ""))
        key = (p.get("size", 0), p.get("min_size", 0), domain, device_class)
        if key in kinds:
            kinds[key][5] += 1
        else:
            kinds[key] = [p["pool_name"], key[0], key[1], domain, device_class, 1]
    pool_classes = {k[3] for k in kinds}

    own_host = placed.get(osd_id, "")
    own_class = nodes.get(osd_id, {}).get("device_class", "") if osd_id in placed else ""
    classes = {c: Room() for c in pool_classes | {"", own_class}}
    host_rooms = {c: Room() for c in {"", own_class}}
    missing = []
    for oid, host in sorted(placed.items()):
        o, df = osds.get(oid, {}), nodes[oid]
        target = oid == osd_id
        for c in {"", df.get("device_class", "")}:
            if c in classes:
                classes[c].add(host, o, df, target)
            if c in host_rooms and host == own_host:
                host_rooms[c].add(host, o, df, target)
        if not target and not (o.get("up", 0) == 1 and o.get("in", 0) == 1):
            missing.append([oid, o.get("up", 0), o.get("in", 0), host])
    # The out ones first: they are what a drain cannot go on with.
    missing.sort(key=lambda m: (m[2], m[0]))

    target = osds.get(osd_id)
    osd = {"id": osd_id, "exists": target is not None}
    if target is not None:
        df = nodes.get(osd_id, {}) if osd_id in placed else {}
        osd.update(uuid=target.get("uuid", ""), up=target.get("up", 0) == 1, **{"in": target.get("in", 0) == 1})
        osd.update(host=own_host, deviceClass=own_class, pgs=df.get("pgs", 0), kb=df.get("kb", 0))
        rc, out, err = command("osd metadata", id=osd_id, format="json")
        if rc == 0:
            meta = json.loads(out)
            osd.update(devNode=meta.get("bluestore_bdev_dev_node", ""), devices=meta.get("devices", ""), deviceIDs=meta.get("device_ids", ""), hostname=meta.get("hostname", ""))
        # Without -f json: with a formatter Ceph answers 0 and lists, without
        # one its exit code says it (EBUSY: PGs still mapped, EAGAIN: not all
        # PGs active+clean and the OSD is down) and stderr says why
        # (src/mgr/DaemonServer.cc, "osd safe-to-destroy").
        rc, out, err = command("osd safe-to-destroy", ids=[str(osd_id)])
        osd["safeToDestroy"] = {"rc": rc, "message": (err or out).strip()[-300:]}

    answer = {
        "health": {"status": health.get("status", ""), "checks": {k: v.get("summary", {}).get("message", "")[:200] for k, v in health.get("checks", {}).items()}},
        "ratios": {"nearfull": dump.get("nearfull_ratio", 0), "backfillfull": dump.get("backfillfull_ratio", 0), "full": dump.get("full_ratio", 0)},
        "maxPGPerOSD": int(float(plain("config get", who="mon", key="mon_max_pg_per_osd"))),
        "hardRatio": float(plain("config get", who="osd", key="osd_max_pg_per_osd_hard_ratio")),
        "pools": sorted(kinds.values()),
        "pgs": {s["name"]: s["num"] for s in states},
        # Object copies still to recover or move (PGMapDigest::recovery_summary
        # prints them only when there are any): a drain's progress, finer
        # than whole PGs leaving the OSD.
        "recovery": {"degraded": summary.get("degraded_objects", 0), "misplaced": summary.get("misplaced_objects", 0)},
        # [hosts, hosts with the probed OSD's, OSDs, kb, kb_used, takers, most PGs]
        "classes": {c: r.answer() for c, r in classes.items()},
        # [kb, kb_used, takers, most PGs] of the probed OSD's host
        "host": {c: r.load() for c, r in host_rooms.items()},
        # [id, up, in, host] of the OSDs besides the probed one that are
        # not up and in, the out ones first; missingCount counts them all.
        "missing": missing[:MISSING_LISTED],
        "missingCount": len(missing),
        "osd": osd,
    }
    if also_id >= 0:
        o = osds.get(also_id, {})
        answer["also"] = {"id": also_id, "upAndIn": also_id in placed and o.get("up", 0) == 1 and o.get("in", 0) == 1}
    print(fit(answer))


CLUSTER = connect(sys.argv[3:])
try:
    main()
finally:
    CLUSTER.shutdown()
