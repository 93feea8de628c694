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

package v1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
)

// Tests of the Pod webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Pod defaulter: called directly, and through the test API server.
var _ = Describe("Pod defaulting webhook", func() {
	Context("defaulting", func() {
		It("runs without error on an empty Pod", func() {
			obj := &corev1.Pod{}
			Expect((&PodDefaulter{}).Default(ctx, obj)).To(Succeed())
		})

		// TODO(user): add tests for the defaults you implement.
	})
})
