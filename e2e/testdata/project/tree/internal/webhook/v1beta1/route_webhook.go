/*
Copyright 2026 The Guestbook Authors.

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

package v1beta1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	ingressv1beta1 "example.com/guestbook/api/v1beta1"
)

// routeLog is the logger of the Route webhooks.
var routeLog = logf.Log.WithName("route-resource")

// SetupRouteWebhookWithManager registers the webhooks of Route with the webhook server of mgr.
func SetupRouteWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ingressv1beta1.Route{}).
		WithDefaulter(&RouteDefaulter{}).
		WithDefaulterCustomPath("/default-route").
		WithValidator(&RouteValidator{}).
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the defaulter is served on.
// +kubebuilder:webhook:path=/default-route,mutating=true,failurePolicy=fail,sideEffects=None,groups=ingress.example.com,resources=routes,verbs=create;update,versions=v1beta1,name=mroute-v1beta1.kb.io,admissionReviewVersions=v1

// RouteDefaulter fills in default values of Route objects when they are created or updated.
type RouteDefaulter struct {
	// TODO(user): add anything the defaults depend on, e.g. values read from flags.
}

var _ admission.Defaulter[*ingressv1beta1.Route] = &RouteDefaulter{}

// Default sets the fields of obj that were left empty. The API server receives the changes as a
// patch, before any validation runs. It must be idempotent.
func (d *RouteDefaulter) Default(_ context.Context, obj *ingressv1beta1.Route) error {
	routeLog.V(1).Info("Applying defaults", "name", obj.GetName())

	// TODO(user): replace this example with the defaults of your own fields.
	if obj.Spec.Foo == nil {
		foo := "default"
		obj.Spec.Foo = &foo
	}
	return nil
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the validator is served on. To have ValidateDelete called, add
// "delete" to its verbs.
// +kubebuilder:webhook:path=/validate-ingress-example-com-v1beta1-route,mutating=false,failurePolicy=fail,sideEffects=None,groups=ingress.example.com,resources=routes,verbs=create;update,versions=v1beta1,name=vroute-v1beta1.kb.io,admissionReviewVersions=v1

// RouteValidator accepts or rejects Route objects on creation, update and deletion.
type RouteValidator struct {
	// TODO(user): add anything the checks depend on, e.g. a client to look up other objects.
}

var _ admission.Validator[*ingressv1beta1.Route] = &RouteValidator{}

// ValidateCreate checks the Route obj that is about to be created. A non-nil error rejects the
// request; warnings are returned to the client either way.
func (v *RouteValidator) ValidateCreate(_ context.Context, obj *ingressv1beta1.Route) (admission.Warnings, error) {
	routeLog.V(1).Info("Validating creation", "name", obj.GetName())

	// TODO(user): check obj here, e.g. return nil, field.ErrorList{field.Invalid(...)}.ToAggregate() for a bad field.
	return nil, nil
}

// ValidateUpdate checks a change from oldObj to newObj, e.g. that immutable fields keep their value.
func (v *RouteValidator) ValidateUpdate(_ context.Context, oldObj, newObj *ingressv1beta1.Route) (admission.Warnings, error) {
	routeLog.V(1).Info("Validating update", "name", newObj.GetName())

	// TODO(user): compare oldObj with newObj here.
	return nil, nil
}

// ValidateDelete checks the Route obj that is about to be deleted.
func (v *RouteValidator) ValidateDelete(_ context.Context, obj *ingressv1beta1.Route) (admission.Warnings, error) {
	routeLog.V(1).Info("Validating deletion", "name", obj.GetName())

	// TODO(user): refuse deletions that must not happen, if any.
	return nil, nil
}
