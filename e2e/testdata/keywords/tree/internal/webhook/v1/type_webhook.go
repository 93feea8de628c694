package v1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	langv1 "example.com/lang/api/v1"
)

// typeObjLog is the logger of the Type webhooks.
var typeObjLog = logf.Log.WithName("type-resource")

// SetupTypeWebhookWithManager registers the webhooks of Type with the webhook server of mgr.
func SetupTypeWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &langv1.Type{}).
		WithDefaulter(&TypeDefaulter{}).
		WithValidator(&TypeValidator{}).
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the defaulter is served on.
// +kubebuilder:webhook:path=/mutate-lang-example-com-v1-type,mutating=true,failurePolicy=fail,sideEffects=None,groups=lang.example.com,resources=types,verbs=create;update,versions=v1,name=mtype-v1.kb.io,admissionReviewVersions=v1

// TypeDefaulter fills in default values of Type objects when they are created or updated.
type TypeDefaulter struct {
	// TODO(user): add anything the defaults depend on, e.g. values read from flags.
}

var _ admission.Defaulter[*langv1.Type] = &TypeDefaulter{}

// Default sets the fields of obj that were left empty. The API server receives the changes as a
// patch, before any validation runs. It must be idempotent.
func (d *TypeDefaulter) Default(_ context.Context, obj *langv1.Type) error {
	typeObjLog.V(1).Info("Applying defaults", "name", obj.GetName())

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
// +kubebuilder:webhook:path=/validate-lang-example-com-v1-type,mutating=false,failurePolicy=fail,sideEffects=None,groups=lang.example.com,resources=types,verbs=create;update,versions=v1,name=vtype-v1.kb.io,admissionReviewVersions=v1

// TypeValidator accepts or rejects Type objects on creation, update and deletion.
type TypeValidator struct {
	// TODO(user): add anything the checks depend on, e.g. a client to look up other objects.
}

var _ admission.Validator[*langv1.Type] = &TypeValidator{}

// ValidateCreate checks the Type obj that is about to be created. A non-nil error rejects the
// request; warnings are returned to the client either way.
func (v *TypeValidator) ValidateCreate(_ context.Context, obj *langv1.Type) (admission.Warnings, error) {
	typeObjLog.V(1).Info("Validating creation", "name", obj.GetName())

	// TODO(user): check obj here, e.g. return nil, field.ErrorList{field.Invalid(...)}.ToAggregate() for a bad field.
	return nil, nil
}

// ValidateUpdate checks a change from oldObj to newObj, e.g. that immutable fields keep their value.
func (v *TypeValidator) ValidateUpdate(_ context.Context, oldObj, newObj *langv1.Type) (admission.Warnings, error) {
	typeObjLog.V(1).Info("Validating update", "name", newObj.GetName())

	// TODO(user): compare oldObj with newObj here.
	return nil, nil
}

// ValidateDelete checks the Type obj that is about to be deleted.
func (v *TypeValidator) ValidateDelete(_ context.Context, obj *langv1.Type) (admission.Warnings, error) {
	typeObjLog.V(1).Info("Validating deletion", "name", obj.GetName())

	// TODO(user): refuse deletions that must not happen, if any.
	return nil, nil
}
