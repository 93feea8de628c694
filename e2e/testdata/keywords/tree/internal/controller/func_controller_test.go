package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	langv1 "example.com/lang/api/v1"
)

var _ = Describe("FuncReconciler", func() {
	Context("with an existing Func", func() {
		key := types.NamespacedName{Name: "test-func", Namespace: "default"}

		BeforeEach(func() {
			By("creating the Func unless a previous test left it behind")
			funcObj := &langv1.Func{}
			err := k8sClient.Get(ctx, key, funcObj)
			if apierrors.IsNotFound(err) {
				funcObj.SetName(key.Name)
				funcObj.SetNamespace(key.Namespace)
				// TODO(user): fill in the spec fields your validation rules require.
				Expect(k8sClient.Create(ctx, funcObj)).To(Succeed())
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
		})

		AfterEach(func() {
			By("deleting the Func")
			funcObj := &langv1.Func{}
			Expect(k8sClient.Get(ctx, key, funcObj)).To(Succeed())
			Expect(k8sClient.Delete(ctx, funcObj)).To(Succeed())
		})

		It("reconciles it without error", func() {
			reconciler := &FuncReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
			_, err := reconciler.Reconcile(ctx, reconcile.Request{NamespacedName: key})
			Expect(err).NotTo(HaveOccurred())

			By("reading the Func back")
			funcObj := &langv1.Func{}
			Expect(k8sClient.Get(ctx, key, funcObj)).To(Succeed())
			// TODO(user): assert what Reconcile should have done, e.g. the conditions in the
			// status or the objects it created.
		})
	})

	It("ignores requests for objects that do not exist", func() {
		reconciler := &FuncReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		_, err := reconciler.Reconcile(ctx, reconcile.Request{
			NamespacedName: types.NamespacedName{Name: "does-not-exist", Namespace: "default"},
		})
		Expect(err).NotTo(HaveOccurred())
	})
})
