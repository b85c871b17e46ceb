package retirement

import (
	"fmt"
	"math"
	"slices"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// The retirement's checks against what Ceph itself says (a probe's
// CephFacts), made before anything is touched: every pool Ceph has keeps
// its copies on what remains, the data fits below the full ratios in the
// failure domain that must hold it, no OSD takes more PGs than Ceph lets
// it, and Ceph is healthy but for the retired OSD itself.

// Ceph preflight check names (beside the consumers' Hosts and Copies).
const (
	CheckPools     = "CephPools"
	CheckPGsPerOSD = "PGsPerOSD"
)

// blockingHealthChecks are Ceph health checks no retirement starts under,
// whatever the retired OSD: PGs that serve no I/O, and OSDs or pools that
// are (nearly) full, where moving a disk's data in would stall or stop
// writes. The names are Ceph's (doc/rados/operations/health-checks.rst).
var blockingHealthChecks = []string{
	"PG_AVAILABILITY", "PG_RECOVERY_FULL", "PG_BACKFILL_FULL",
	"OSD_FULL", "OSD_BACKFILLFULL", "OSD_NEARFULL",
	"POOL_FULL", "POOL_NEARFULL", "POOL_BACKFILLFULL",
	"OSD_TOO_MANY_REPAIRS", "OSD_SCRUB_ERRORS", "PG_DAMAGED",
}

// ownDownChecks are the checks a retired OSD that is already down (the
// failed disk being replaced) raises by itself: tolerated when it is the
// only OSD down.
var ownDownChecks = []string{"OSD_DOWN", "OSD_HOST_DOWN", "PG_DEGRADED"}

// CephChecks are the Ceph-side preflight checks of retiring osd.
func CephChecks(f cephjob.Facts, osd int) []cephv1alpha1.PreflightCheck {
	return []cephv1alpha1.PreflightCheck{poolsCheck(f, osd), cephCapacityCheck(f, osd), pgsPerOSDCheck(f, osd), cephHealthCheck(f, osd)}
}

// ofClass says "" for every class, " of class ssd" for one.
func ofClass(class string) string {
	if class == "" {
		return ""
	}
	return " of class " + class
}

// poolsCheck: every pool Ceph has (.mgr, the object stores' metadata pools
// and the consumers' alike) can place all its copies on distinct members
// of its failure domain in its device class without osd. With fewer, the
// drained OSD's PGs have nowhere to go, Ceph never calls it safe to
// destroy, and the retirement would wait for ever.
func poolsCheck(f cephjob.Facts, osd int) cephv1alpha1.PreflightCheck {
	var short []string
	pools := 0
	for _, p := range f.Pools {
		pools += p.Count
		room := f.Classes[p.Class]
		have, unit := room.Hosts, "hosts"
		if strings.Contains(p.Class, "+") {
			short = append(short, fmt.Sprintf("%s takes several device classes (%s), which the plugin cannot count", describePool(p), p.Class))
			continue
		}
		switch p.Domain {
		case "host":
		case "osd":
			have, unit = room.OSDs, "OSDs"
		default:
			short = append(short, fmt.Sprintf("%s spreads over %q, which the plugin cannot count", describePool(p), p.Domain))
			continue
		}
		if p.Size > have {
			short = append(short, fmt.Sprintf("%s keeps %d copies on different %s%s, and %d remain", describePool(p), p.Size, unit, ofClass(p.Class), have))
		}
	}
	class := scopeClass(f)
	own := f.Classes[class]
	after := fmt.Sprintf("without osd.%d, %s and %s%s stay up and in", osd, message.Plural(own.Hosts, "host"), message.Plural(own.OSDs, "OSD"), ofClass(class))
	if len(short) > 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckPools, Message: fmt.Sprintf("%s: too few for %s; add a disk on another node first (a replacement does), or lower the copies", after, message.Clauses(short))}
	}
	return cephv1alpha1.PreflightCheck{Name: CheckPools, Passed: true, Message: fmt.Sprintf("%s: every one of Ceph's %s keeps its copies", after, message.Plural(pools, "pool"))}
}

// describePool names a kind of pool by its first pool, and how many more
// are like it.
func describePool(p cephjob.Pool) string {
	if p.Count > 1 {
		return fmt.Sprintf("pool %s (and %s like it)", p.Name, message.Plural(p.Count-1, "more"))
	}
	return "pool " + p.Name
}

// scopeClass is the device class osd's data must stay in: its own when a
// pool's rule takes that class (the data of such a pool moves only within
// it), else every class ("").
func scopeClass(f cephjob.Facts) string {
	class := f.OSD.DeviceClass
	if class != "" && slices.ContainsFunc(f.Pools, func(p cephjob.Pool) bool { return p.Class == class }) {
		return class
	}
	return ""
}

