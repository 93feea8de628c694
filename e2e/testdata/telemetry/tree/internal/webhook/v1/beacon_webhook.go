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

	seav1 "example.com/lighthouse/api/v1"
)

// beaconLog is the logger of the Beacon webhooks.
var beaconLog = logf.Log.WithName("beacon-resource")

// SetupBeaconWebhookWithManager registers the webhooks of Beacon with the webhook server of mgr.
func SetupBeaconWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &seav1.Beacon{}).
		WithDefaulter(&BeaconDefaulter{}).
		WithValidator(&BeaconValidator{}).
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the defaulter is served on.
// +kubebuilder:webhook:path=/mutate-sea-example-com-v1-beacon,mutating=true,failurePolicy=fail,sideEffects=None,groups=sea.example.com,resources=beacons,verbs=create;update,versions=v1,name=mbeacon-v1.kb.io,admissionReviewVersions=v1

// BeaconDefaulter fills in default values of Beacon objects when they are created or updated.
type BeaconDefaulter struct {
	// TODO(user): add anything the defaults depend on, e.g. values read from flags.
}

var _ admission.Defaulter[*seav1.Beacon] = &BeaconDefaulter{}

// Default sets the fields of obj that were left empty. The API server receives the changes as a
// patch, before any validation runs. It must be idempotent.
func (d *BeaconDefaulter) Default(_ context.Context, obj *seav1.Beacon) error {
	beaconLog.V(1).Info("Applying defaults", "name", obj.GetName())

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
// +kubebuilder:webhook:path=/validate-sea-example-com-v1-beacon,mutating=false,failurePolicy=fail,sideEffects=None,groups=sea.example.com,resources=beacons,verbs=create;update,versions=v1,name=vbeacon-v1.kb.io,admissionReviewVersions=v1

// BeaconValidator accepts or rejects Beacon objects on creation, update and deletion.
type BeaconValidator struct {
	// TODO(user): add anything the checks depend on, e.g. a client to look up other objects.
}

var _ admission.Validator[*seav1.Beacon] = &BeaconValidator{}

// ValidateCreate checks the Beacon obj that is about to be created. A non-nil error rejects the
// request; warnings are returned to the client either way.
func (v *BeaconValidator) ValidateCreate(_ context.Context, obj *seav1.Beacon) (admission.Warnings, error) {
	beaconLog.V(1).Info("Validating creation", "name", obj.GetName())

	// TODO(user): check obj here, e.g. return nil, field.ErrorList{field.Invalid(...)}.ToAggregate() for a bad field.
	return nil, nil
}

// ValidateUpdate checks a change from oldObj to newObj, e.g. that immutable fields keep their value.
func (v *BeaconValidator) ValidateUpdate(_ context.Context, oldObj, newObj *seav1.Beacon) (admission.Warnings, error) {
	beaconLog.V(1).Info("Validating update", "name", newObj.GetName())

	// TODO(user): compare oldObj with newObj here.
	return nil, nil
}

// ValidateDelete checks the Beacon obj that is about to be deleted.
func (v *BeaconValidator) ValidateDelete(_ context.Context, obj *seav1.Beacon) (admission.Warnings, error) {
	beaconLog.V(1).Info("Validating deletion", "name", obj.GetName())

	// TODO(user): refuse deletions that must not happen, if any.
	return nil, nil
}
