// Package v1 holds the v1 types of the lang.example.com API group.
// +kubebuilder:object:generate=true
// +groupName=lang.example.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeGroupVersion identifies the group and version of every type in this package.
	SchemeGroupVersion = schema.GroupVersion{Group: "lang.example.com", Version: "v1"}

	// GroupVersion is the name controller-runtime based code usually refers to; it equals SchemeGroupVersion.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder collects the functions that add this package's types to a runtime.Scheme;
	// each *_types.go file registers its kinds with it in an init function.
	SchemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		metav1.AddToGroupVersion(s, SchemeGroupVersion)
		return nil
	})

	// AddToScheme registers every type of this package with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
