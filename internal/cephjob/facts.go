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
	Pools       []Pool  `json:"-"`
	// PGStates counts PGs by state ("active+clean": 201).
	PGStates map[string]int `json:"pgs"`
	// Recovery is how many object copies Ceph still has to recover
	// (degraded) or move (misplaced): what a drain moves, object by
	// object, however big its PGs are.
	Recovery Recovery `json:"recovery"`
	Hosts    []Host   `json:"-"`
	OSD      OSD      `json:"osd"`
	// Truncated: the cluster was too large for the answer, and Hosts holds
	// the OSD's own host only.
	Truncated bool `json:"truncated"`
}

// Recovery counts object copies still to recover or move.
type Recovery struct {
	Degraded  int64 `json:"degraded"`
	Misplaced int64 `json:"misplaced"`
}

// ToMove is every object copy Ceph still has to recover or move.
func (r Recovery) ToMove() int64 { return r.Degraded + r.Misplaced }

// Pool is one pool of the OSD map: its copies and the CRUSH type its
// rule spreads them over.
type Pool struct {
	Name          string
	Size, MinSize int
	Domain        string
}

// Host is one CRUSH host and its OSDs.
type Host struct {
	Name string    `json:"name"`
	OSDs []HostOSD `json:"-"`
}

// HostOSD is one OSD as `ceph osd df tree` and the OSD map see it.
type HostOSD struct {
	ID         int
	Up, In     bool
	PGs        int
	KB, KBUsed int64
}

// OSD is the probed OSD.
type OSD struct {
	ID     int    `json:"id"`
	Exists bool   `json:"exists"`
	UUID   string `json:"uuid"`
	Up     bool   `json:"up"`
	In     bool   `json:"in"`
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

// ParseFacts reads a probe's answer. The answer is a termination
// message, which Kubernetes cuts at 4096 bytes: a cut one does not parse,
// and says so.
func ParseFacts(answer string) (Facts, error) {
	var raw struct {
		Facts
		Pools []json.RawMessage `json:"pools"`
		Hosts []struct {
			Name string    `json:"name"`
			OSDs [][]int64 `json:"osds"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(answer), &raw); err != nil {
		return Facts{}, fmt.Errorf("Ceph's answer (%d bytes) does not parse: %w", len(answer), err)
	}
	f := raw.Facts
	f.Pools, f.Hosts = nil, nil
	for _, p := range raw.Pools {
		var fields []any
		if err := json.Unmarshal(p, &fields); err != nil || len(fields) != 4 {
			return Facts{}, fmt.Errorf("Ceph's answer: pool %s is not [name, size, min_size, domain]", p)
		}
		name, _ := fields[0].(string)
		size, _ := fields[1].(float64)
		minSize, _ := fields[2].(float64)
		domain, _ := fields[3].(string)
		f.Pools = append(f.Pools, Pool{Name: name, Size: int(size), MinSize: int(minSize), Domain: domain})
	}
	for _, h := range raw.Hosts {
		host := Host{Name: h.Name}
		for _, o := range h.OSDs {
			if len(o) != 6 {
				return Facts{}, fmt.Errorf("Ceph's answer: an OSD of host %s is not [id, up, in, pgs, kb, kb_used]", h.Name)
			}
			host.OSDs = append(host.OSDs, HostOSD{ID: int(o[0]), Up: o[1] == 1, In: o[2] == 1, PGs: int(o[3]), KB: o[4], KBUsed: o[5]})
		}
		f.Hosts = append(f.Hosts, host)
	}
	if f.Health.Status == "" {
		return Facts{}, fmt.Errorf("Ceph's answer names no health status")
	}
	return f, nil
}

// HostOf is the host that holds osd, and whether one does.
func (f Facts) HostOf(osd int) (Host, bool) {
	for _, h := range f.Hosts {
		for _, o := range h.OSDs {
			if o.ID == osd {
				return h, true
			}
		}
	}
	return Host{}, false
}

// hostOSD is osd as CRUSH places it under a host, and whether it does.
func (f Facts) hostOSD(osd int) (HostOSD, bool) {
	h, _ := f.HostOf(osd)
	for _, o := range h.OSDs {
		if o.ID == osd {
			return o, true
		}
	}
	return HostOSD{}, false
}

// UpAndIn says whether CRUSH places osd under a host and the OSD map has
// it up and in: an OSD ceph-volume created but that has not booted yet is
// in no host (it joins CRUSH when it first starts) and holds no data.
func (f Facts) UpAndIn(osd int) bool {
	o, _ := f.hostOSD(osd)
	return o.Up && o.In
}

// PGsOn is how many PGs Ceph maps to osd.
func (f Facts) PGsOn(osd int) int {
	o, _ := f.hostOSD(osd)
	return o.PGs
}

// SafeToDestroy says whether Ceph calls the probed OSD safe to destroy.
func (f Facts) SafeToDestroy() bool {
	return f.OSD.Exists && f.OSD.SafeToDestroy.RC == 0
}

// OSDCount is how many OSDs the CRUSH hosts hold; a lower bound when the
// answer was Truncated.
func (f Facts) OSDCount() int {
	n := 0
	for _, h := range f.Hosts {
		n += len(h.OSDs)
	}
	return n
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
