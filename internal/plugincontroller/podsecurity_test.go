package plugincontroller

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// renderedPod is a Pod made from the Deployment's pod template, as the
// ReplicaSet controller would make it, in namespace ns.
func renderedPod(ns, name string) *corev1.Pod {
	inst, def := testInstallation(nil)
	tmpl := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster}).Deployment.Spec.Template
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: tmpl.Labels, Annotations: tmpl.Annotations},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
}

// TestRenderedPodIsAdmittedUnderRestricted creates the rendered pod in a
// namespace that enforces Pod Security "restricted" on the real API
// server, which is where Pod Security admission runs.
func TestRenderedPodIsAdmittedUnderRestricted(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("restricted-%d", time.Now().UnixNano()),
		Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         "restricted",
			"pod-security.kubernetes.io/enforce-version": "latest",
		},
	}}
	require.NoError(t, env.Client.Create(ctx, ns))
	t.Cleanup(func() { _ = env.Client.Delete(ctx, ns) })
	require.NoError(t, env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: ObjectName}}))

	t.Run("the rendered pod is admitted", func(t *testing.T) {
		pod := renderedPod(ns.Name, "plugin")
		require.NoError(t, env.Client.Create(ctx, pod), "Pod Security restricted admits the plugin's pod")
	})
	// Without these the check above could pass because nothing enforces.
	refused := map[string]func(*corev1.PodSpec){
		"without seccomp": func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
		"with privilege escalation": func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptrTo(true)
		},
		"with its capabilities kept": func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil },
		"as root":                    func(s *corev1.PodSpec) { s.SecurityContext.RunAsUser = ptrTo(int64(0)) },
	}
	for name, mutate := range refused {
		t.Run("a pod "+name+" is refused", func(t *testing.T) {
			pod := renderedPod(ns.Name, "control-"+strings.ReplaceAll(name, " ", "-"))
			mutate(&pod.Spec)
			err := env.Client.Create(ctx, pod)
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "forbidden by Pod Security, got %v", err)
			assert.Contains(t, err.Error(), "restricted")
		})
	}
}

// TestRenderedPodRunsAsTheImagesUser pins what a kubelet checks before it
// starts the container and what the runtime needs to stop in time.
func TestRenderedPodRunsAsTheImagesUser(t *testing.T) {
	spec := renderedPod("ns", "plugin").Spec
	c := spec.Containers[0]

	t.Run("a numeric non-root user the kubelet can verify", func(t *testing.T) {
		require.NotNil(t, spec.SecurityContext.RunAsUser, "runAsNonRoot with a non-numeric image user and no runAsUser is CreateContainerConfigError")
		assert.True(t, *spec.SecurityContext.RunAsNonRoot)
		assert.NotZero(t, *spec.SecurityContext.RunAsUser)
		assert.Equal(t, PluginUser, *spec.SecurityContext.RunAsUser)
		assert.Equal(t, PluginUser, *spec.SecurityContext.RunAsGroup)
	})
	t.Run("every Dockerfile's final USER is that user, by number", func(t *testing.T) {
		for _, path := range []string{"Dockerfile", filepath.Join("cmd", "plugin-controller", "Dockerfile")} {
			uid, gid := dockerfileUser(t, filepath.Join(testenv.RepoRoot(), path))
			assert.Equal(t, PluginUser, uid, "%s: USER's user", path)
			assert.Equal(t, PluginUser, gid, "%s: USER's group", path)
		}
	})
	t.Run("every Dockerfile's base images are pinned by digest", func(t *testing.T) {
		for _, path := range []string{"Dockerfile", filepath.Join("cmd", "plugin-controller", "Dockerfile")} {
			for _, image := range dockerfileBases(t, filepath.Join(testenv.RepoRoot(), path)) {
				assert.Regexp(t, `^[^@\s]+:[^@\s]+@sha256:[0-9a-f]{64}$`, image, "%s: a base image by tag and digest, so a re-pushed tag cannot change the build", path)
			}
		}
	})
	t.Run("a read-only root with a writable /tmp for the Helm helper", func(t *testing.T) {
		assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem)
		require.Equal(t, []corev1.VolumeMount{{Name: TmpVolumeName, MountPath: "/tmp"}}, c.VolumeMounts)
		require.Len(t, spec.Volumes, 1)
		assert.Equal(t, TmpVolumeName, spec.Volumes[0].Name)
		require.NotNil(t, spec.Volumes[0].EmptyDir, "an emptyDir")
		assert.Equal(t, "/tmp", os.TempDir(), "the helper and Helm write under os.TempDir, which is /tmp without $TMPDIR")
	})
	t.Run("resources cover the measured install peak", func(t *testing.T) {
		assert.Equal(t, "128Mi", c.Resources.Requests.Memory().String())
		assert.Equal(t, "100m", c.Resources.Requests.Cpu().String())
		assert.Equal(t, "256Mi", c.Resources.Limits.Memory().String())
		assert.True(t, c.Resources.Limits.Cpu().IsZero(), "no CPU limit")
	})
	t.Run("the grace period outlasts the runtime's shutdown deadline", func(t *testing.T) {
		require.NotNil(t, spec.TerminationGracePeriodSeconds)
		assert.Greater(t, time.Duration(*spec.TerminationGracePeriodSeconds)*time.Second, pluginruntime.DefaultShutdownTimeout)
	})
}

// dockerfileBases lists the image of every FROM in a Dockerfile.
func dockerfileBases(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var images []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && strings.EqualFold(fields[0], "FROM") {
			images = append(images, fields[1])
		}
	}
	require.NotEmpty(t, images, "%s: no FROM", path)
	return images
}

// dockerfileUser reads the USER of a Dockerfile's final stage and fails
// unless it is numeric "uid:gid".
func dockerfileUser(t *testing.T, path string) (uid, gid int64) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var user string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		switch {
		case len(fields) >= 1 && strings.EqualFold(fields[0], "FROM"):
			user = "" // a new stage starts as root
		case len(fields) == 2 && strings.EqualFold(fields[0], "USER"):
			user = fields[1]
		}
	}
	require.NoError(t, scanner.Err())
	u, g, ok := strings.Cut(user, ":")
	require.True(t, ok, "%s: the final stage's USER %q names no group", path, user)
	uid, err = strconv.ParseInt(u, 10, 64)
	require.NoError(t, err, "%s: USER %q is not numeric", path, user)
	gid, err = strconv.ParseInt(g, 10, 64)
	require.NoError(t, err, "%s: USER %q has a non-numeric group", path, user)
	return uid, gid
}

// TestRenderedProbesAnswerOnTheRuntime points the rendered probes at a
// plugin running on the real runtime.
func TestRenderedProbesAnswerOnTheRuntime(t *testing.T) {
	h := startController(t)
	inst := h.install(t, "probed", nil)
	deploy := deployedPlugin(t, inst)
	plugin := h.runPlugin(t, deploy)
	close(plugin.release)
	<-plugin.hosts // started and ready
	base := h.pluginURL(deploy.Namespace)
	c := deploy.Spec.Template.Spec.Containers[0]
	for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		require.NotNil(t, probe.HTTPGet, name)
		assert.Equal(t, int32(PluginPort), probe.HTTPGet.Port.IntVal, "%s probes the runtime's port", name)
		res, err := http.Get(base + probe.HTTPGet.Path)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "%s probe %s on a ready plugin", name, probe.HTTPGet.Path)
	}
}
