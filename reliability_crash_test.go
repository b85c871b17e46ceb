package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// crashRun is one plugin-crash experiment.
type crashRun struct {
	// kills is how many times the plugin is SIGKILLed.
	kills int
	// scenario names the scenario (runs with the same name, nodes and
	// perNode share the uninterrupted reference run); nodes and perNode
	// size it.
	scenario       string
	nodes, perNode int
	// maxGap bounds the random time a plugin runs before it is killed.
	maxGap time.Duration
	// env is extra FUNP_ settings for every process.
	env []string
}

// The crash namespaces differ from each other, as in the reference run, so
// that their placeholders line up.
var crashConfig = Config{OperatorNamespace: "crash-rook", ClusterNamespace: "crash-rook"}

// TestReliabilityPluginCrashes runs the plugin binary and SIGKILLs it at 10
// random moments, the first three during the install, the others after it,
// restarting it each time, while it converges a scenario. Convergence is slowed (20 requests a
// second) so the kills land in the middle of it. The end state equals an
// uninterrupted run's, with no duplicate Disk and no claimed device ever
// leaving the CephCluster. Leader election is off here: each restart would
// otherwise wait out the dead process's lease (the soak form keeps it on).
func TestReliabilityPluginCrashes(t *testing.T) {
	runCrashes(t, crashRun{kills: 10, scenario: "rel", nodes: 3, perNode: 10, maxGap: 1500 * time.Millisecond,
		env: []string{"FUNP_LEADER_ELECTION=false", "FUNP_KUBE_API_QPS=20", "FUNP_KUBE_API_BURST=20"}})
}

// leaseHolder is who holds the plugin's leader Lease.
func leaseHolder(ctx context.Context, cp *testenv.Env, namespace string) (string, error) {
	var lease coordinationv1.Lease
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "ceph-rook-plugin"}, &lease); err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

func runCrashes(t *testing.T, run crashRun) {
	sc := newScenario(t, run.scenario, run.nodes, run.perNode)
	want := referenceState(t, fmt.Sprintf("%s-%d-%d", run.scenario, run.nodes, run.perNode), sc)
	binary := pluginBinary(t)
	cp := bareControlPlane(t)
	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	logPath := filepath.Join(t.TempDir(), "plugin.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("plugin log (end):\n%s", tail(string(data), 80))
		}
	})
	env := append([]string{"FUNP_OPERATOR_NAMESPACE=" + crashConfig.OperatorNamespace, "FUNP_CLUSTER_NAMESPACE=" + crashConfig.ClusterNamespace}, run.env...)

	inv := watchNothingLost(t, cp.Config, crashConfig.ClusterNamespace)
	inv.protect(sc.claimed...)
	for _, ns := range []string{crashConfig.OperatorNamespace, crashConfig.ClusterNamespace} {
		require.NoError(t, createNamespaceIfMissing(ctx, cp.Client, ns))
	}
	require.NoError(t, sc.publish(ctx, cp.Client, crashConfig.OperatorNamespace))
	// Pools and consumers go in as soon as the plugin has installed their
	// CRDs, whichever run of it that is.
	requested := make(chan error, 1)
	go func() { requested <- sc.request(ctx, cp.Client, crashConfig.ClusterNamespace, 10*time.Minute) }()

	var killedIn []string
	const earlyKills = 3
	leaderElection := !slices.Contains(run.env, "FUNP_LEADER_ELECTION=false")
	lastHolder := ""
	for i := range run.kills {
		p := startPluginProcess(t, binary, cp, repo, logFile, env...)
		// Wait until it serves, so the moment of the kill is known; the
		// first kills come early, during the install.
		err := testenv.Eventually(ctx, time.Minute, func(ctx context.Context) error {
			if !p.Alive() {
				return fmt.Errorf("the plugin exited: %v", p.Err())
			}
			_, _, err := pluginStatusAt(ctx, p.Addr)
			return err
		})
		require.NoError(t, err, "run %d serves its metadata API", i+1)
		// The first kills hit the install; the others come at a random
		// moment after the install, during convergence.
		gap := time.Duration(rnd.Int64N(int64(300 * time.Millisecond)))
		if i >= earlyKills {
			err := testenv.Eventually(ctx, 2*time.Minute, func(ctx context.Context) error {
				phase, message, err := pluginStatusAt(ctx, p.Addr)
				if err == nil && phase != string(pluginruntime.PhaseRunning) {
					err = fmt.Errorf("%s: %s", phase, message)
				}
				return err
			})
			require.NoError(t, err, "run %d installs", i+1)
			if leaderElection {
				// Running is not writing: a restarted instance first waits
				// out the dead one's lease. Kill it only once it leads.
				err := testenv.Eventually(ctx, 2*time.Minute, func(ctx context.Context) error {
					holder, err := leaseHolder(ctx, cp, crashConfig.OperatorNamespace)
					if err == nil && (holder == "" || holder == lastHolder) {
						err = fmt.Errorf("lease held by %q", holder)
					}
					if err == nil {
						lastHolder = holder
					}
					return err
				})
				require.NoError(t, err, "run %d leads", i+1)
			}
			gap = time.Duration(rnd.Int64N(int64(run.maxGap)))
		}
		time.Sleep(gap)
		phase, _, err := pluginStatusAt(ctx, p.Addr)
		if err != nil {
			phase = "unreachable"
		}
		require.True(t, p.Alive(), "run %d is still up before its kill: %v", i+1, p.Err())
		p.Kill()
		killedIn = append(killedIn, phase)
		t.Logf("kill %d after %s, while %s", i+1, gap.Round(time.Millisecond), phase)
	}
	assert.Contains(t, killedIn, string(pluginruntime.PhaseInstalling), "some kill landed during the install")

	final := startPluginProcess(t, binary, cp, repo, logFile, env...)
	require.NoError(t, <-requested, "pools and consumers were created")
	waitState(t, ctx, cp.Client, crashConfig, want, 5*time.Minute)
	err = testenv.Eventually(ctx, 2*time.Minute, func(ctx context.Context) error {
		if !final.Alive() {
			return fmt.Errorf("the plugin exited: %v", final.Err())
		}
		phase, message, err := pluginStatusAt(ctx, final.Addr)
		if err == nil && phase != string(pluginruntime.PhaseRunning) {
			err = fmt.Errorf("%s: %s", phase, message)
		}
		return err
	})
	require.NoError(t, err, "the last run reports running")
	noDuplicateDisks(t, ctx, cp.Client)
	inv.check(ctx)
	t.Logf("kills landed while: %s", strings.Join(killedIn, ", "))
}
