package helmexec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// The test binary doubles as a fake helper: with fakeMode set it behaves
// as the mode says instead of running the tests, writing what it saw into
// the folder fakeDir names.
const (
	fakeMode = "HELMEXEC_FAKE_MODE"
	fakeDir  = "HELMEXEC_FAKE_DIR"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeMode); mode != "" {
		os.Exit(fakeHelper(mode, os.Getenv(fakeDir)))
	}
	os.Exit(m.Run())
}

// seen is what the "answer" fake records.
type seen struct {
	Args           []string
	Request        helmexec.Request
	Kubeconfig     string
	KubeconfigPath string
	KubeconfigMode os.FileMode
}

func fakeHelper(mode, dir string) int {
	_ = os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	switch mode {
	case "answer":
		var s seen
		s.Args = os.Args[1:]
		if err := json.NewDecoder(os.Stdin).Decode(&s.Request); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		for _, arg := range s.Args {
			if path, ok := strings.CutPrefix(arg, "--kubeconfig="); ok {
				s.KubeconfigPath = path
				data, _ := os.ReadFile(path)
				s.Kubeconfig = string(data)
				if info, err := os.Stat(path); err == nil {
					s.KubeconfigMode = info.Mode().Perm()
				}
			}
		}
		data, _ := json.Marshal(s)
		_ = os.WriteFile(filepath.Join(dir, "seen.json"), data, 0o644)
		fmt.Fprintln(os.Stderr, `{"level":"INFO","msg":"helm release reconciled"}`)
		fmt.Println(`{"action":"installed","revision":3}`)
		return 0
	case "fail":
		fmt.Fprintln(os.Stderr, `{"level":"ERROR","msg":"helm release failed"}`)
		fmt.Println(`{"error":"locate chart rook-ceph v9.9.9 in http://charts.example: chart not found"}`)
		return 1
	case "fail-permanent":
		fmt.Println(`{"error":"chart rook-ceph v1.18.0: the archive's digest is sha256:1, not the pinned sha256:2","permanent":true}`)
		return 1
	case "crash":
		fmt.Fprint(os.Stderr, "starting\npanic: boom\n\ngoroutine 1 [running]:\nmain.main()\n")
		return 2
	case "silent-success":
		return 0
	case "wait-for-term":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o644)
		<-term
		_ = os.WriteFile(filepath.Join(dir, "terminated"), nil, 0o644)
		fmt.Println(`{"error":"context canceled"}`)
		return 1
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o644)
		time.Sleep(time.Hour)
		return 0
	case "parent":
		// A plugin that runs a helper which outlives its patience: the
		// test kills this process and watches the helper die with it.
		os.Setenv(fakeMode, "ignore-term")
		_, err := helmexec.Runner{Binary: os.Args[0]}.InstallOrUpgrade(context.Background(), testConfig(), testRequest())
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 4
}

func testConfig() *rest.Config {
	return &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "t0ken", QPS: 250, Burst: 500}
}

func testRequest() helmexec.Request {
	return helmexec.Request{
		Name: "rook-ceph", Namespace: "rook-ceph",
		Chart:     helmexec.Chart{RepoURL: "http://charts.example", Name: "rook-ceph", Version: "v1.18.0"},
		Values:    map[string]any{"csi": map[string]any{"enableRbdDriver": true}, "replicas": 3},
		Exclusive: true,
	}
}

// fake makes the next helper run in mode and returns the folder it writes
// into.
func fake(t *testing.T, mode string) string {
	dir := t.TempDir()
	t.Setenv(fakeMode, mode)
	t.Setenv(fakeDir, dir)
	return dir
}

func runner(stderr io.Writer) helmexec.Runner {
	return helmexec.Runner{Binary: os.Args[0], Stderr: stderr}
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, 10*time.Second, 10*time.Millisecond, "%s never appeared", path)
}

func TestRunnerSendsTheRequestAndReturnsTheAnswer(t *testing.T) {
	dir := fake(t, "answer")
	var stderr bytes.Buffer

	res, err := runner(&stderr).InstallOrUpgrade(context.Background(), testConfig(), testRequest())

	require.NoError(t, err)
	assert.Equal(t, helmexec.Response{Action: "installed", Revision: 3}, res)
	assert.Contains(t, stderr.String(), "helm release reconciled", "the helper's log is passed through")
	data, err := os.ReadFile(filepath.Join(dir, "seen.json"))
	require.NoError(t, err)
	var s seen
	require.NoError(t, json.Unmarshal(data, &s))
	want := testRequest()
	want.Values["replicas"] = float64(3) // values travel as JSON
	assert.Equal(t, want, s.Request)
	assert.Contains(t, s.Args, "--kube-api-qps=250")
	assert.Contains(t, s.Args, "--kube-api-burst=500")
	assert.Contains(t, s.Kubeconfig, "server: https://127.0.0.1:6443")
	assert.Equal(t, os.FileMode(0o600), s.KubeconfigMode, "the kubeconfig holds credentials")
	assert.NoFileExists(t, s.KubeconfigPath, "the kubeconfig is removed afterwards")
}

