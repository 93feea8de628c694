/*
Copyright 2026 The Guestbook Authors.

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

package v1beta1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ingressv1beta1 "example.com/guestbook/api/v1beta1"
)

// Tests of the App webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the App defaulter: called directly, and through the test API server.
var _ = Describe("App defaulting webhook", func() {
	Context("defaulting", func() {
		It("runs without error on an empty App", func() {
			obj := &ingressv1beta1.App{}
			Expect((&AppDefaulter{}).Default(ctx, obj)).To(Succeed())
		})

		It("fills in spec.foo when it is empty", func() {
			obj := &ingressv1beta1.App{}
			Expect((&AppDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})

		It("keeps a spec.foo that is set", func() {
			foo := "custom"
			obj := &ingressv1beta1.App{}
			obj.Spec.Foo = &foo
			Expect((&AppDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).To(HaveValue(Equal("custom")))
		})

		It("is applied by the API server on create", func() {
			obj := &ingressv1beta1.App{}
			obj.SetName("app-defaulting-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})
	})
})

// Tests of the App validator: called directly, and through the test API server.
var _ = Describe("App validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty App", func() {
			warnings, err := (&AppValidator{}).ValidateCreate(ctx, &ingressv1beta1.App{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of App objects", func() {
			oldObj := &ingressv1beta1.App{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&AppValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting App objects", func() {
			warnings, err := (&AppValidator{}).ValidateDelete(ctx, &ingressv1beta1.App{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &ingressv1beta1.App{}
			obj.SetName("app-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid App is rejected:
		// _, err := (&AppValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})