// fullCopyPerHost: some host-domain pool with data on osd (of its class,
// or of none) keeps as many copies as there are hosts of that class (the
// retired OSD's counted), so each host holds a whole copy and the retired
// OSD's data must stay on its own host.
func fullCopyPerHost(f cephjob.Facts) bool {
	return slices.ContainsFunc(f.Pools, func(p cephjob.Pool) bool {
		return p.Domain == "host" && (p.Class == "" || p.Class == f.OSD.DeviceClass) && p.Size >= f.Classes[p.Class].HostsWithOwn
	})
}

// receivers are the load of the OSDs osd's data moves to, in its scope
// class: its own host's when each host holds a whole copy and it keeps
// another such OSD, else the cluster's (a host left empty is the pools
// check's refusal); scope says which in words.
func receivers(f cephjob.Facts) (load cephjob.Load, scope string) {
	class := scopeClass(f)
	if host, ok := f.OwnHost[class]; ok && host.Takers > 0 && fullCopyPerHost(f) {
		return host, "host " + f.OSD.Host + ofClass(class) + " (it holds a whole copy)"
	}
	if class != "" {
		return f.Classes[class].Load, "the OSDs of class " + class
	}
	return f.Classes[""].Load, "the cluster"
}

// cephCapacityCheck projects the usage once osd's data has moved within its
// receivers. It must stay below the nearfull ratio (above backfillfull Ceph
// stops moving data onto an OSD, above full it stops writes).
func cephCapacityCheck(f cephjob.Facts, osd int) cephv1alpha1.PreflightCheck {
	load, scope := receivers(f)
	left := load.KB - f.OSD.KB
	if f.Ratios.Nearfull <= 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckCapacity, Message: "Ceph's OSD map names no nearfull ratio"}
	}
	if left <= 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckCapacity, Message: fmt.Sprintf("nothing would remain in %s to hold osd.%d's data", scope, osd)}
	}
	share := float64(load.KBUsed) / float64(left)
	msg := fmt.Sprintf("%s would hold %s in %s: %.0f%% (Ceph's nearfull ratio %.0f%%, backfillfull %.0f%%, full %.0f%%)",
		scope, message.Bytes(load.KBUsed*1024), message.Bytes(left*1024), share*100, f.Ratios.Nearfull*100, f.Ratios.Backfillfull*100, f.Ratios.Full*100)
	if share >= f.Ratios.Nearfull {
		return cephv1alpha1.PreflightCheck{Name: CheckCapacity, Message: msg + ": the data would not fit; add capacity there first"}
	}
	return cephv1alpha1.PreflightCheck{Name: CheckCapacity, Passed: true, Message: msg}
}

// pgsPerOSDCheck projects the PGs of the OSDs that take osd's: its PGs
// spread over its receivers, on top of the most any of them holds. Above
// mon_max_pg_per_osd × osd_max_pg_per_osd_hard_ratio an OSD refuses new
// PGs and the drain hangs.
func pgsPerOSDCheck(f cephjob.Facts, osd int) cephv1alpha1.PreflightCheck {
	load, scope := receivers(f)
	limit := int(math.Floor(float64(f.MaxPGPerOSD) * f.HardRatio))
	if load.Takers == 0 || limit <= 0 {
		return cephv1alpha1.PreflightCheck{Name: CheckPGsPerOSD, Message: fmt.Sprintf("no OSD in %s would take osd.%d's %d PGs", scope, osd, f.OSD.PGs)}
	}
	most := load.MostPGs + (f.OSD.PGs+load.Takers-1)/load.Takers
	msg := fmt.Sprintf("osd.%d's %d PGs spread over %s in %s: at most %d PGs on one (Ceph refuses more than %d = mon_max_pg_per_osd %d × osd_max_pg_per_osd_hard_ratio %g)",
		osd, f.OSD.PGs, message.Plural(load.Takers, "OSD"), scope, most, limit, f.MaxPGPerOSD, f.HardRatio)
	if most > limit {
		return cephv1alpha1.PreflightCheck{Name: CheckPGsPerOSD, Message: msg + ": add OSDs or lower the pools' PG counts first"}
	}
	return cephv1alpha1.PreflightCheck{Name: CheckPGsPerOSD, Passed: true, Message: msg}
}

