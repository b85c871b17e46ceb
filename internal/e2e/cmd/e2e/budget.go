package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cephBudgetMatches compares what the consumers' status.cephBudget says
// they take of Ceph with what Ceph holds: its pools and its CRUSH rules,
// counted by Ceph itself. The plugin refuses consumers by these numbers
// (budget.go), so they must be Ceph's. Shared: Ceph's default rule
// replicated_rule, always there, and the .mgr pool on it once Ceph's
// manager makes one (the first e2e run had none: budget.go counts it
// anyway, one PG), and with an object store .rgw.root (one pool, with the
// rules of the store's metadata pools: the one named after it and
// <pool>_<domain> for each failure domain it has had; the three-node run
// found that it follows the store's moves, so it is not always two).
//
// And the PG copies: Σ pg_num × size over the consumers' pools (.mgr and
// the shared .rgw.root aside) is the sum of their pgCopies, the counts at
// creation budget.go holds. Ceph's autoscaler grows a pool only once its
// share of the data asks for three times its pg_num, which the e2e's few
// objects never do (growth itself was measured apart: docs/rook-contract.md).
// It may shrink one: a CephFS metadata pool, made with Ceph's default 32
// PGs, has pg_num_min 16 from `fs new`, and CI saw Ceph hold it at 16. The
// budget counts it at 32, its creation (the most it holds); such a pool is
// counted here as Rook made it.
func (r *run) cephBudgetMatches() error {
	return r.until(5*time.Minute, func(ctx context.Context) error {
		wantPools, wantRules, wantPGCopies, stores, rgwRootRules := 0, 1, 0, 0, 0
		var says []string // each consumer's pgCopies, for the error
		for _, kind := range []string{"BlockStorage", "FileStorage", "ObjectStorage"} {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion("ceph.fundament.io/v1alpha1")
			list.SetKind(kind + "List")
			if err := r.c.List(ctx, list); err != nil {
				return err
			}
			for _, c := range list.Items {
				pools, ok1, _ := unstructured.NestedInt64(c.Object, "status", "cephBudget", "pools")
				rules, ok2, _ := unstructured.NestedInt64(c.Object, "status", "cephBudget", "crushRules")
				if !ok1 || !ok2 {
					return fmt.Errorf("%s %s reports no cephBudget yet", kind, c.GetName())
				}
				pgCopies, _, _ := unstructured.NestedInt64(c.Object, "status", "cephBudget", "pgCopies")
				wantPools += int(pools)
				wantRules += int(rules)
				wantPGCopies += int(pgCopies)
				says = append(says, fmt.Sprintf("%s %s %d", kind, c.GetName(), pgCopies))
				if kind == "ObjectStorage" {
					stores++
					// .rgw.root follows the store's metadata pools, rule
					// for rule (budget.go rgwRootRules; one store here).
					rgwRootRules = max(rgwRootRules, int(rules/pools))
				}
			}
		}
		if stores > 0 {
			wantPools, wantRules = wantPools+1, wantRules+rgwRootRules
		}
		var details []poolDetail
		var rules []string
		if err := r.cephJSON(ctx, &details, "osd", "pool", "ls", "detail"); err != nil {
			return err
		}
		if err := r.cephJSON(ctx, &rules, "osd", "crush", "rule", "ls"); err != nil {
			return err
		}
		var pools, held []string
		pgCopies := 0
		for _, p := range details {
			if p.Name == ".mgr" {
				continue
			}
			pools = append(pools, p.Name)
			held = append(held, fmt.Sprintf("%s %d×%d", p.Name, p.PGNumTarget, p.Size))
			if p.Name != ".rgw.root" {
				pgCopies += p.createdPGs() * p.Size
			}
		}
		if len(pools) != wantPools || len(rules) != wantRules || pgCopies != wantPGCopies {
			return fmt.Errorf("the consumers' cephBudget says %d pools (.mgr aside), %d CRUSH rules and %d PG copies (.rgw.root aside: %s); Ceph holds %d pools, %d rules %v and %d PG copies (pg_num_target × size, a CephFS metadata pool shrunk to its pg_num_min counted at %d: %s)",
				wantPools, wantRules, wantPGCopies, strings.Join(says, ", "), len(pools), len(rules), rules, pgCopies, cephDefaultPoolPGs, strings.Join(held, ", "))
		}
		r.step("Ceph holds %d pools, %d CRUSH rules and %d PG copies, as the consumers' cephBudget says: %v", len(pools), len(rules), pgCopies, rules)
		return nil
	})
}

// cephDefaultPoolPGs is osd_pool_default_pg_num, what Ceph gives the pools
// Rook makes without a PG count (budget.go cephDefaultPoolPGs).
const cephDefaultPoolPGs = 32

// poolDetail is what the budget check reads of a pool in `ceph osd pool ls
// detail`.
type poolDetail struct {
	Name        string `json:"pool_name"`
	Size        int    `json:"size"`
	PGNumTarget int    `json:"pg_num_target"`
	Options     struct {
		PGNumMin int `json:"pg_num_min"`
	} `json:"options"`
	Applications map[string]map[string]string `json:"application_metadata"`
}

// createdPGs is the pool's PG count as Rook made it: its pg_num_target,
// but Ceph's default for a CephFS metadata pool the autoscaler has taken
// down to the pg_num_min that `fs new` set (FSCommands.cc: pg_num_min 16,
// pg_autoscale_bias 4).
func (p poolDetail) createdPGs() int {
	_, metadata := p.Applications["cephfs"]["metadata"]
	if metadata && p.Options.PGNumMin > 0 && p.PGNumTarget == p.Options.PGNumMin && p.PGNumTarget < cephDefaultPoolPGs {
		return cephDefaultPoolPGs
	}
	return p.PGNumTarget
}
