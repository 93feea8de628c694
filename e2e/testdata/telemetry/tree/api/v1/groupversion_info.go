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

// Package v1 holds the v1 types of the sea.example.com API group.
// +kubebuilder:object:generate=true
// +groupName=sea.example.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// SchemeGroupVersion identifies the group and version of every type in this package.
	SchemeGroupVersion = schema.GroupVersion{Group: "sea.example.com", Version: "v1"}

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
