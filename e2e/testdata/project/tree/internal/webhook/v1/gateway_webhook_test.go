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

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	ingressv1 "example.com/guestbook/api/v1"
)

// Tests of the Gateway webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Gateway conversion setup.
var _ = Describe("Gateway conversion webhook", func() {
	Context("conversion", func() {
		It("has v1 as the hub version", func() {
			var obj runtime.Object = &ingressv1.Gateway{}
			_, isHub := obj.(conversion.Hub)
			Expect(isHub).To(BeTrue())
		})

		// TODO(user): add round-trip tests: convert an object of every spoke version to v1 and back,
		// and check that nothing is lost.
	})
})
