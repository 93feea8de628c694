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
	"fmt"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	cachev1alpha1 "example.com/cache/api/v1alpha1"
)

// memcachedFinalizer holds a Memcached back from deletion until the controller has run
// its cleanup (doFinalizerOperationsForMemcached).
const memcachedFinalizer = "cache.example.com/finalizer"

// memcachedContainerName names the operand's container in the Deployment.
const memcachedContainerName = "memcached"

// The condition types this controller sets on Memcached objects.
const (
	// typeAvailableMemcached: whether the operand's Deployment exists with the requested size.
	typeAvailableMemcached = "Available"
	// typeDegradedMemcached: set while the object is being deleted and its finalizer runs.
	typeDegradedMemcached = "Degraded"
)

// MemcachedReconciler deploys the operand image of each Memcached object as a Deployment it owns.
type MemcachedReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
}

// The RBAC markers below become rules of the manager's role when "make manifests" runs.
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cache.example.com,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=core,resources=pods,verbs=get;list;watch

// Reconcile brings the operand of one Memcached to the state its spec asks for: it keeps a
// finalizer on the object, creates the Deployment when it is missing, keeps its replica
// count equal to spec.size, and reports the outcome in the status conditions. When the object
// is deleted, it runs the finalizer's cleanup first; the Deployment, owned by the object, is
// then removed by the garbage collector.
//
// Reconcile must be idempotent: it runs again for every change of the object or of its
// Deployment, and after errors.
// controller-runtime documentation: https://pkg.go.dev/sigs.k8s.io/controller-runtime/pkg/reconcile
func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	memcached := &cachev1alpha1.Memcached{}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted since the request was queued: nothing left to do.
			log.Info("Memcached not found; it was deleted")
			return ctrl.Result{}, nil
		}
		log.Error(err, "Failed to get Memcached")
		return ctrl.Result{}, err
	}

	// A new object starts with an Unknown availability.
	if len(memcached.Status.Conditions) == 0 {
		if err := r.setCondition(ctx, req, memcached, metav1.Condition{
			Type: typeAvailableMemcached, Status: metav1.ConditionUnknown,
			Reason: reasonReconciling, Message: "Starting reconciliation",
		}); err != nil {
			return ctrl.Result{}, err
		}
	}

	if !memcached.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.finalize(ctx, req, memcached)
	}

	// The finalizer lets the controller clean up before the object goes away.
	// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers
	if controllerutil.AddFinalizer(memcached, memcachedFinalizer) {
		log.Info("Adding the finalizer")
		if err := r.Update(ctx, memcached); err != nil {
			log.Error(err, "Failed to add the finalizer")
			return ctrl.Result{}, err
		}
	}

	found := &appsv1.Deployment{}
	err := r.Get(ctx, types.NamespacedName{Name: memcached.Name, Namespace: memcached.Namespace}, found)
	if apierrors.IsNotFound(err) {
		dep, err := r.deploymentForMemcached(memcached)
		if err != nil {
			log.Error(err, "Failed to define the Deployment")
			if serr := r.setCondition(ctx, req, memcached, metav1.Condition{
				Type: typeAvailableMemcached, Status: metav1.ConditionFalse, Reason: reasonReconciling,
				Message: fmt.Sprintf("Failed to create the Deployment for %s: %s", memcached.Name, err),
			}); serr != nil {
				return ctrl.Result{}, serr
			}
			return ctrl.Result{}, err
		}
		log.Info("Creating the Deployment", "Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
		if err := r.Create(ctx, dep); err != nil {
			log.Error(err, "Failed to create the Deployment", "Deployment.Namespace", dep.Namespace, "Deployment.Name", dep.Name)
			return ctrl.Result{}, err
		}
		// Come back to check the new Deployment and report it.
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	} else if err != nil {
		log.Error(err, "Failed to get the Deployment")
		return ctrl.Result{}, err
	}

	// spec.size is the desired number of replicas; unset means none.
	var size int32
	if memcached.Spec.Size != nil {
		size = *memcached.Spec.Size
	}
	if found.Spec.Replicas == nil || *found.Spec.Replicas != size {
		found.Spec.Replicas = new(size)
		if err := r.Update(ctx, found); err != nil {
			log.Error(err, "Failed to resize the Deployment", "Deployment.Namespace", found.Namespace, "Deployment.Name", found.Name)
			if serr := r.setCondition(ctx, req, memcached, metav1.Condition{
				Type: typeAvailableMemcached, Status: metav1.ConditionFalse, Reason: "Resizing",
				Message: fmt.Sprintf("Failed to set the size of %s: %s", memcached.Name, err),
			}); serr != nil {
				return ctrl.Result{}, serr
			}
			return ctrl.Result{}, err
		}
		// The update of the owned Deployment triggers the next reconciliation.
		return ctrl.Result{}, nil
	}

	return ctrl.Result{}, r.setCondition(ctx, req, memcached, metav1.Condition{
		Type: typeAvailableMemcached, Status: metav1.ConditionTrue, Reason: reasonReconciling,
		Message: fmt.Sprintf("Deployment for %s with %d replicas created successfully", memcached.Name, size),
	})
}

