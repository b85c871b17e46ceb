package cephjob

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Cluster is the picture of Ceph the probe reads (`ceph osd dump`, `osd df
// tree`, `osd crush rule dump`): every OSD with its CRUSH host and class,
// and every pool with what its rule takes. Summarize sums it as probe.py
// does, for the plugin's simulation of Ceph and for the tests that hold
// the probe's arithmetic to it.
type Cluster struct {
	OSDs  []ClusterOSD
	Pools []ClusterPool
}

// ClusterOSD is one OSD: Host is its CRUSH host ("": none, it has not
// booted), KB its size as `ceph osd df` reports it.
type ClusterOSD struct {
	ID          int
	UUID        string
	Host, Class string
	Up, In      bool
	PGs         int
	KB, KBUsed  int64
}

// ClusterPool is one pool and the failure domain and class ("": every
// class) its CRUSH rule takes.
type ClusterPool struct {
	Name          string
	Size, MinSize int
	Domain, Class string
}

// missingListed is how many OSDs that are not up and in the probe names
// (probe.py's MISSING_LISTED); the rest it counts.
const missingListed = 8

// Summarize fills in what the probe sums of c for osd (and also, when not
// negative): its pools by kind, the room of each class, the load of its
// host, the other OSDs not up and in, and the OSD itself. Health, ratios,
// PG states and safe-to-destroy are not c's to say.
func (c Cluster) Summarize(f *Facts, osd, also int) {
	f.Pools = poolKinds(c.Pools)
	f.OSD.ID, f.OSD.Exists = osd, false
	own := ClusterOSD{ID: osd}
	for _, o := range c.OSDs {
		if o.ID == osd {
			own = o
			f.OSD.Exists, f.OSD.UUID, f.OSD.Up, f.OSD.In = true, o.UUID, o.Up, o.In
			if o.Host != "" {
				f.OSD.Host, f.OSD.DeviceClass, f.OSD.PGs, f.OSD.KB = o.Host, o.Class, o.PGs, o.KB
			}
		}
		if also >= 0 && o.ID == also {
			f.Also = &AlsoOSD{ID: also, UpAndIn: o.Host != "" && o.Up && o.In}
		}
	}
	if also >= 0 && f.Also == nil {
		f.Also = &AlsoOSD{ID: also}
	}
	classes := map[string]*room{"": {}, f.OSD.DeviceClass: {}}
	for _, p := range f.Pools {
		classes[p.Class] = &room{}
	}
	hostRooms := map[string]*room{"": {}, f.OSD.DeviceClass: {}}
	f.Missing, f.MissingCount = nil, 0
	for _, o := range sortedByID(c.OSDs) {
		if o.Host == "" {
			continue
		}
		target := o.ID == osd
		for _, class := range slices.Compact([]string{"", o.Class}) {
			if r, ok := classes[class]; ok {
				r.add(o, target)
			}
			if r, ok := hostRooms[class]; ok && o.Host == own.Host {
				r.add(o, target)
			}
		}
		if !target && !(o.Up && o.In) {
			f.Missing = append(f.Missing, MissingOSD{ID: o.ID, Up: o.Up, In: o.In, Host: o.Host})
		}
	}
	slices.SortStableFunc(f.Missing, func(a, b MissingOSD) int { return cmp.Compare(b2i(a.In), b2i(b.In)) })
	f.MissingCount = len(f.Missing)
	f.Missing = f.Missing[:min(len(f.Missing), missingListed)]
	f.Classes, f.OwnHost = map[string]Room{}, map[string]Load{}
	for class, r := range classes {
		f.Classes[class] = r.Room()
	}
	for class, r := range hostRooms {
		f.OwnHost[class] = r.load
	}
}

// room counts as probe.py's Room does.
type room struct {
	hosts, hostsWithOwn map[string]bool
	osds                int
	load                Load
}

func (r *room) add(o ClusterOSD, target bool) {
	if r.hosts == nil {
		r.hosts, r.hostsWithOwn = map[string]bool{}, map[string]bool{}
	}
	upIn := o.Up && o.In
	if upIn || target {
		r.hostsWithOwn[o.Host] = true
	}
	if o.In || target {
		r.load.KB += o.KB
		r.load.KBUsed += o.KBUsed
	}
	if upIn && !target {
		r.hosts[o.Host] = true
		r.osds++
		r.load.Takers++
		r.load.MostPGs = max(r.load.MostPGs, o.PGs)
	}
}

func (r *room) Room() Room {
	return Room{Hosts: len(r.hosts), HostsWithOwn: len(r.hostsWithOwn), OSDs: r.osds, Load: r.load}
}

// poolKinds groups pools as probe.py does: one entry per (copies,
// min_size, domain, class), named by its first pool, sorted by name.
func poolKinds(pools []ClusterPool) []Pool {
	type kind struct {
		size, minSize int
		domain, class string
	}
	index := map[kind]int{}
	var kinds []Pool
	for _, p := range pools {
		k := kind{p.Size, p.MinSize, p.Domain, p.Class}
		if i, ok := index[k]; ok {
			kinds[i].Count++
			continue
		}
		index[k] = len(kinds)
		kinds = append(kinds, Pool{Name: p.Name, Size: p.Size, MinSize: p.MinSize, Domain: p.Domain, Class: p.Class, Count: 1})
	}
	slices.SortFunc(kinds, func(a, b Pool) int { return cmp.Compare(a.Name, b.Name) })
	return kinds
}

func sortedByID(osds []ClusterOSD) []ClusterOSD {
	return slices.SortedFunc(slices.Values(osds), func(a, b ClusterOSD) int { return cmp.Compare(a.ID, b.ID) })
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Wire is f as probe.py prints it, which ParseFacts reads back: the
// simulation of Ceph answers with it.
func (f Facts) Wire() (string, error) {
	pools := make([][]any, 0, len(f.Pools))
	for _, p := range f.Pools {
		pools = append(pools, []any{p.Name, p.Size, p.MinSize, p.Domain, p.Class, p.Count})
	}
	classes := map[string][]int64{}
	for class, r := range f.Classes {
		classes[class] = append([]int64{int64(r.Hosts), int64(r.HostsWithOwn), int64(r.OSDs)}, r.Load.wire()...)
	}
	host := map[string][]int64{}
	for class, l := range f.OwnHost {
		host[class] = l.wire()
	}
	missing := make([][]any, 0, len(f.Missing))
	for _, m := range f.Missing {
		missing = append(missing, []any{m.ID, b2i(m.Up), b2i(m.In), m.Host})
	}
	b, err := json.Marshal(wireFacts{f, pools, classes, host, missing})
	return string(b), err
}

func (l Load) wire() []int64 {
	return []int64{l.KB, l.KBUsed, int64(l.Takers), int64(l.MostPGs)}
}
