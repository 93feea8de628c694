package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	langv1 "example.com/lang/api/v1"
)

var _ = Describe("MapReconciler", func() {
	Context("with an existing Map", func() {
		key := types.NamespacedName{Name: "test-map", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Map unless a previous test left it behind")
			mapObj := &langv1.Map{}
			err := k8sClient.Get(ctx, key, mapObj)
			if apierrors.IsNotFound(err) {
				mapObj.SetName(key.Name)
				mapObj.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, mapObj)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Map")
			mapObj := &langv1.Map{}
			Expect(k8sClient.Get(ctx, key, mapObj)).To(Succeed())
			Expect(k8sClient.Delete(ctx, mapObj)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &MapReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Map back")
			mapObj := &langv1.Map{}
			Expect(k8sClient.Get(ctx, key, mapObj)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &MapReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
