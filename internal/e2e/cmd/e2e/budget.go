package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
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
func (r *run) cephBudgetMatches() error {
	return testenv.Eventually(r.ctx, 5*time.Minute, func(ctx context.Context) error {
		wantPools, wantRules, stores, rgwRootRules := 0, 1, 0, 0
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
				wantPools += int(pools)
				wantRules += int(rules)
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
		var pools, rules []string
		if err := r.cephJSON(ctx, &pools, "osd", "pool", "ls"); err != nil {
			return err
		}
		if err := r.cephJSON(ctx, &rules, "osd", "crush", "rule", "ls"); err != nil {
			return err
		}
		pools = slices.DeleteFunc(pools, func(p string) bool { return p == ".mgr" })
		if len(pools) != wantPools || len(rules) != wantRules {
			return fmt.Errorf("the consumers' cephBudget says %d pools (.mgr aside) and %d CRUSH rules; Ceph holds %d pools %v and %d rules %v",
				wantPools, wantRules, len(pools), pools, len(rules), rules)
		}
		r.step("Ceph holds %d pools and %d CRUSH rules, as the consumers' cephBudget says: %v", len(pools), len(rules), rules)
		return nil
	})
}
