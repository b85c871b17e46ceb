package cephjob

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Facts is a probe's answer (probe.py): what Ceph itself says
// about one OSD and the cluster around it.
type Facts struct {
	Health struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"` // check name -> summary
	} `json:"health"`
	// Ratios are the OSD map's full ratios, as the CephCluster set them.
	Ratios struct {
		Nearfull     float64 `json:"nearfull"`
		Backfillfull float64 `json:"backfillfull"`
		Full         float64 `json:"full"`
	} `json:"ratios"`
	// MaxPGPerOSD and HardRatio bound the PGs an OSD takes: above their
	// product it refuses new ones (mon_max_pg_per_osd,
	// osd_max_pg_per_osd_hard_ratio).
	MaxPGPerOSD int     `json:"maxPGPerOSD"`
	HardRatio   float64 `json:"hardRatio"`
	// Pools are Ceph's pools, one entry per kind: copies, failure domain
	// and device class.
	Pools []Pool `json:"-"`
	// PGStates counts PGs by state ("active+clean": 201).
	PGStates map[string]int `json:"pgs"`
	// Recovery is how many object copies Ceph still has to recover
	// (degraded) or move (misplaced): what a drain moves, object by
	// object, however big its PGs are.
	Recovery Recovery `json:"recovery"`
	// Classes is the room each device class keeps without the probed OSD
	// ("": every class), for its class, every pool's and every class.
	Classes map[string]Room `json:"-"`
	// OwnHost is the load of the probed OSD's host, for its class and
	// every class ("").
	OwnHost map[string]Load `json:"-"`
	// Missing are the OSDs besides the probed one that CRUSH places
	// under a host and are not up and in, the out ones first, up to a
	// few; MissingCount counts them all.
	Missing      []MissingOSD `json:"-"`
	MissingCount int          `json:"missingCount"`
	// Also is the other OSD the probe was asked about (a replacement's).
	Also *AlsoOSD `json:"also"`
	OSD  OSD      `json:"osd"`
}

// Room is what one device class keeps once the probed OSD is gone: hosts
// with an OSD up and in, the same counting the probed OSD's host, OSDs up
// and in, and the load of those OSDs.
type Room struct {
	Hosts, HostsWithOwn, OSDs int
	Load
}

// Load is what a set of OSDs holds: the size and use of those in (the
// probed one counted), and the OSDs up and in that would take its PGs with
// the most PGs one of them holds.
type Load struct {
	KB, KBUsed      int64
	Takers, MostPGs int
}

// MissingOSD is an OSD that is not up and in, and its CRUSH host.
type MissingOSD struct {
	ID     int
	Up, In bool
	Host   string
}

// AlsoOSD is the state of the probe's other OSD: whether CRUSH places it
// under a host and the OSD map has it up and in.
type AlsoOSD struct {
	ID      int  `json:"id"`
	UpAndIn bool `json:"upAndIn"`
}

// Recovery counts object copies still to recover or move.
type Recovery struct {
	Degraded  int64 `json:"degraded"`
	Misplaced int64 `json:"misplaced"`
}

// ToMove is every object copy Ceph still has to recover or move.
func (r Recovery) ToMove() int64 { return r.Degraded + r.Misplaced }

// Pool is a kind of pool of the OSD map: its copies, the CRUSH type its
// rule spreads them over and the device class it takes ("": every
// class); Name is the first such pool's, Count how many there are.
type Pool struct {
	Name          string
	Size, MinSize int
	Domain, Class string
	Count         int
}

// OSD is the probed OSD.
type OSD struct {
	ID     int    `json:"id"`
	Exists bool   `json:"exists"`
	UUID   string `json:"uuid"`
	Up     bool   `json:"up"`
	In     bool   `json:"in"`
	// Host is the CRUSH host CRUSH places it under ("": none yet, it has
	// not booted), DeviceClass its class there; PGs and KB are its PGs and
	// size as `ceph osd df` reports them.
	Host        string `json:"host"`
	DeviceClass string `json:"deviceClass"`
	PGs         int    `json:"pgs"`
	KB          int64  `json:"kb"`
	// DevNode, Devices and DeviceIDs are `ceph osd metadata`: what the
	// running OSD opened when it started (not refreshed until it restarts).
	DevNode   string `json:"devNode"`
	Devices   string `json:"devices"`
	DeviceIDs string `json:"deviceIDs"`
	// SafeToDestroy is `ceph osd safe-to-destroy`'s exit code and message:
	// 0 when Ceph says so.
	SafeToDestroy struct {
		RC      int    `json:"rc"`
		Message string `json:"message"`
	} `json:"safeToDestroy"`
}

// wireFacts is the probe's answer as it prints it: the lists and counts
// as JSON arrays, to keep it short.
type wireFacts struct {
	Facts
	Pools   [][]any            `json:"pools"`
	Classes map[string][]int64 `json:"classes"`
	Host    map[string][]int64 `json:"host"`
	Missing [][]any            `json:"missing"`
}

