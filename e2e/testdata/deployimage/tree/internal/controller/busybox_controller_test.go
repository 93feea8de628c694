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
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cachev1alpha1 "example.com/cache/api/v1alpha1"
)

var _ = Describe("BusyboxReconciler", func() {
	const name = "test-busybox"
	const image = "example.com/image:test"

	// Each object of this test lives in a namespace of its own. envtest runs no
	// controller-manager, so the namespace is never really deleted.
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	key := types.NamespacedName{Name: name, Namespace: name}

	BeforeEach(func() {
		By("creating the namespace")
		err := k8sClient.Create(ctx, namespace)
		if !apierrors.IsAlreadyExists(err) {
			Expect(err).NotTo(HaveOccurred())
		}

		By("setting the operand image, as config/manager/manager.yaml does")
		Expect(os.Setenv("BUSYBOX_IMAGE", image)).To(Succeed())

		By("creating the Busybox")
		busybox := &cachev1alpha1.Busybox{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name},
			Spec: cachev1alpha1.BusyboxSpec{
				Size: new(int32(1)),
			},
		}
		Expect(k8sClient.Create(ctx, busybox)).To(Succeed())
	})

	AfterEach(func() {
		By("unsetting the operand image")
		Expect(os.Unsetenv("BUSYBOX_IMAGE")).To(Succeed())
		_ = k8sClient.Delete(ctx, namespace)
	})

	It("deploys the image, reports it, and runs the finalizer on deletion", func() {
		r := &BusyboxReconciler{Client: k8sClient, Scheme: k8sClient.Scheme()}
		req := reconcile.Request{NamespacedName: key}

		By("reconciling once: the Deployment is created")
		_, err := r.Reconcile(ctx, req)
		Expect(err).NotTo(HaveOccurred())
		dep := &appsv1.Deployment{}
		Expect(k8sClient.Get(ctx, key, dep)).To(Succeed())
		Expect(dep.Spec.Replicas).To(HaveValue(Equal(int32(1))))
		Expect(dep.Spec.Template.Spec.Containers).To(HaveLen(1))
		Expect(dep.Spec.Template.Spec.Containers[0].Image).To(Equal(image))
		Expect(dep.OwnerReferences).To(ContainElement(HaveField("Name", Equal(name))))

		By("reconciling again: the Busybox is reported Available")
		_, err = r.Reconcile(ctx, req)
		Expect(err).NotTo(HaveOccurred())
		busybox := &cachev1alpha1.Busybox{}
		Expect(k8sClient.Get(ctx, key, busybox)).To(Succeed())
		Expect(controllerutil.ContainsFinalizer(busybox, busyboxFinalizer)).To(BeTrue())
		var available []metav1.Condition
		Expect(busybox.Status.Conditions).To(ContainElement(
			HaveField("Type", Equal(typeAvailableBusybox)), &available))
		Expect(available).To(HaveLen(1))
		Expect(available[0].Status).To(Equal(metav1.ConditionTrue))
		Expect(available[0].Reason).To(Equal(reasonReconciling))

		By("deleting the Busybox: the finalizer runs and lets it go")
		Expect(k8sClient.Delete(ctx, busybox)).To(Succeed())
		_, err = r.Reconcile(ctx, req)
		Expect(err).NotTo(HaveOccurred())
		err = k8sClient.Get(ctx, key, busybox)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Busybox still exists: %v", err)
	})
})
