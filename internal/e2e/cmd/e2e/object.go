package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fundament-oss/ceph-rook/internal/browser"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
)

// The object step's workload: its namespace (restricted, as an
// application's), its bucket claim and its image.
const (
	appsNamespace = "e2e-apps"
	claimName     = "photos"
	s3Image       = "ceph-rook.e2e/s3object:e2e"
)

// object makes a real RGW from an ObjectStorage, claims a bucket through
// the console's Buckets section (the real pages in Chromium, through the
// development console), waits for Rook's provisioner to bind the claim,
// and runs a workload that loads the claim as the console's sheet says
// and writes and reads an object through the gateway's Service.
func (r *run) object() error {
	store, err := r.createReady("ObjectStorage", map[string]any{}, 10*time.Minute)
	if err != nil {
		return err
	}
	if err := r.checkPools(store, "cephobj-e2e.rgw.buckets.data", "cephobj-e2e.rgw.meta"); err != nil {
		return err
	}
	if err := r.gatewayRunning("cephobj-e2e"); err != nil {
		return err
	}
	if err := r.cephBudgetMatches(); err != nil {
		return err
	}
	if err := r.createAppsNamespace(); err != nil {
		return err
	}
	if r.bucketEnv, err = r.claimBucketInConsole(); err != nil {
		return err
	}
	logs, err := r.runS3Workload("s3object")
	if err == nil {
		r.step("workload s3object: %s", logs)
	}
	return err
}

// gatewayRunning waits for the store's RGW pod and names its Service.
func (r *run) gatewayRunning(storeName string) error {
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		var pods corev1.PodList
		if err := r.c.List(ctx, &pods, client.InNamespace("rook-ceph"), client.MatchingLabels{"app": "rook-ceph-rgw", "rook_object_store": storeName}); err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && podReady(&p) {
				return nil
			}
		}
		return fmt.Errorf("no ready gateway pod of %s among %d", storeName, len(pods.Items))
	})
	if err != nil {
		return err
	}
	var svc corev1.Service
	if err := r.c.Get(r.ctx, client.ObjectKey{Namespace: "rook-ceph", Name: "rook-ceph-rgw-" + storeName}, &svc); err != nil {
		return err
	}
	r.step("gateway of %s running behind Service %s (%s port %d)", storeName, svc.Name, svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// createAppsNamespace is an application's namespace, under the restricted
// Pod Security level an application runs at.
func (r *run) createAppsNamespace() error {
	return r.c.Create(r.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   appsNamespace,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"},
	}})
}

// claimBucketInConsole opens the ObjectStorage's page in the console,
// creates a claim from its Buckets section, waits for Rook to bind it and
// returns the envFrom the claim's sheet tells a workload to use.
func (r *run) claimBucketInConsole() ([]corev1.EnvFromSource, error) {
	var snippet string
	err := r.inConsole(func(b *browser.Browser) {
		b.Open("/view/objectstorages.ceph.fundament.io/e2e")
		b.Click(browser.PageFrame, `[data-action="create-bucket"]`)
		b.Fill(browser.SheetFrame, `select[name="namespace"]`, appsNamespace)
		b.Fill(browser.SheetFrame, `input[name="name"]`, claimName)
		b.Click(browser.SheetFrame, `button[type="submit"]`)
		b.WaitText(browser.SheetFrame, "h1", "Bucket claim "+appsNamespace+"/"+claimName)
		r.step("console: claim %s/%s created from the Buckets section of ObjectStorage e2e", appsNamespace, claimName)
		if err := r.waitClaimBound(); err != nil {
			b.T.Fatalf("%v", err)
		}
		// The sheet, opened again, shows what Rook provisioned.
		b.Open("/view/objectstorages.ceph.fundament.io/e2e")
		b.WaitText(browser.PageFrame, `tr[data-row="`+appsNamespace+"/"+claimName+`"]`, "Bound")
		b.Click(browser.PageFrame, `tr[data-row="`+appsNamespace+"/"+claimName+`"] button`)
		b.WaitText(browser.SheetFrame, "dl", "rook-ceph-rgw-cephobj-e2e.rook-ceph.svc:80")
		snippet = b.Text(browser.SheetFrame, `[data-snippet="envFrom"]`)
		r.step("console: the claim's sheet shows endpoint rook-ceph-rgw-cephobj-e2e.rook-ceph.svc:80 and %q", strings.ReplaceAll(snippet, "\n", " "))
	})
	if err != nil {
		return nil, err
	}
	var spec struct {
		EnvFrom []corev1.EnvFromSource `json:"envFrom"`
	}
	if err := yaml.UnmarshalStrict([]byte(snippet), &spec); err != nil || len(spec.EnvFrom) == 0 {
		return nil, fmt.Errorf("the claim sheet's envFrom snippet %q is not a container's envFrom: %v", snippet, err)
	}
	return spec.EnvFrom, nil
}

