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

package v1alpha1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	cachev1alpha1 "example.com/cache/api/v1alpha1"
)

// Tests of the Memcached webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Memcached validator: called directly, and through the test API server.
var _ = Describe("Memcached validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty Memcached", func() {
			warnings, err := (&MemcachedValidator{}).ValidateCreate(ctx, &cachev1alpha1.Memcached{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of Memcached objects", func() {
			oldObj := &cachev1alpha1.Memcached{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&MemcachedValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting Memcached objects", func() {
			warnings, err := (&MemcachedValidator{}).ValidateDelete(ctx, &cachev1alpha1.Memcached{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &cachev1alpha1.Memcached{}
			obj.SetName("memcached-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid Memcached is rejected:
		// _, err := (&MemcachedValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})