// setCondition records cond in the status of memcached, then reads the object again so that
// later updates start from its latest version (avoiding "the object has been modified" conflicts).
func (r *MemcachedReconciler) setCondition(ctx context.Context, req ctrl.Request, memcached *cachev1alpha1.Memcached, cond metav1.Condition) error {
	log := logf.FromContext(ctx)
	meta.SetStatusCondition(&memcached.Status.Conditions, cond)
	if err := r.Status().Update(ctx, memcached); err != nil {
		log.Error(err, "Failed to update the Memcached status")
		return err
	}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		log.Error(err, "Failed to read the Memcached again")
		return err
	}
	return nil
}

// finalize runs the cleanup of a Memcached being deleted, reports it as Degraded, and removes
// the finalizer so that the API server can delete the object.
func (r *MemcachedReconciler) finalize(ctx context.Context, req ctrl.Request, memcached *cachev1alpha1.Memcached) error {
	log := logf.FromContext(ctx)
	if !controllerutil.ContainsFinalizer(memcached, memcachedFinalizer) {
		return nil
	}
	log.Info("Running the finalizer")
	if err := r.setCondition(ctx, req, memcached, metav1.Condition{
		Type: typeDegradedMemcached, Status: metav1.ConditionUnknown, Reason: reasonFinalizing,
		Message: fmt.Sprintf("Performing finalizer operations for %s", memcached.Name),
	}); err != nil {
		return err
	}

	r.doFinalizerOperationsForMemcached(memcached)
	// TODO(user): when doFinalizerOperationsForMemcached can fail, return its error here so that
	// the finalizer stays and the cleanup is retried.

	if err := r.setCondition(ctx, req, memcached, metav1.Condition{
		Type: typeDegradedMemcached, Status: metav1.ConditionTrue, Reason: reasonFinalizing,
		Message: fmt.Sprintf("Finalizer operations for %s were successfully accomplished", memcached.Name),
	}); err != nil {
		return err
	}

	log.Info("Removing the finalizer")
	if !controllerutil.RemoveFinalizer(memcached, memcachedFinalizer) {
		err := fmt.Errorf("finalizer %s of Memcached %s was not removed", memcachedFinalizer, memcached.Name)
		log.Error(err, "Failed to remove the finalizer")
		return err
	}
	if err := r.Update(ctx, memcached); err != nil {
		log.Error(err, "Failed to remove the finalizer")
		return err
	}
	return nil
}

