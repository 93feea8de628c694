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

package v1alpha1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	cachev1alpha1 "example.com/cache/api/v1alpha1"
)

// memcachedLog is the logger of the Memcached webhooks.
var memcachedLog = logf.Log.WithName("memcached-resource")

// SetupMemcachedWebhookWithManager registers the webhooks of Memcached with the webhook server of mgr.
func SetupMemcachedWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &cachev1alpha1.Memcached{}).
		WithValidator(&MemcachedValidator{}).
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the validator is served on. To have ValidateDelete called, add
// "delete" to its verbs.
// +kubebuilder:webhook:path=/validate-cache-example-com-v1alpha1-memcached,mutating=false,failurePolicy=fail,sideEffects=None,groups=cache.example.com,resources=memcacheds,verbs=create;update,versions=v1alpha1,name=vmemcached-v1alpha1.kb.io,admissionReviewVersions=v1

// MemcachedValidator accepts or rejects Memcached objects on creation, update and deletion.
type MemcachedValidator struct {
	// TODO(user): add anything the checks depend on, e.g. a client to look up other objects.
}

var _ admission.Validator[*cachev1alpha1.Memcached] = &MemcachedValidator{}

// ValidateCreate checks the Memcached obj that is about to be created. A non-nil error rejects the
// request; warnings are returned to the client either way.
func (v *MemcachedValidator) ValidateCreate(_ context.Context, obj *cachev1alpha1.Memcached) (admission.Warnings, error) {
	memcachedLog.V(1).Info("Validating creation", "name", obj.GetName())

	// TODO(user): check obj here, e.g. return nil, field.ErrorList{field.Invalid(...)}.ToAggregate() for a bad field.
	return nil, nil
}

// ValidateUpdate checks a change from oldObj to newObj, e.g. that immutable fields keep their value.
func (v *MemcachedValidator) ValidateUpdate(_ context.Context, oldObj, newObj *cachev1alpha1.Memcached) (admission.Warnings, error) {
	memcachedLog.V(1).Info("Validating update", "name", newObj.GetName())

	// TODO(user): compare oldObj with newObj here.
	return nil, nil
}

// ValidateDelete checks the Memcached obj that is about to be deleted.
func (v *MemcachedValidator) ValidateDelete(_ context.Context, obj *cachev1alpha1.Memcached) (admission.Warnings, error) {
	memcachedLog.V(1).Info("Validating deletion", "name", obj.GetName())

	// TODO(user): refuse deletions that must not happen, if any.
	return nil, nil
}
