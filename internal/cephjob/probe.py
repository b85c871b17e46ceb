# The plugin's probe of Ceph for one OSD (cephjob.go runs it in Rook's own
# image, with Rook's admin credentials, as a Job). It only reads: every
# command is a query, through librados, of what `ceph ... -f json` would
# print, and it prints one JSON object of the fields the plugin decides on
# (cephfacts.go), small enough for a container's termination message (4096
# bytes; Kubernetes cuts the rest). No decision is made here.
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


def rule_domains():
    domains = {}
    for rule in query("osd crush rule dump"):
        for step in rule.get("steps", []):
            if step.get("op", "").startswith("choose"):
                domains[rule["rule_id"]] = step.get("type", "")
    return domains


def main():
    osd_id = int(sys.argv[1])
    health = query("health")
    dump = query("osd dump")
    domains = rule_domains()
    tree = query("osd df", output_method="tree")
    pgstat = query("pg stat")
    summary = pgstat.get("pg_summary", pgstat)
    states = summary.get("num_pg_by_state", [])

    nodes = {n["id"]: n for n in tree.get("nodes", [])}
    osds = {o["osd"]: o for o in dump.get("osds", [])}
    hosts = []
    for n in tree.get("nodes", []):
        if n.get("type") != "host":
            continue
        members = []
        for child in n.get("children", []):
            c = nodes.get(child)
            if c is None or c.get("type") != "osd":
                continue
            o = osds.get(child, {})
            # [id, up, in, pgs, kb, kb_used]
            members.append([child, o.get("up", 0), o.get("in", 0), c.get("pgs", 0), c.get("kb", 0), c.get("kb_used", 0)])
        hosts.append({"name": n["name"], "osds": sorted(members)})

    target = osds.get(osd_id)
    osd = {"id": osd_id, "exists": target is not None}
    if target is not None:
        osd.update(uuid=target.get("uuid", ""), up=target.get("up", 0) == 1, **{"in": target.get("in", 0) == 1})
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
        "pools": [[p["pool_name"], p.get("size", 0), p.get("min_size", 0), domains.get(p.get("crush_rule"), "")] for p in dump.get("pools", [])],
        "pgs": {s["name"]: s["num"] for s in states},
        # Object copies still to recover or move (PGMapDigest::recovery_summary
        # prints them only when there are any): a drain's progress, finer
        # than whole PGs leaving the OSD.
        "recovery": {"degraded": summary.get("degraded_objects", 0), "misplaced": summary.get("misplaced_objects", 0)},
        "hosts": hosts,
        "osd": osd,
    }
    text = json.dumps(answer, separators=(",", ":"))
    if len(text) > LIMIT:
        answer["hosts"] = [h for h in hosts if any(m[0] == osd_id for m in h["osds"])]
        answer["truncated"] = True
        text = json.dumps(answer, separators=(",", ":"))
    print(text)


CLUSTER = connect(sys.argv[2:])
try:
    main()
finally:
    CLUSTER.shutdown()
