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

// MemcachedSpec is the desired state of Memcached objects: how the operand is deployed.
type MemcachedSpec struct {
	// TODO(user): add the fields users set to tune the operand. The doc comment of a field
	// becomes its description in the CRD; validation is added with +kubebuilder:validation
	// markers. Run "make manifests generate" afterwards.

	// size is the number of replicas of the operand's Deployment.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Size *int32 `json:"size,omitempty"`

	// containerPort is the port the operand's container listens on.
	// +required
	ContainerPort int32 `json:"containerPort"`
}

// MemcachedStatus is the observed state of Memcached objects, as reported by the controller.
type MemcachedStatus struct {
	// conditions describe the latest observed state of the Memcached, one entry per type:
	// "Available" while the operand's Deployment exists with the requested size, and
	// "Degraded" while the object is being finalized. Each status is True, False or Unknown.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Memcached is the Schema for the memcacheds API.
type Memcached struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec holds the desired state of this Memcached.
	// +required
	Spec MemcachedSpec `json:"spec"`

	// status holds the observed state of this Memcached; only the controller writes it.
	// +optional
	Status MemcachedStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// MemcachedList is a list of Memcached objects.
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Memcached `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Memcached{}, &MemcachedList{})
		return nil
	})
}
