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

package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	seav1 "example.com/lighthouse/api/v1"
)

var _ = Describe("BeaconReconciler", func() {
	Context("with an existing Beacon", func() {
		key := types.NamespacedName{Name: "test-beacon", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Beacon unless a previous test left it behind")
			beacon := &seav1.Beacon{}
			err := k8sClient.Get(ctx, key, beacon)
			if apierrors.IsNotFound(err) {
				beacon.SetName(key.Name)
				beacon.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, beacon)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Beacon")
			beacon := &seav1.Beacon{}
			Expect(k8sClient.Get(ctx, key, beacon)).To(Succeed())
			Expect(k8sClient.Delete(ctx, beacon)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &BeaconReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Beacon back")
			beacon := &seav1.Beacon{}
			Expect(k8sClient.Get(ctx, key, beacon)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &BeaconReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
