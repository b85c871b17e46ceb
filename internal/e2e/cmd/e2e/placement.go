package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// placement is what Ceph says about where copies live: every pool's size
// and the bucket type its CRUSH rule places copies on, every PG's acting
// set, and each OSD's host and state. Every check of the join, outage and
// leave phases reads it from Ceph, never from the plugin's status.
type placement struct {
	pools map[string]cephPool // by name
	rules []string            // every CRUSH rule's name
	pgs   []placementGroup
	hosts map[int]string // OSD id -> CRUSH host
	up    map[int]bool   // OSD id -> up
}

type cephPool struct {
	id     int
	size   int
	rule   string
	domain string
	// take is the bucket its rule starts from: default, or default~<class>
	// on a device class's shadow tree.
	take string
}

// crushRule is a rule as `ceph osd crush rule dump` shows it.
type crushRule struct {
	ID    int    `json:"rule_id"`
	Name  string `json:"rule_name"`
	Steps []struct {
		Op       string `json:"op"`
		Type     string `json:"type"`
		ItemName string `json:"item_name"`
	} `json:"steps"`
}

// take is the bucket the rule starts from.
func (c crushRule) take() string {
	for _, s := range c.Steps {
		if s.Op == "take" {
			return s.ItemName
		}
	}
	return ""
}

// domain is the bucket type the rule places copies on (its last step
// naming one).
func (c crushRule) domain() string {
	domain := ""
	for _, s := range c.Steps {
		if s.Type != "" {
			domain = s.Type
		}
	}
	return domain
}

type placementGroup struct {
	id     string
	pool   string
	state  string
	acting []int
}

func (r *run) readPlacement(ctx context.Context) (*placement, error) {
	var pools []struct {
		ID   int    `json:"pool_id"`
		Name string `json:"pool_name"`
		Size int    `json:"size"`
		Rule int    `json:"crush_rule"`
	}
	if err := r.cephJSON(ctx, &pools, "osd", "pool", "ls", "detail"); err != nil {
		return nil, err
	}
	var rules []crushRule
	if err := r.cephJSON(ctx, &rules, "osd", "crush", "rule", "dump"); err != nil {
		return nil, err
	}
	var pgs struct {
		Stats []struct {
			ID     string `json:"pgid"`
			State  string `json:"state"`
			Acting []int  `json:"acting"`
		} `json:"pg_stats"`
	}
	if err := r.cephJSON(ctx, &pgs, "pg", "ls"); err != nil {
		return nil, err
	}
	var tree struct {
		Nodes []struct {
			ID       int    `json:"id"`
			Name     string `json:"name"`
			Type     string `json:"type"`
			Status   string `json:"status"`
			Children []int  `json:"children"`
		} `json:"nodes"`
	}
	if err := r.cephJSON(ctx, &tree, "osd", "tree"); err != nil {
		return nil, err
	}
	p := &placement{pools: map[string]cephPool{}, hosts: map[int]string{}, up: map[int]bool{}}
	byID := map[int]crushRule{}
	for _, rule := range rules {
		byID[rule.ID] = rule
		p.rules = append(p.rules, rule.Name)
	}
	poolName := map[string]string{}
	for _, pool := range pools {
		rule := byID[pool.Rule]
		p.pools[pool.Name] = cephPool{id: pool.ID, size: pool.Size, rule: rule.Name, domain: rule.domain(), take: rule.take()}
		poolName[strconv.Itoa(pool.ID)] = pool.Name
	}
	for _, pg := range pgs.Stats {
		poolID, _, _ := strings.Cut(pg.ID, ".")
		p.pgs = append(p.pgs, placementGroup{id: pg.ID, pool: poolName[poolID], state: pg.State, acting: pg.Acting})
	}
	for _, n := range tree.Nodes {
		switch n.Type {
		case "host":
			for _, osd := range n.Children {
				p.hosts[osd] = n.Name
			}
		case "osd":
			p.up[n.ID] = n.Status == "up"
		}
	}
	return p, nil
}

// consumerPools are the pools the consumers made: every pool but the
// manager's, which Ceph sizes itself.
func (p *placement) consumerPools() []string {
	var names []string
	for name := range p.pools {
		if name != ".mgr" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// spread checks that every consumer pool has size copies on domain and
// that every PG of it is active+clean with size OSDs in its acting set, on
// size distinct hosts when domain is host.
func (p *placement) spread(size int, domain string) error {
	for _, name := range p.consumerPools() {
		pool := p.pools[name]
		if pool.size != size || pool.domain != domain {
			return fmt.Errorf("pool %s: size %d on %s (rule %s), want %d on %s", name, pool.size, pool.domain, pool.rule, size, domain)
		}
	}
	for _, pg := range p.pgs {
		if pg.pool == ".mgr" {
			continue
		}
		if !clean(pg.state) {
			return fmt.Errorf("PG %s of %s is %s", pg.id, pg.pool, pg.state)
		}
		hosts := p.hostsOf(pg.acting)
		if len(pg.acting) != size || domain == rook.FailureDomainHost && len(hosts) != size {
			return fmt.Errorf("PG %s of %s acts on OSDs %v on hosts %v, want %d copies on %s", pg.id, pg.pool, pg.acting, hosts, size, domain)
		}
	}
	return nil
}

// hostsOf are the distinct hosts of the OSDs.
func (p *placement) hostsOf(osds []int) []string {
	var hosts []string
	for _, osd := range osds {
		if h := p.hosts[osd]; !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// allClean reports whether every PG of the consumers' pools is
// active+clean. The manager's pool is Ceph's own: three copies on three
// hosts whatever the plugin decides, so it is clean only once three nodes
// hold OSDs (HEALTH_OK says so).
func (p *placement) allClean() error {
	states := map[string]int{}
	dirty := 0
	for _, pg := range p.pgs {
		if pg.pool == ".mgr" {
			continue
		}
		states[pg.state]++
		if !clean(pg.state) {
			dirty++
		}
	}
	if dirty == 0 && len(states) > 0 {
		return nil
	}
	return fmt.Errorf("%d PGs of the consumers' pools not active+clean; by state: %v", dirty, states)
}

// clean reports whether a PG state is active+clean: every copy in place,
// perhaps being scrubbed (Ceph's routine check, which moves nothing).
func clean(state string) bool {
	rest, ok := strings.CutPrefix(state, "active+clean")
	if !ok {
		return false
	}
	for _, flag := range strings.Split(rest, "+")[1:] {
		if !slices.Contains([]string{"scrubbing", "deep", "scrub_scheduled", "snaptrim", "snaptrim_wait"}, flag) {
			return false
		}
	}
	return true
}

// moved counts the PGs whose acting set differs between before and p.
func (p *placement) moved(before *placement) int {
	was := map[string][]int{}
	for _, pg := range before.pgs {
		was[pg.id] = slices.Sorted(slices.Values(pg.acting))
	}
	n := 0
	for _, pg := range p.pgs {
		if !slices.Equal(was[pg.id], slices.Sorted(slices.Values(pg.acting))) {
			n++
		}
	}
	return n
}

// osdsOn are the OSDs CRUSH places on host.
func (p *placement) osdsOn(host string) []int {
	var osds []int
	for osd, h := range p.hosts {
		if h == host {
			osds = append(osds, osd)
		}
	}
	slices.Sort(osds)
	return osds
}
