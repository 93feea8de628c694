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

	seav1 "example.com/lighthouse/api/v1"
)

// Tests of the Beacon webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Beacon defaulter: called directly, and through the test API server.
var _ = Describe("Beacon defaulting webhook", func() {
	Context("defaulting", func() {
		It("runs without error on an empty Beacon", func() {
			obj := &seav1.Beacon{}
			Expect((&BeaconDefaulter{}).Default(ctx, obj)).To(Succeed())
		})

		It("fills in spec.foo when it is empty", func() {
			obj := &seav1.Beacon{}
			Expect((&BeaconDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})

		It("keeps a spec.foo that is set", func() {
			foo := "custom"
			obj := &seav1.Beacon{}
			obj.Spec.Foo = &foo
			Expect((&BeaconDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).To(HaveValue(Equal("custom")))
		})

		It("is applied by the API server on create", func() {
			obj := &seav1.Beacon{}
			obj.SetName("beacon-defaulting-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})
	})
})

// Tests of the Beacon validator: called directly, and through the test API server.
var _ = Describe("Beacon validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty Beacon", func() {
			warnings, err := (&BeaconValidator{}).ValidateCreate(ctx, &seav1.Beacon{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of Beacon objects", func() {
			oldObj := &seav1.Beacon{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&BeaconValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting Beacon objects", func() {
			warnings, err := (&BeaconValidator{}).ValidateDelete(ctx, &seav1.Beacon{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &seav1.Beacon{}
			obj.SetName("beacon-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid Beacon is rejected:
		// _, err := (&BeaconValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})
