package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/rook"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tier is one consumer of the tiers phase and what Ceph must show of it.
type tier struct {
	class string
	// hosts is how many nodes have disks of the class (solidStateLoop):
	// the copies the plugin gives the pool.
	hosts int
}

// tiers proves device classes on real Ceph: the disks the cluster phase
// marked solid-state are OSDs of class ssd, the others hdd; a BlockStorage
// on each class gets a pool whose CRUSH rule takes only that class's
// shadow tree, sized on that class's hosts, every PG of it active+clean on
// OSDs of the class; each keeps the one rule named after it, as the
// plugin's budget counts. The consumers are deleted at the end, their
// pools gone from Ceph, so the later phases see the pools they expect.
func (r *run) tiers() error {
	if len(r.nodes) < 3 {
		r.step("fewer than three nodes: every disk is hdd, there is one tier")
		return nil
	}
	classes, err := r.osdClasses(r.ctx)
	if err != nil {
		return err
	}
	r.step("Ceph's device classes: %v", classNames(classes))
	if len(classes["ssd"]) != len(r.nodes)-1 || len(classes["hdd"]) < len(r.nodes) {
		return fmt.Errorf("OSDs by class %v: want %d ssd (the second disk of every node but the first) and the rest hdd", classes, len(r.nodes)-1)
	}
	tiers := []tier{{class: "ssd", hosts: len(r.nodes) - 1}, {class: "hdd", hosts: len(r.nodes)}}
	var consumers []*unstructured.Unstructured
	defer func() { r.deleteTierConsumers(consumers) }()
	for _, t := range tiers {
		bs := object("BlockStorage", "e2e-"+t.class, map[string]any{"deviceClass": t.class})
		if err := r.c.Create(r.ctx, bs); err != nil {
			return err
		}
		consumers = append(consumers, bs)
	}
	for i, t := range tiers {
		if err := r.waitPhase(consumers[i], "Ready", 10*time.Minute); err != nil {
			return err
		}
		if err := r.checkTier(consumers[i], t, classes[t.class], 1); err != nil {
			return err
		}
	}
	if err := r.classNeverLowersCopies(consumers[1], tiers[1], classes); err != nil {
		return err
	}
	if err := r.classMoveThatFits(consumers[0], tiers[1], classes); err != nil {
		return err
	}
	return r.deleteTierConsumers(consumers)
}

// classNeverLowersCopies moves the consumer on hdd (three copies on three
// hosts) to ssd, which two hosts have: the plugin refuses, with the
// numbers, and Ceph's pool stays as it was, three copies on hdd. The class
// is then set back.
func (r *run) classNeverLowersCopies(consumer *unstructured.Unstructured, was tier, classes map[string][]int) error {
	if err := r.setDeviceClass(consumer, "ssd"); err != nil {
		return err
	}
	if err := r.waitPhaseSaying(consumer, "Degraded", "device class ssd has disks on only 2 nodes", 5*time.Minute); err != nil {
		return err
	}
	msg, _, _ := unstructured.NestedString(consumer.Object, "status", "message")
	r.step("BlockStorage %s moved to ssd (2 hosts) with 3 copies: refused: %s", consumer.GetName(), msg)
	if err := r.checkTier(consumer, was, classes[was.class], 1); err != nil {
		return fmt.Errorf("after the refused class change: %w", err)
	}
	if err := r.setDeviceClass(consumer, was.class); err != nil {
		return err
	}
	return r.waitPhase(consumer, "Ready", 5*time.Minute)
}

// classMoveThatFits moves the consumer on ssd (two copies) to hdd, which
// three hosts have: its pool goes onto a new rule taking default~hdd, three
// copies on three hosts, every PG on hdd OSDs, the old rule left behind
// and counted.
func (r *run) classMoveThatFits(consumer *unstructured.Unstructured, to tier, classes map[string][]int) error {
	if err := r.setDeviceClass(consumer, to.class); err != nil {
		return err
	}
	if err := r.waitPhase(consumer, "Ready", 5*time.Minute); err != nil {
		return err
	}
	return r.checkTier(consumer, to, classes[to.class], 2)
}

// setDeviceClass patches a BlockStorage's spec.deviceClass.
func (r *run) setDeviceClass(consumer *unstructured.Unstructured, class string) error {
	patch := client.RawPatch(types.MergePatchType, mustJSON(map[string]any{"spec": map[string]any{"deviceClass": class}}))
	return r.c.Patch(r.ctx, consumer, patch)
}

