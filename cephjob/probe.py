# The plugin's probe of Ceph for one OSD (cephjob.go runs it in Rook's own
# image, with Rook's admin credentials, as a Job). It only reads: every
# command is a `ceph ... -f json` query, and it prints one JSON object of the
# fields the plugin decides on (cephfacts.go), small enough for a container's
# termination message (4096 bytes; Kubernetes cuts the rest). No decision is
# made here.
import json
import subprocess
import sys

LIMIT = 4000


def ceph(*args):
    p = subprocess.run(["ceph", *CONN, *args, "-f", "json"], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr.strip()


def query(*args):
    rc, out, err = ceph(*args)
    if rc != 0:
        raise SystemExit("ceph %s: exit %d: %s" % (" ".join(args), rc, err[-300:]))
    return json.loads(out)


def run(*args):
    p = subprocess.run(["ceph", *CONN, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def plain(*args):
    rc, out, err = run(*args)
    if rc != 0:
        raise SystemExit("ceph %s: exit %d: %s" % (" ".join(args), rc, err[-300:]))
    return out


def rule_domains():
    domains = {}
    for rule in query("osd", "crush", "rule", "dump"):
        for step in rule.get("steps", []):
            if step.get("op", "").startswith("choose"):
                domains[rule["rule_id"]] = step.get("type", "")
    return domains


def main():
    osd_id = int(sys.argv[1])
    health = query("health")
    dump = query("osd", "dump")
    domains = rule_domains()
    tree = query("osd", "df", "tree")
    pgstat = query("pg", "stat")
    states = pgstat.get("pg_summary", pgstat).get("num_pg_by_state", [])

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
        rc, out, err = ceph("osd", "metadata", str(osd_id))
        if rc == 0:
            meta = json.loads(out)
            osd.update(devNode=meta.get("bluestore_bdev_dev_node", ""), devices=meta.get("devices", ""), deviceIDs=meta.get("device_ids", ""), hostname=meta.get("hostname", ""))
        # Without -f json: with a formatter Ceph answers 0 and lists, without
        # one its exit code says it (EBUSY: PGs still mapped, EAGAIN: not all
        # PGs active+clean and the OSD is down) and stderr says why
        # (src/mgr/DaemonServer.cc, "osd safe-to-destroy").
        rc, out, err = run("osd", "safe-to-destroy", str(osd_id))
        osd["safeToDestroy"] = {"rc": rc, "message": (err or out)[-300:]}

    answer = {
        "health": {"status": health.get("status", ""), "checks": {k: v.get("summary", {}).get("message", "")[:200] for k, v in health.get("checks", {}).items()}},
        "ratios": {"nearfull": dump.get("nearfull_ratio", 0), "backfillfull": dump.get("backfillfull_ratio", 0), "full": dump.get("full_ratio", 0)},
        "maxPGPerOSD": int(float(plain("config", "get", "mon", "mon_max_pg_per_osd"))),
        "hardRatio": float(plain("config", "get", "osd", "osd_max_pg_per_osd_hard_ratio")),
        "pools": [[p["pool_name"], p.get("size", 0), p.get("min_size", 0), domains.get(p.get("crush_rule"), "")] for p in dump.get("pools", [])],
        "pgs": {s["name"]: s["num"] for s in states},
        "hosts": hosts,
        "osd": osd,
    }
    text = json.dumps(answer, separators=(",", ":"))
    if len(text) > LIMIT:
        answer["hosts"] = [h for h in hosts if any(m[0] == osd_id for m in h["osds"])]
        answer["truncated"] = True
        text = json.dumps(answer, separators=(",", ":"))
    print(text)


CONN = sys.argv[2:]
main()
