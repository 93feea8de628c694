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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BusyboxSpec is the desired state of Busybox objects: how the operand is deployed.
type BusyboxSpec struct {
	// TODO(user): add the fields users set to tune the operand. The doc comment of a field
	// becomes its description in the CRD; validation is added with +kubebuilder:validation
	// markers. Run "make manifests generate" afterwards.

	// size is the number of replicas of the operand's Deployment.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Size *int32 `json:"size,omitempty"`
}

// BusyboxStatus is the observed state of Busybox objects, as reported by the controller.
type BusyboxStatus struct {
	// conditions describe the latest observed state of the Busybox, one entry per type:
	// "Available" while the operand's Deployment exists with the requested size, and
	// "Degraded" while the object is being finalized. Each status is True, False or Unknown.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Busybox is the Schema for the busyboxes API.
type Busybox struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec holds the desired state of this Busybox.
	// +required
	Spec BusyboxSpec `json:"spec"`

	// status holds the observed state of this Busybox; only the controller writes it.
	// +optional
	Status BusyboxStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// BusyboxList is a list of Busybox objects.
type BusyboxList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Busybox `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Busybox{}, &BusyboxList{})
		return nil
	})
}
