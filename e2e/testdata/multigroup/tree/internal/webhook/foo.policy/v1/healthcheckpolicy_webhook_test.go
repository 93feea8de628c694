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

	foopolicyv1 "example.com/fleet/api/foo.policy/v1"
)

// Tests of the HealthCheckPolicy webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the HealthCheckPolicy validator: called directly, and through the test API server.
var _ = Describe("HealthCheckPolicy validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty HealthCheckPolicy", func() {
			warnings, err := (&HealthCheckPolicyValidator{}).ValidateCreate(ctx, &foopolicyv1.HealthCheckPolicy{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of HealthCheckPolicy objects", func() {
			oldObj := &foopolicyv1.HealthCheckPolicy{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&HealthCheckPolicyValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting HealthCheckPolicy objects", func() {
			warnings, err := (&HealthCheckPolicyValidator{}).ValidateDelete(ctx, &foopolicyv1.HealthCheckPolicy{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &foopolicyv1.HealthCheckPolicy{}
			obj.SetName("healthcheckpolicy-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid HealthCheckPolicy is rejected:
		// _, err := (&HealthCheckPolicyValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})