// doFinalizerOperationsForMemcached is the cleanup that runs before a Memcached is deleted.
func (r *MemcachedReconciler) doFinalizerOperationsForMemcached(cr *cachev1alpha1.Memcached) {
	// TODO(user): add the cleanup the operator needs before the object goes away, such as
	// taking a backup or deleting resources the object does not own (a PVC, say).
	//
	// Objects the object owns, like the Deployment created by Reconcile (see
	// ctrl.SetControllerReference), need no finalizer: the garbage collector deletes them.
	// More info: https://kubernetes.io/docs/tasks/administer-cluster/use-cascading-deletion/

	// Record an event on the object.
	if r.Recorder != nil {
		r.Recorder.Eventf(cr, nil, corev1.EventTypeWarning, "Deleting", "DeleteCR",
			"Custom Resource %s is being deleted from the namespace %s", cr.Name, cr.Namespace)
	}
}

// deploymentForMemcached returns the Deployment of the operand of memcached, owned by it.
func (r *MemcachedReconciler) deploymentForMemcached(memcached *cachev1alpha1.Memcached) (*appsv1.Deployment, error) {
	image, err := imageForMemcached()
	if err != nil {
		return nil, err
	}
	ls := labelsForMemcached()

	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      memcached.Name,
			Namespace: memcached.Namespace,
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: memcached.Spec.Size,
			Selector: &metav1.LabelSelector{
				MatchLabels: ls,
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: ls,
				},
				Spec: corev1.PodSpec{
					// TODO(user): to run the operand on the platforms it supports only, add a
					// node affinity on the kubernetes.io/arch and kubernetes.io/os labels.
					// More info: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#node-affinity
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: new(true),
						SeccompProfile: &corev1.SeccompProfile{
							Type: corev1.SeccompProfileTypeRuntimeDefault,
						},
					},
					Containers: []corev1.Container{{
						Image:           image,
						Name:            memcachedContainerName,
						ImagePullPolicy: corev1.PullIfNotPresent,
						// The "restricted" Pod Security Standard.
						// More info: https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             new(true),
							RunAsUser:                new(int64(1001)),
							AllowPrivilegeEscalation: new(false),
							Capabilities: &corev1.Capabilities{
								Drop: []corev1.Capability{
									"ALL",
								},
							},
						},
						Ports: []corev1.ContainerPort{{
							ContainerPort: memcached.Spec.ContainerPort,
							Name:          memcachedContainerName,
						}},
						Command: []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},
					}},
				},
			},
		},
	}

	// The object owns its Deployment: the Deployment is deleted with it, and its changes
	// trigger a reconciliation (see Owns in SetupWithManager).
	// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/owners-dependents/
	if err := ctrl.SetControllerReference(memcached, dep, r.Scheme); err != nil {
		return nil, err
	}
	return dep, nil
}

// labelsForMemcached returns the labels of the operand's Deployment and Pods.
// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
func labelsForMemcached() map[string]string {
	var imageTag string
	if image, err := imageForMemcached(); err == nil {
		// The tag follows the last colon after the last slash (a registry may have a port).
		name := image[strings.LastIndex(image, "/")+1:]
		if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name, "@") {
			imageTag = name[i+1:]
		}
	}
	return map[string]string{
		"app.kubernetes.io/name":       "cache",
		"app.kubernetes.io/version":    imageTag,
		"app.kubernetes.io/managed-by": "MemcachedController",
	}
}

// imageForMemcached returns the operand image, read from the MEMCACHED_IMAGE environment
// variable (set in config/manager/manager.yaml).
func imageForMemcached() (string, error) {
	const imageEnvVar = "MEMCACHED_IMAGE"
	image, found := os.LookupEnv(imageEnvVar)
	if !found {
		return "", fmt.Errorf("unable to find the %s environment variable with the image", imageEnvVar)
	}
	return image, nil
}

// SetupWithManager registers the controller with the manager: it reconciles Memcached
// objects, and runs again when a Deployment that one of them owns changes.
func (r *MemcachedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&cachev1alpha1.Memcached{}).
		Named("memcached").
		Owns(&appsv1.Deployment{}).
		Complete(r)
}
