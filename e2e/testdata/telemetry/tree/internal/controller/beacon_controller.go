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

package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	seav1 "example.com/lighthouse/api/v1"
	"example.com/lighthouse/internal/telemetry"
)

// BeaconReconciler drives Beacon objects towards the state their spec asks for.
type BeaconReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// The RBAC markers below become rules of the manager's role when "make manifests" runs.
// TODO(user): add a marker for every other resource Reconcile reads or writes.
// +kubebuilder:rbac:groups=sea.example.com,resources=beacons,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sea.example.com,resources=beacons/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=sea.example.com,resources=beacons/finalizers,verbs=update

// Reconcile runs whenever one of the Beacon objects, or something else the controller
// watches, changes. It reads the current state of the cluster and acts to bring it closer to
// the desired state. It must be idempotent: it may run many times for the same object.
// Returning an error, or a Result with RequeueAfter set, schedules another run.
//
// controller-runtime documentation: https://pkg.go.dev/sigs.k8s.io/controller-runtime/pkg/reconcile
func (r *BeaconReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var beacon seav1.Beacon
	if err := r.Get(ctx, req.NamespacedName, &beacon); err != nil {
		// A missing object has been deleted since the request was queued: nothing left to do.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).V(1).Info("Reconciling", "generation", beacon.GetGeneration())

	// TODO(user): compare beacon with what exists in the cluster and create, update or
	// delete objects until they match; record the outcome in the status.

	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller with the manager and declares what it watches.
func (r *BeaconReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&seav1.Beacon{}).
		// TODO(user): also watch the objects this controller creates,
		// e.g. Owns(&appsv1.Deployment{}).
		Named("beacon").
		Complete(telemetry.Reconciler("beacon", r))
}
