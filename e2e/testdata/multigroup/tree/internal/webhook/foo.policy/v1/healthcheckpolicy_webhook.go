/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	foopolicyv1 "example.com/fleet/api/foo.policy/v1"
)

// healthCheckPolicyLog is the logger of the HealthCheckPolicy webhooks.
var healthCheckPolicyLog = logf.Log.WithName("healthcheckpolicy-resource")

// SetupHealthCheckPolicyWebhookWithManager registers the webhooks of HealthCheckPolicy with the webhook server of mgr.
func SetupHealthCheckPolicyWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &foopolicyv1.HealthCheckPolicy{}).
		WithValidator(&HealthCheckPolicyValidator{}).
		WithValidatorCustomPath("/validate-policy").
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the validator is served on. To have ValidateDelete called, add
// "delete" to its verbs.
// +kubebuilder:webhook:path=/validate-policy,mutating=false,failurePolicy=fail,sideEffects=None,groups=foo.policy.example.com,resources=healthcheckpolicies,verbs=create;update,versions=v1,name=vhealthcheckpolicy-v1.kb.io,admissionReviewVersions=v1

// HealthCheckPolicyValidator accepts or rejects HealthCheckPolicy objects on creation, update and deletion.
type HealthCheckPolicyValidator struct {
	// TODO(user): add anything the checks depend on, e.g. a client to look up other objects.
}

var _ admission.Validator[*foopolicyv1.HealthCheckPolicy] = &HealthCheckPolicyValidator{}

// ValidateCreate checks the HealthCheckPolicy obj that is about to be created. A non-nil error rejects the
// request; warnings are returned to the client either way.
func (v *HealthCheckPolicyValidator) ValidateCreate(_ context.Context, obj *foopolicyv1.HealthCheckPolicy) (admission.Warnings, error) {
	healthCheckPolicyLog.V(1).Info("Validating creation", "name", obj.GetName())

	// TODO(user): check obj here, e.g. return nil, field.ErrorList{field.Invalid(...)}.ToAggregate() for a bad field.
	return nil, nil
}

// ValidateUpdate checks a change from oldObj to newObj, e.g. that immutable fields keep their value.
func (v *HealthCheckPolicyValidator) ValidateUpdate(_ context.Context, oldObj, newObj *foopolicyv1.HealthCheckPolicy) (admission.Warnings, error) {
	healthCheckPolicyLog.V(1).Info("Validating update", "name", newObj.GetName())

	// TODO(user): compare oldObj with newObj here.
	return nil, nil
}

// ValidateDelete checks the HealthCheckPolicy obj that is about to be deleted.
func (v *HealthCheckPolicyValidator) ValidateDelete(_ context.Context, obj *foopolicyv1.HealthCheckPolicy) (admission.Warnings, error) {
	healthCheckPolicyLog.V(1).Info("Validating deletion", "name", obj.GetName())

	// TODO(user): refuse deletions that must not happen, if any.
	return nil, nil
}