// ParseFacts reads a probe's answer. The answer is a termination
// message, which Kubernetes cuts at 4096 bytes: a cut one does not parse,
// and says so.
func ParseFacts(answer string) (Facts, error) {
	var raw wireFacts
	if err := json.Unmarshal([]byte(answer), &raw); err != nil {
		return Facts{}, fmt.Errorf("Ceph's answer (%d bytes) does not parse: %w", len(answer), err)
	}
	f := raw.Facts
	if f.Health.Status == "" {
		return Facts{}, fmt.Errorf("Ceph's answer names no health status")
	}
	for _, p := range raw.Pools {
		pool, ok := parsePool(p)
		if !ok {
			return Facts{}, fmt.Errorf("Ceph's answer: pool %v is not [name, size, min_size, domain, class, count]", p)
		}
		f.Pools = append(f.Pools, pool)
	}
	f.Classes, f.OwnHost = map[string]Room{}, map[string]Load{}
	for class, n := range raw.Classes {
		if len(n) != 7 {
			return Facts{}, fmt.Errorf("Ceph's answer: class %q is not [hosts, hosts with the OSD's, OSDs, kb, kb_used, takers, most PGs]", class)
		}
		f.Classes[class] = Room{Hosts: int(n[0]), HostsWithOwn: int(n[1]), OSDs: int(n[2]), Load: load(n[3:])}
	}
	for class, n := range raw.Host {
		if len(n) != 4 {
			return Facts{}, fmt.Errorf("Ceph's answer: the host load of class %q is not [kb, kb_used, takers, most PGs]", class)
		}
		f.OwnHost[class] = load(n)
	}
	for _, m := range raw.Missing {
		osd, ok := parseMissing(m)
		if !ok {
			return Facts{}, fmt.Errorf("Ceph's answer: missing OSD %v is not [id, up, in, host]", m)
		}
		f.Missing = append(f.Missing, osd)
	}
	if _, ok := f.Classes[""]; !ok {
		return Facts{}, fmt.Errorf("Ceph's answer counts no OSDs")
	}
	if f.MissingCount < len(f.Missing) || f.MissingCount > 0 && len(f.Missing) == 0 {
		return Facts{}, fmt.Errorf("Ceph's answer counts %d OSDs not up and in and names %d", f.MissingCount, len(f.Missing))
	}
	return f, nil
}

func load(n []int64) Load {
	return Load{KB: n[0], KBUsed: n[1], Takers: int(n[2]), MostPGs: int(n[3])}
}

func parsePool(fields []any) (Pool, bool) {
	if len(fields) != 6 {
		return Pool{}, false
	}
	name, ok1 := fields[0].(string)
	size, ok2 := fields[1].(float64)
	minSize, ok3 := fields[2].(float64)
	domain, ok4 := fields[3].(string)
	class, ok5 := fields[4].(string)
	count, ok6 := fields[5].(float64)
	return Pool{Name: name, Size: int(size), MinSize: int(minSize), Domain: domain, Class: class, Count: int(count)}, ok1 && ok2 && ok3 && ok4 && ok5 && ok6
}

func parseMissing(fields []any) (MissingOSD, bool) {
	if len(fields) != 4 {
		return MissingOSD{}, false
	}
	id, ok1 := fields[0].(float64)
	up, ok2 := fields[1].(float64)
	in, ok3 := fields[2].(float64)
	host, ok4 := fields[3].(string)
	return MissingOSD{ID: int(id), Up: up == 1, In: in == 1, Host: host}, ok1 && ok2 && ok3 && ok4
}

// UpAndIn says whether CRUSH places osd (the probed OSD or the other one
// asked about) under a host and the OSD map has it up and in: an OSD
// ceph-volume created but that has not booted yet is in no host (it
// joins CRUSH when it first starts) and holds no data. An OSD the probe
// was not asked about is not known to be.
func (f Facts) UpAndIn(osd int) bool {
	switch {
	case f.OSD.ID == osd:
		return f.OSD.Exists && f.OSD.Host != "" && f.OSD.Up && f.OSD.In
	case f.Also != nil && f.Also.ID == osd:
		return f.Also.UpAndIn
	}
	return false
}

// SafeToDestroy says whether Ceph calls the probed OSD safe to destroy.
func (f Facts) SafeToDestroy() bool {
	return f.OSD.Exists && f.OSD.SafeToDestroy.RC == 0
}

// AllPGsActiveClean reports whether every PG is active and clean.
func (f Facts) AllPGsActiveClean() bool {
	for state, n := range f.PGStates {
		if n > 0 && !activeClean(state) {
			return false
		}
	}
	return true
}

// PGsNotActiveClean lists the states that are not active and clean, "12
// active+undersized+degraded".
func (f Facts) PGsNotActiveClean() string {
	var out []string
	for state, n := range f.PGStates {
		if n > 0 && !activeClean(state) {
			out = append(out, fmt.Sprintf("%d %s", n, state))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// unclean are the PG state parts that mean a PG is short of its copies, or
// moving them: with any of them it is not clean, whatever else it says.
var unclean = map[string]bool{
	"degraded": true, "undersized": true, "remapped": true, "backfilling": true, "backfill_wait": true,
	"backfill_toofull": true, "recovering": true, "recovery_wait": true, "recovery_toofull": true,
	"peering": true, "stale": true, "incomplete": true, "down": true, "inconsistent": true, "unknown": true,
}

// activeClean: a PG state ("active+clean+scrubbing+deep") that is active
// and clean; scrubbing, snap trimming and the like do not change that.
func activeClean(state string) bool {
	parts := strings.Split(state, "+")
	if !slices.Contains(parts, "active") || !slices.Contains(parts, "clean") {
		return false
	}
	return !slices.ContainsFunc(parts, func(p string) bool { return unclean[p] })
}
