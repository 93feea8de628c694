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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	shipv1 "example.com/harbor/api/v1"
)

// Tests of the Frigate webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Frigate defaulter: called directly, and through the test API server.
var _ = Describe("Frigate defaulting webhook", func() {
	Context("defaulting", func() {
		It("runs without error on an empty Frigate", func() {
			obj := &shipv1.Frigate{}
			Expect((&FrigateDefaulter{}).Default(ctx, obj)).To(Succeed())
		})

		It("fills in spec.foo when it is empty", func() {
			obj := &shipv1.Frigate{}
			Expect((&FrigateDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})

		It("keeps a spec.foo that is set", func() {
			foo := "custom"
			obj := &shipv1.Frigate{}
			obj.Spec.Foo = &foo
			Expect((&FrigateDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).To(HaveValue(Equal("custom")))
		})

		It("is applied by the API server on create", func() {
			obj := &shipv1.Frigate{}
			obj.SetName("frigate-defaulting-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})
	})
})

// Tests of the Frigate validator: called directly, and through the test API server.
var _ = Describe("Frigate validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty Frigate", func() {
			warnings, err := (&FrigateValidator{}).ValidateCreate(ctx, &shipv1.Frigate{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of Frigate objects", func() {
			oldObj := &shipv1.Frigate{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&FrigateValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting Frigate objects", func() {
			warnings, err := (&FrigateValidator{}).ValidateDelete(ctx, &shipv1.Frigate{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &shipv1.Frigate{}
			obj.SetName("frigate-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid Frigate is rejected:
		// _, err := (&FrigateValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})

// Tests of the Frigate conversion setup.
var _ = Describe("Frigate conversion webhook", func() {
	Context("conversion", func() {
		It("has v1 as the hub version", func() {
			var obj runtime.Object = &shipv1.Frigate{}
			_, isHub := obj.(conversion.Hub)
			Expect(isHub).To(BeTrue())
		})

		// TODO(user): add round-trip tests: convert an object of every spoke version to v1 and back,
		// and check that nothing is lost.
	})
})
