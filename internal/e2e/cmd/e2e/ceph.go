package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// ceph makes real OSDs from a DiskPool of the loop Disks and a real pool
// from a BlockStorage, and reads the pool's size and CRUSH failure domain
// from Ceph itself to compare them with the consumer's status.
func (r *run) ceph() error {
	pool := object("DiskPool", "e2e", map[string]any{"disks": r.disks})
	if err := r.c.Create(r.ctx, pool); err != nil {
		return err
	}
	if err := r.waitPhase(pool, "Ready", 2*time.Minute); err != nil {
		return err
	}
	r.step("DiskPool e2e Ready with %v", r.disks)
	if err := testenv.Eventually(r.ctx, 15*time.Minute, func(ctx context.Context) error {
		out, err := r.cephCLI(ctx, "osd", "stat", "--format=json")
		if err != nil {
			return err
		}
		var stat struct {
			Up int `json:"num_up_osds"`
		}
		if err := json.Unmarshal([]byte(out), &stat); err != nil {
			return fmt.Errorf("ceph osd stat: %w: %s", err, out)
		}
		if stat.Up < len(r.disks) {
			return fmt.Errorf("%d of %d OSDs up", stat.Up, len(r.disks))
		}
		return nil
	}); err != nil {
		return err
	}
	r.step("Ceph: %d OSDs up", len(r.disks))

	block := object("BlockStorage", "e2e", map[string]any{})
	if err := r.c.Create(r.ctx, block); err != nil {
		return err
	}
	if err := r.waitPhase(block, "Ready", 10*time.Minute); err != nil {
		return err
	}
	replicas, _, _ := unstructured.NestedInt64(block.Object, "status", "replicas")
	domain, _, _ := unstructured.NestedString(block.Object, "status", "failureDomain")
	size, err := r.cephCLI(r.ctx, "osd", "pool", "get", "ceph-e2e", "size", "--format=json")
	if err != nil {
		return err
	}
	var got struct {
		Size int64 `json:"size"`
	}
	if err := json.Unmarshal([]byte(size), &got); err != nil {
		return fmt.Errorf("pool size: %w: %s", err, size)
	}
	rule, err := r.cephCLI(r.ctx, "osd", "pool", "get", "ceph-e2e", "crush_rule", "--format=json")
	if err != nil {
		return err
	}
	var crush struct {
		Rule string `json:"crush_rule"`
	}
	if err := json.Unmarshal([]byte(rule), &crush); err != nil {
		return err
	}
	dump, err := r.cephCLI(r.ctx, "osd", "crush", "rule", "dump", crush.Rule, "--format=json")
	if err != nil {
		return err
	}
	var steps struct {
		Steps []struct {
			Type string `json:"type"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(dump), &steps); err != nil {
		return err
	}
	var cephDomain string
	for _, s := range steps.Steps {
		if s.Type != "" {
			cephDomain = s.Type
		}
	}
	r.step("BlockStorage e2e Ready: status replicas %d on %s; Ceph pool ceph-e2e size %d, CRUSH rule %s places on %s",
		replicas, domain, got.Size, crush.Rule, cephDomain)
	if got.Size != replicas || cephDomain != domain {
		return fmt.Errorf("Ceph's pool (size %d, domain %s) differs from the status (%d, %s)", got.Size, cephDomain, replicas, domain)
	}
	health, err := r.cephCLI(r.ctx, "health", "detail")
	r.step("Ceph health: %s", strings.ReplaceAll(strings.TrimSpace(health), "\n", "; "))
	return err
}

func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	o.SetAPIVersion("ceph.fundament.io/v1alpha1")
	o.SetKind(kind)
	o.SetName(name)
	return o
}

func (r *run) waitPhase(obj *unstructured.Unstructured, phase string, timeout time.Duration) error {
	return testenv.Eventually(r.ctx, timeout, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		if got != phase {
			msg, _, _ := unstructured.NestedString(obj.Object, "status", "message")
			return fmt.Errorf("%s %s is %q (%s)", obj.GetKind(), obj.GetName(), got, msg)
		}
		return nil
	})
}

// cephCLI runs the Ceph CLI in Rook's operator pod, with the admin
// credentials Rook keeps there.
func (r *run) cephCLI(ctx context.Context, args ...string) (string, error) {
	base := []string{"-n", "rook-ceph", "exec", "deploy/rook-ceph-operator", "--", "ceph",
		"--conf=/var/lib/rook/rook-ceph/rook-ceph.config", "--keyring=/var/lib/rook/rook-ceph/client.admin.keyring", "--name=client.admin"}
	return r.kubectlOut(append(base, args...)...)
}
