package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	langv1 "example.com/lang/api/v1"
)

var _ = Describe("RangeReconciler", func() {
	Context("with an existing Range", func() {
		key := types.NamespacedName{Name: "test-range", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Range unless a previous test left it behind")
			rangeObj := &langv1.Range{}
			err := k8sClient.Get(ctx, key, rangeObj)
			if apierrors.IsNotFound(err) {
				rangeObj.SetName(key.Name)
				rangeObj.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, rangeObj)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Range")
			rangeObj := &langv1.Range{}
			Expect(k8sClient.Get(ctx, key, rangeObj)).To(Succeed())
			Expect(k8sClient.Delete(ctx, rangeObj)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &RangeReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Range back")
			rangeObj := &langv1.Range{}
			Expect(k8sClient.Get(ctx, key, rangeObj)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &RangeReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
