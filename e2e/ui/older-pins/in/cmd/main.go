// The manager of a project started long ago, cut down to the markers `create api` fills in.
package main

import (
	"k8s.io/apimachinery/pkg/runtime"
	// +kubebuilder:scaffold:imports
)

var scheme = runtime.NewScheme()

func init() {
	// +kubebuilder:scaffold:scheme
}

func main() {
	_ = scheme
	// +kubebuilder:scaffold:builder
}