// createAfresh creates pod, first deleting one of its name that an earlier
// run on the same cluster (-from) left.
func (r *run) createAfresh(pod *corev1.Pod) error {
	err := r.until(2*time.Minute, func(ctx context.Context) error {
		err := r.c.Delete(ctx, pod.DeepCopy(), client.GracePeriodSeconds(0))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			err = errors.New("deleted; waiting for it to go")
		}
		return fmt.Errorf("pod %s/%s of an earlier run: %w", pod.Namespace, pod.Name, err)
	})
	if err != nil {
		return err
	}
	return r.c.Create(r.ctx, pod)
}

// inConsole runs steps in headless Chromium on the development console
// (the plugin's real pages, as Fundament's console hosts them) against the
// cluster.
func (r *run) inConsole(steps func(b *browser.Browser)) error {
	def, err := os.ReadFile(filepath.Join(r.repo, "definition.yaml"))
	if err != nil {
		return err
	}
	srv, err := devconsole.Start(r.ctx, devconsole.Options{
		Definition: def,
		Console:    http.Dir(filepath.Join(r.repo, "console")),
		RESTConfig: r.restConfig,
		Namespaces: []string{appsNamespace},
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	return r.inBrowser(srv.URL(), steps)
}

// waitClaimBound waits for Rook's bucket provisioner to bind the claim.
func (r *run) waitClaimBound() error {
	claim := &unstructured.Unstructured{}
	claim.SetAPIVersion("objectbucket.io/v1alpha1")
	claim.SetKind("ObjectBucketClaim")
	err := r.until(5*time.Minute, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: appsNamespace, Name: claimName}, claim); err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(claim.Object, "status", "phase"); phase != "Bound" {
			return fmt.Errorf("ObjectBucketClaim %s/%s is %q", appsNamespace, claimName, phase)
		}
		return nil
	})
	if err != nil {
		return err
	}
	bucket, _, _ := unstructured.NestedString(claim.Object, "spec", "bucketName")
	r.step("Rook bound ObjectBucketClaim %s/%s to bucket %s", appsNamespace, claimName, bucket)
	return nil
}

// runS3Workload runs s3object with args in pod name of the applications'
// namespace with the claim's envFrom, waits for it to end and returns its
// log.
func (r *run) runS3Workload(name string, args ...string) (string, error) {
	if r.s3Ref == "" {
		bin := filepath.Join(r.cache, "e2e", "plugin-bin", "s3object")
		if err := pluginproc.BuildPackage(r.ctx, r.repo, "./internal/e2e/cmd/s3object", bin); err != nil {
			return "", err
		}
		ref, err := r.image(s3Image, "/s3object", bin+":/s3object:0755")
		if err != nil {
			return "", err
		}
		r.s3Ref = ref
	}
	if len(r.bucketEnv) == 0 {
		return "", fmt.Errorf("no bucket claim to run %s against (the object phase claims one)", name)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appsNamespace},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   new(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "s3object", Image: r.s3Ref, ImagePullPolicy: corev1.PullNever,
				Args:    args,
				EnvFrom: r.bucketEnv,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: new(false),
					ReadOnlyRootFilesystem:   new(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
	if err := r.createAfresh(pod); err != nil {
		return "", err
	}
	err := r.until(3*time.Minute, func(ctx context.Context) error {
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return nil
		}
		return fmt.Errorf("pod %s/%s is %s", pod.Namespace, pod.Name, pod.Status.Phase)
	})
	logs, logErr := r.kubectlOut("-n", appsNamespace, "logs", name)
	if err == nil && pod.Status.Phase == corev1.PodFailed {
		err = fmt.Errorf("pod %s/%s failed", pod.Namespace, pod.Name)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s %v", err, logs, logErr)
	}
	return logs, nil
}
