package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MapSpec is the desired state of Map objects, as set by their owner.
type MapSpec struct {
	// TODO(user): replace Foo with the fields users set to describe the Map they want.
	// The doc comment of a field becomes its description in the CRD, and validation is added
	// with markers such as +kubebuilder:validation:MinLength. Run "make manifests generate"
	// afterwards.

	// foo is an example field; remove it once you have fields of your own.
	// +optional
	Foo *string `json:"foo,omitempty"`
}

// MapStatus is the observed state of Map objects, as reported by the controller.
type MapStatus struct {
	// TODO(user): add the fields the controller reports. Conditions are the usual way to publish state
	// ("Available", "Progressing", "Degraded" or types of your own); set each with
	// meta.SetStatusCondition from k8s.io/apimachinery/pkg/api/meta and keep its
	// observedGeneration current.

	// conditions describe the latest observed state of the Map, one entry per type.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Map is the Schema for the maps API.
type Map struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec holds the desired state of this Map.
	// +required
	Spec MapSpec `json:"spec"`

	// status holds the observed state of this Map; only the controller writes it.
	// +optional
	Status MapStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// MapList is a list of Map objects.
type MapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Map `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Map{}, &MapList{})
		return nil
	})
}