// checkTier reads from Ceph that the consumer's pool is on its class alone,
// with rules CRUSH rules named after it (one when it was made on the
// class; the ones Rook moved it from stay).
func (r *run) checkTier(consumer *unstructured.Unstructured, t tier, classOSDs []int, rules int) error {
	pool := "ceph-" + consumer.GetName()
	return r.until(10*time.Minute, func(ctx context.Context) error {
		p, err := r.readPlacement(ctx)
		if err != nil {
			return err
		}
		cp, ok := p.pools[pool]
		if !ok {
			return fmt.Errorf("no pool %s in Ceph", pool)
		}
		if cp.take != "default~"+t.class {
			return fmt.Errorf("pool %s is on rule %s, which takes %q, want default~%s", pool, cp.rule, cp.take, t.class)
		}
		if cp.size != t.hosts || cp.domain != rook.FailureDomainHost {
			return fmt.Errorf("pool %s: size %d on %s, want %d on host (%s is on %d hosts)", pool, cp.size, cp.domain, t.hosts, t.class, t.hosts)
		}
		if left := rulesOf(p.rules, pool); len(left) != rules || rules == 1 && left[0] != pool {
			return fmt.Errorf("pool %s: rules %v, want %d (made on its class, Rook keeps it on the rule named after it; a move leaves the old one)", pool, left, rules)
		}
		for _, pg := range p.pgs {
			if pg.pool != pool {
				continue
			}
			if !clean(pg.state) {
				return fmt.Errorf("PG %s of %s is %s", pg.id, pool, pg.state)
			}
			for _, osd := range pg.acting {
				if !slices.Contains(classOSDs, osd) {
					return fmt.Errorf("PG %s of %s acts on osd.%d, not of class %s (%v)", pg.id, pool, osd, t.class, classOSDs)
				}
			}
			if hosts := p.hostsOf(pg.acting); len(hosts) != t.hosts {
				return fmt.Errorf("PG %s of %s acts on hosts %v, want %d", pg.id, pool, hosts, t.hosts)
			}
		}
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(consumer), consumer); err != nil {
			return err
		}
		budget, _, _ := unstructured.NestedInt64(consumer.Object, "status", "cephBudget", "crushRules")
		if budget != int64(rules) {
			return fmt.Errorf("BlockStorage %s counts %d CRUSH rules; Ceph holds %d", consumer.GetName(), budget, rules)
		}
		r.step("pool %s: rule %s takes default~%s, size %d on %d hosts, every PG active+clean on %s OSDs %v, %d CRUSH rules as the plugin counts",
			pool, cp.rule, t.class, cp.size, t.hosts, t.class, classOSDs, rules)
		return nil
	})
}

// rulesOf are the rules named after pool: the one it was made on and
// every <pool>_<domain>[_<class>] Rook moved it to.
func rulesOf(rules []string, pool string) []string {
	var names []string
	for _, rule := range rules {
		if rule == pool || strings.HasPrefix(rule, pool+"_") {
			names = append(names, rule)
		}
	}
	slices.Sort(names)
	return names
}

// osdClasses are the OSDs of each device class Ceph knows (`ceph osd crush
// class ls`, then `class ls-osd`).
func (r *run) osdClasses(ctx context.Context) (map[string][]int, error) {
	var names []string
	if err := r.cephJSON(ctx, &names, "osd", "crush", "class", "ls"); err != nil {
		return nil, err
	}
	classes := map[string][]int{}
	for _, name := range names {
		var osds []int
		if err := r.cephJSON(ctx, &osds, "osd", "crush", "class", "ls-osd", name); err != nil {
			return nil, err
		}
		slices.Sort(osds)
		classes[name] = osds
	}
	return classes, nil
}

func classNames(classes map[string][]int) []string {
	var out []string
	for name, osds := range classes {
		out = append(out, fmt.Sprintf("%s %v", name, osds))
	}
	slices.Sort(out)
	return out
}

// deleteTierConsumers deletes the phase's BlockStorages and waits until
// their pools are gone from Ceph (Rook deletes a CephBlockPool's pool when
// no image is in it). Called twice on success; the second finds nothing.
func (r *run) deleteTierConsumers(consumers []*unstructured.Unstructured) error {
	for _, c := range consumers {
		if err := r.c.Delete(r.ctx, c); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return r.until(10*time.Minute, func(ctx context.Context) error {
		p, err := r.readPlacement(ctx)
		if err != nil {
			return err
		}
		for _, c := range consumers {
			if _, ok := p.pools["ceph-"+c.GetName()]; ok {
				return fmt.Errorf("pool ceph-%s still in Ceph", c.GetName())
			}
		}
		return nil
	})
}
