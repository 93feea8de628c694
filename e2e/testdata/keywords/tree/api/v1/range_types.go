package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RangeSpec is the desired state of Range objects, as set by their owner.
type RangeSpec struct {
	// TODO(user): replace Foo with the fields users set to describe the Range they want.
	// The doc comment of a field becomes its description in the CRD, and validation is added
	// with markers such as +kubebuilder:validation:MinLength. Run "make manifests generate"
	// afterwards.

	// foo is an example field; remove it once you have fields of your own.
	// +optional
	Foo *string `json:"foo,omitempty"`
}

// RangeStatus is the observed state of Range objects, as reported by the controller.
type RangeStatus struct {
	// TODO(user): add the fields the controller reports. Conditions are the usual way to publish state
	// ("Available", "Progressing", "Degraded" or types of your own); set each with
	// meta.SetStatusCondition from k8s.io/apimachinery/pkg/api/meta and keep its
	// observedGeneration current.

	// conditions describe the latest observed state of the Range, one entry per type.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Range is the Schema for the ranges API.
type Range struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec holds the desired state of this Range.
	// +required
	Spec RangeSpec `json:"spec"`

	// status holds the observed state of this Range; only the controller writes it.
	// +optional
	Status RangeStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// RangeList is a list of Range objects.
type RangeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitzero"`
	Items           []Range `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(SchemeGroupVersion, &Range{}, &RangeList{})
		return nil
	})
}
