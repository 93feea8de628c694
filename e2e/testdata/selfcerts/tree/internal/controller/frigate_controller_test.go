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

	shipv1 "example.com/harbor/api/v1"
)

var _ = Describe("FrigateReconciler", func() {
	Context("with an existing Frigate", func() {
		key := types.NamespacedName{Name: "test-frigate", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Frigate unless a previous test left it behind")
			frigate := &shipv1.Frigate{}
			err := k8sClient.Get(ctx, key, frigate)
			if apierrors.IsNotFound(err) {
				frigate.SetName(key.Name)
				frigate.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, frigate)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Frigate")
			frigate := &shipv1.Frigate{}
			Expect(k8sClient.Get(ctx, key, frigate)).To(Succeed())
			Expect(k8sClient.Delete(ctx, frigate)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &FrigateReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Frigate back")
			frigate := &shipv1.Frigate{}
			Expect(k8sClient.Get(ctx, key, frigate)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &FrigateReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