// cephHealthCheck: Ceph is not in HEALTH_ERR, raises no blocking check, no
// other OSD is down or out, and every PG is active, and clean unless the
// retired OSD is the one down (a failed disk: its PGs are degraded by it
// alone, and retiring it is how they heal).
func cephHealthCheck(f cephjob.Facts, osd int) cephv1alpha1.PreflightCheck {
	fail := func(format string, args ...any) cephv1alpha1.PreflightCheck {
		return cephv1alpha1.PreflightCheck{Name: cephv1alpha1.CheckHealth, Message: fmt.Sprintf(format, args...)}
	}
	if f.Health.Status == "HEALTH_ERR" {
		return fail("Ceph reports HEALTH_ERR (%s): repair the cluster before taking a disk out of it", message.Keys(f.Health.Checks))
	}
	var blocking []string
	for _, name := range blockingHealthChecks {
		if msg, ok := f.Health.Checks[name]; ok {
			blocking = append(blocking, name+": "+msg)
		}
	}
	if len(blocking) > 0 {
		return fail("Ceph reports %s: resolve it first", strings.Join(blocking, "; "))
	}
	othersDown := othersMissing(f, func(o cephjob.MissingOSD) string { return fmt.Sprintf("osd.%d (%s)", o.ID, upIn(o.Up, o.In)) })
	if len(othersDown) > 0 {
		return fail("%s: Ceph already lacks copies there; bring them back (or retire them) first", message.Clauses(othersDown))
	}
	targetDown := !f.OSD.Up
	for _, name := range ownDownChecks {
		if msg, ok := f.Health.Checks[name]; ok && !targetDown {
			return fail("Ceph reports %s: %s; wait until it is resolved", name, msg)
		}
	}
	for state, n := range f.PGStates {
		if n > 0 && !strings.Contains(state, "active") {
			return fail("%d PGs are %s (no I/O): Ceph must recover them first", n, state)
		}
	}
	if !targetDown && !f.AllPGsActiveClean() {
		return fail("not every PG is active+clean (%s): wait until Ceph has recovered", f.PGsNotActiveClean())
	}
	msg := "Ceph reports " + f.Health.Status
	if len(f.Health.Checks) > 0 {
		msg += " (" + message.Keys(f.Health.Checks) + ")"
	}
	if targetDown {
		msg += fmt.Sprintf("; osd.%d is down already, and the only one", osd)
	}
	return cephv1alpha1.PreflightCheck{Name: cephv1alpha1.CheckHealth, Passed: true, Message: msg}
}

// cephSettling says what Ceph is busy with when its health fails the
// retirement only for a while, "" when the failure is of a lasting kind.
// Settling: PGs peering, activating or recovering, and other OSDs that are
// down but still in. Ceph has not given up on those: Rook restarts each
// OSD whose Deployment changed after a CephCluster edit, one at a time
// (seen on real Ceph right after a retirement took a device out), and a
// rebooting node's OSDs come back. Lasting: HEALTH_ERR, a check that does
// not clear by itself (full, damaged), or another OSD that is out, which
// an operator did or the monitors did once it stayed down for
// mon_osd_down_out_interval.
func cephSettling(f cephjob.Facts, osd int) string {
	if f.Health.Status == "HEALTH_ERR" || drainTrouble(f, osd) != "" {
		return ""
	}
	// Still in, every one: drainTrouble found none out (the probe lists
	// the out ones first).
	busy := othersMissing(f, func(o cephjob.MissingOSD) string { return fmt.Sprintf("osd.%d down", o.ID) })
	if !f.AllPGsActiveClean() {
		busy = append(busy, f.PGsNotActiveClean())
	}
	if len(busy) == 0 {
		busy = trailingPGChecks(f)
	}
	return strings.Join(busy, ", ")
}

// pgStateChecks are the health checks Ceph derives from its PGs' states.
var pgStateChecks = []string{"PG_AVAILABILITY", "PG_DEGRADED"}

// trailingPGChecks are the pgStateChecks Ceph's health still raises while
// every PG is active+clean: the health the monitors serve trails the PG
// states the manager reports by a few seconds (seen on real Ceph: a
// replacement's OSD had just taken its PGs, "3 pgs degraded" in the health,
// every PG active+clean in pg stat, in the same probe).
func trailingPGChecks(f cephjob.Facts) []string {
	var trailing []string
	for _, name := range pgStateChecks {
		if msg, ok := f.Health.Checks[name]; ok {
			trailing = append(trailing, fmt.Sprintf("%s still reported (%s) while every PG is active+clean", name, msg))
		}
	}
	return trailing
}

// othersMissing names the OSDs besides the probed one that are down or
// out, as many as the probe listed, and how many more there are.
func othersMissing(f cephjob.Facts, describe func(cephjob.MissingOSD) string) []string {
	var names []string
	for _, o := range f.Missing {
		names = append(names, describe(o))
	}
	if more := f.MissingCount - len(f.Missing); more > 0 {
		names = append(names, message.Plural(more, "more OSD"))
	}
	return names
}

// lastingCheck names the first blocking health check Ceph raises that
// does not clear by itself, "" when there is none.
func lastingCheck(f cephjob.Facts) string {
	for _, name := range blockingHealthChecks {
		if msg, ok := f.Health.Checks[name]; ok && !transientChecks[name] {
			return fmt.Sprintf("Ceph reports %s: %s", name, msg)
		}
	}
	return ""
}

// transientChecks are the blocking checks that clear by themselves: every
// change of the OSD map (an out, an OSD restarted) makes PGs peer for a few
// seconds, Ceph raising PG_AVAILABILITY meanwhile (seen on real Ceph: "10
// pgs peering" right after an out).
var transientChecks = map[string]bool{"PG_AVAILABILITY": true}

func upIn(up, in bool) string {
	switch {
	case up && in:
		return "up and in"
	case !up && !in:
		return "down and out"
	case !up:
		return "down"
	}
	return "out"
}
