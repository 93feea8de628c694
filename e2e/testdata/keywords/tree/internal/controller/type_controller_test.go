package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	langv1 "example.com/lang/api/v1"
)

var _ = Describe("TypeReconciler", func() {
	Context("with an existing Type", func() {
		key := types.NamespacedName{Name: "test-type", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Type unless a previous test left it behind")
			typeObj := &langv1.Type{}
			err := k8sClient.Get(ctx, key, typeObj)
			if apierrors.IsNotFound(err) {
				typeObj.SetName(key.Name)
				typeObj.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, typeObj)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Type")
			typeObj := &langv1.Type{}
			Expect(k8sClient.Get(ctx, key, typeObj)).To(Succeed())
			Expect(k8sClient.Delete(ctx, typeObj)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &TypeReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Type back")
			typeObj := &langv1.Type{}
			Expect(k8sClient.Get(ctx, key, typeObj)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &TypeReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
