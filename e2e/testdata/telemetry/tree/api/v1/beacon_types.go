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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// BeaconSpec is the desired state of Beacon objects, as set by their owner.
type BeaconSpec struct {
	// TODO(user): replace Foo with the fields users set to describe the Beacon they want.
	// The doc comment of a field becomes its description in the CRD, and validation is added
	// with markers such as +kubebuilder:validation:MinLength. Run "make manifests generate"
	// afterwards.

	// foo is an example field; remove it once you have fields of your own.
	// +optional
	Foo *string `json:"foo,omitempty"`
}

// BeaconStatus is the observed state of Beacon objects, as reported by the controller.
type BeaconStatus struct {
	// TODO(user): add the fields the controller reports. Conditions are the usual way to publish state
	// ("Available", "Progressing", "Degraded" or types of your own); set each with
	// meta.SetStatusCondition from k8s.io/apimachinery/pkg/api/meta and keep its
	// observedGeneration current.

	// conditions describe the latest observed state of the Beacon, one entry per type.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Beacon is the Schema for the beacons API.
type Beacon struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec holds the desired state of this Beacon.
	// +required
	Spec BeaconSpec `json:"spec"`

	// status holds the observed state of this Beacon; only the controller writes it.
	// +optional
	Status BeaconStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// BeaconList is a list of Beacon objects.
type BeaconList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Beacon `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Beacon{}, &BeaconList{})
		return nil
	})
}
