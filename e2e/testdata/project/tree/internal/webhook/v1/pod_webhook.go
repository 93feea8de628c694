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

package v1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	corev1 "k8s.io/api/core/v1"
)

// podLog is the logger of the Pod webhooks.
var podLog = logf.Log.WithName("pod-resource")

// SetupPodWebhookWithManager registers the webhooks of Pod with the webhook server of mgr.
func SetupPodWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithDefaulter(&PodDefaulter{}).
		Complete()
}

// The marker below makes "make manifests" add this webhook to config/webhook/manifests.yaml.
// The path must be the one the defaulter is served on.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create;update,versions=v1,name=mpod-v1.kb.io,admissionReviewVersions=v1

// PodDefaulter fills in default values of Pod objects when they are created or updated.
type PodDefaulter struct {
	// TODO(user): add anything the defaults depend on, e.g. values read from flags.
}

var _ admission.Defaulter[*corev1.Pod] = &PodDefaulter{}

// Default sets the fields of obj that were left empty. The API server receives the changes as a
// patch, before any validation runs. It must be idempotent.
func (d *PodDefaulter) Default(_ context.Context, obj *corev1.Pod) error {
	podLog.V(1).Info("Applying defaults", "name", obj.GetName())

	// TODO(user): set the defaults of your choice on obj here.
	return nil
}
