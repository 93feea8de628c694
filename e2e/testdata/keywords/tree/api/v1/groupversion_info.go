// Package v1 holds the v1 types of the lang.example.com API group.
// +kubebuilder:object:generate=true
// +groupName=lang.example.com
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// SchemeGroupVersion identifies the group and version of every type in this package.
	SchemeGroupVersion = schema.GroupVersion{Group: "lang.example.com", Version: "v1"}

	// GroupVersion is the name controller-runtime based code usually refers to; it equals SchemeGroupVersion.
	GroupVersion = SchemeGroupVersion

	// SchemeBuilder collects the types of this package so they can be added to a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme registers every type of this package with a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
