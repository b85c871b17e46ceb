package retirement

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A DiskRetirement's finalizer holds what the retirement changed (an OSD
// marked out, a stopped OSD, a purge not yet followed by the wipe) until
// the plugin has given it back or finished. Console users may patch
// DiskRetirements (to confirm one), which would let them strip it; this
// ValidatingAdmissionPolicy lets only the plugin's own identity remove it.
const finalizerGuardName = "ceph-rook-retirement-finalizer"

// FinalizerGuardPolicy is the policy and its binding for the plugin that
// authenticates as username.
func FinalizerGuardPolicy(username string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	held := fmt.Sprintf("oldObject.metadata.?finalizers.orValue([]).exists(f, f == %q)", cephv1alpha1.RetirementFinalizer)
	kept := fmt.Sprintf("object.metadata.?finalizers.orValue([]).exists(f, f == %q)", cephv1alpha1.RetirementFinalizer)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: finalizerGuardName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{cephv1alpha1.GroupVersion.Group}, APIVersions: []string{cephv1alpha1.GroupVersion.Version},
						Resources: []string{"diskretirements"},
					},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				// A cluster administrator (system:masters) can delete the
				// policy itself: letting them through says so, and keeps
				// their way out of a retirement that cannot finish.
				Expression: fmt.Sprintf("!%s || %s || request.userInfo.username == %s || 'system:masters' in request.userInfo.groups", held, kept, strconv.Quote(username)),
				Message: "only the ceph-rook plugin removes a DiskRetirement's finalizer: it holds what the retirement changed " +
					"(an OSD marked out or stopped, a purged OSD's device not yet wiped) until that is given back or finished; " +
					"delete the DiskRetirement to cancel it",
				Reason: new(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: finalizerGuardName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        finalizerGuardName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

// whoAmI is the username the API server knows the plugin by.
func whoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("ask the API server who the plugin is (SelfSubjectReview): %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", fmt.Errorf("the API server's SelfSubjectReview names no user")
	}
	return review.Status.UserInfo.Username, nil
}

// ApplyFinalizerGuard server-side applies the policy and its binding for
// the plugin's own identity, as fieldOwner.
func ApplyFinalizerGuard(ctx context.Context, c client.Client, fieldOwner string) error {
	username, err := whoAmI(ctx, c)
	if err != nil {
		return err
	}
	policy, binding := FinalizerGuardPolicy(username)
	for _, obj := range []client.Object{policy, binding} {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		delete(raw, "status")
		unstructured.RemoveNestedField(raw, "metadata", "creationTimestamp")
		u := &unstructured.Unstructured{Object: raw}
		spec, err := json.Marshal(raw["spec"])
		if err != nil {
			return err
		}
		sum := sha256.Sum256(spec)
		hash := hex.EncodeToString(sum[:])
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(u.GroupVersionKind())
		err = c.Get(ctx, client.ObjectKey{Name: u.GetName()}, existing)
		switch {
		case err == nil && existing.GetAnnotations()[cephv1alpha1.ManifestHashAnnotation] == hash:
			continue // applied from the same spec: a restart writes nothing
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("read %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		u.SetAnnotations(map[string]string{cephv1alpha1.ManifestHashAnnotation: hash})
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