func TestRunnerFailures(t *testing.T) {
	tests := []struct {
		name      string
		mode      string
		want      []string
		permanent bool
	}{
		{
			name: "the helper's error message is the error",
			mode: "fail",
			want: []string{filepath.Base(os.Args[0]) + ": locate chart rook-ceph v9.9.9 in http://charts.example: chart not found"},
		},
		{
			name:      "a failure the helper calls permanent stays permanent across the process boundary",
			mode:      "fail-permanent",
			want:      []string{"not the pinned sha256:2"},
			permanent: true,
		},
		{
			name: "a helper that dies without answering is reported with the end of its stderr",
			mode: "crash",
			want: []string{"failed without answering: exit status 2", "its stderr ends with:", "panic: boom", "main.main()"},
		},
		{
			name: "a helper that exits cleanly without an answer is an error",
			mode: "silent-success",
			want: []string{"exited without a valid answer on stdout", "its stderr was empty"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake(t, tc.mode)

			_, err := runner(io.Discard).InstallOrUpgrade(context.Background(), testConfig(), testRequest())

			require.Error(t, err)
			for _, want := range tc.want {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, tc.permanent, pluginerrors.IsPermanent(err), "permanent")
		})
	}
}

func TestRunnerStopsTheHelperWithSIGTERMWhenTheContextEnds(t *testing.T) {
	dir := fake(t, "wait-for-term")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForFile(t, filepath.Join(dir, "started"))
		cancel()
	}()

	start := time.Now()
	_, err := runner(io.Discard).InstallOrUpgrade(ctx, testConfig(), testRequest())

	require.ErrorIs(t, err, context.Canceled)
	assert.FileExists(t, filepath.Join(dir, "terminated"), "the helper got SIGTERM and could clean up")
	assert.Less(t, time.Since(start), helmexec.DefaultStopGrace, "it exited on SIGTERM, not on the kill after the grace")
}

func TestRunnerKillsAHelperThatIgnoresSIGTERM(t *testing.T) {
	dir := fake(t, "ignore-term")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForFile(t, filepath.Join(dir, "started"))
		cancel()
	}()
	r := runner(io.Discard)
	r.StopGrace = 200 * time.Millisecond

	_, err := r.InstallOrUpgrade(ctx, testConfig(), testRequest())

	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, alive(t, readPid(t, dir)), "the helper was killed after the grace")
}

func TestTheHelperDiesWithItsParent(t *testing.T) {
	dir := fake(t, "parent")
	parent := exec.Command(os.Args[0])
	require.NoError(t, parent.Start())
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	waitForFile(t, filepath.Join(dir, "started"))
	helper := readPid(t, dir)
	require.NotEqual(t, parent.Process.Pid, helper, "the helper, not the parent, wrote the pid last")
	t.Cleanup(func() { _ = syscall.Kill(helper, syscall.SIGKILL) }) // should it survive after all
	require.True(t, alive(t, helper))

	require.NoError(t, parent.Process.Kill())
	_ = parent.Wait()

	assert.Eventually(t, func() bool { return !alive(t, helper) }, 10*time.Second, 20*time.Millisecond,
		"a helper must not outlive the plugin that holds the install lock")
}

func readPid(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(data))
	require.NoError(t, err)
	return pid
}

// alive reports whether pid runs; a zombie no one has reaped yet (in a
// container without an init) counts as dead.
func alive(t *testing.T, pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	// The state follows the command name, which is in parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return fields[0] != "Z" && fields[0] != "X"
}

func TestLocate(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)

	t.Run("beside the executable comes first", func(t *testing.T) {
		name := fmt.Sprintf("helmexec-beside-%d", os.Getpid())
		beside := filepath.Join(filepath.Dir(self), name)
		require.NoError(t, os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755))
		t.Cleanup(func() { _ = os.Remove(beside) })
		onPath := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(onPath, name), []byte("#!/bin/sh\n"), 0o755))
		t.Setenv("PATH", onPath)

		got, err := helmexec.Locate(name)

		require.NoError(t, err)
		assert.Equal(t, beside, got)
	})
	t.Run("else on PATH", func(t *testing.T) {
		onPath := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(onPath, "helmexec-on-path"), []byte("#!/bin/sh\n"), 0o755))
		t.Setenv("PATH", onPath)

		got, err := helmexec.Locate("helmexec-on-path")

		require.NoError(t, err)
		assert.Equal(t, filepath.Join(onPath, "helmexec-on-path"), got)
	})
	t.Run("missing names both places", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())

		_, err := helmexec.Locate("helmexec-missing")

		require.ErrorIs(t, err, helmexec.ErrNotFound)
		assert.Contains(t, err.Error(), filepath.Join(filepath.Dir(self), "helmexec-missing"))
		assert.Contains(t, err.Error(), "$PATH")
	})
}

func TestHelperEnvKeepsHelmOutOfHome(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{
		{
			name:    "Helm's homes go under the temp folder",
			environ: []string{"HOME=/", "PATH=/bin"},
			want:    []string{"HOME=/", "PATH=/bin", "HELM_CACHE_HOME=/tmp/h/cache", "HELM_CONFIG_HOME=/tmp/h/config", "HELM_DATA_HOME=/tmp/h/data"},
		},
		{
			name:    "a home the environment sets is kept",
			environ: []string{"HELM_CACHE_HOME=/var/cache/helm"},
			want:    []string{"HELM_CACHE_HOME=/var/cache/helm", "HELM_CONFIG_HOME=/tmp/h/config", "HELM_DATA_HOME=/tmp/h/data"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := slices.Clone(tc.environ)
			assert.Equal(t, tc.want, helmexec.HelperEnv(tc.environ, "/tmp/h"))
			assert.Equal(t, environ, tc.environ, "the caller's slice is not changed")
		})
	}
}
