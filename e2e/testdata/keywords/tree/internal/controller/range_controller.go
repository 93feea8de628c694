package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	langv1 "example.com/lang/api/v1"
)

// RangeReconciler drives Range objects towards the state their spec asks for.
type RangeReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// The RBAC markers below become rules of the manager's role when "make manifests" runs.
// TODO(user): add a marker for every other resource Reconcile reads or writes.
// +kubebuilder:rbac:groups=lang.example.com,namespace=lang-system,resources=ranges,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=lang.example.com,namespace=lang-system,resources=ranges/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=lang.example.com,namespace=lang-system,resources=ranges/finalizers,verbs=update

// Reconcile runs whenever one of the Range objects, or something else the controller
// watches, changes. It reads the current state of the cluster and acts to bring it closer to
// the desired state. It must be idempotent: it may run many times for the same object.
// Returning an error, or a Result with RequeueAfter set, schedules another run.
//
// controller-runtime documentation: https://pkg.go.dev/sigs.k8s.io/controller-runtime/pkg/reconcile
func (r *RangeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rangeObj langv1.Range
	if err := r.Get(ctx, req.NamespacedName, &rangeObj); err != nil {
		// A missing object has been deleted since the request was queued: nothing left to do.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).V(1).Info("Reconciling", "generation", rangeObj.GetGeneration())

	// TODO(user): compare rangeObj with what exists in the cluster and create, update or
	// delete objects until they match; record the outcome in the status.

	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller with the manager and declares what it watches.
func (r *RangeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&langv1.Range{}).
		// TODO(user): also watch the objects this controller creates,
		// e.g. Owns(&appsv1.Deployment{}).
		Named("range").
		Complete(r)
}
