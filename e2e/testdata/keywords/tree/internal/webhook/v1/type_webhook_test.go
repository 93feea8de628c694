package v1

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	langv1 "example.com/lang/api/v1"
)

// Tests of the Type webhooks. Besides calling the handlers directly, the tests that create
// objects go through the test API server and so also check that the webhook markers (run
// "make manifests" after changing one) match the paths the manager serves.

// Tests of the Type defaulter: called directly, and through the test API server.
var _ = Describe("Type defaulting webhook", func() {
	Context("defaulting", func() {
		It("runs without error on an empty Type", func() {
			obj := &langv1.Type{}
			Expect((&TypeDefaulter{}).Default(ctx, obj)).To(Succeed())
		})

		It("fills in spec.foo when it is empty", func() {
			obj := &langv1.Type{}
			Expect((&TypeDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})

		It("keeps a spec.foo that is set", func() {
			foo := "custom"
			obj := &langv1.Type{}
			obj.Spec.Foo = &foo
			Expect((&TypeDefaulter{}).Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Foo).To(HaveValue(Equal("custom")))
		})

		It("is applied by the API server on create", func() {
			obj := &langv1.Type{}
			obj.SetName("type-defaulting-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})
			Expect(obj.Spec.Foo).NotTo(BeNil())
		})
	})
})

// Tests of the Type validator: called directly, and through the test API server.
var _ = Describe("Type validating webhook", func() {
	Context("validation", func() {
		It("accepts creating an empty Type", func() {
			warnings, err := (&TypeValidator{}).ValidateCreate(ctx, &langv1.Type{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts updating the labels of Type objects", func() {
			oldObj := &langv1.Type{}
			newObj := oldObj.DeepCopy()
			newObj.SetLabels(map[string]string{"changed": "true"})
			warnings, err := (&TypeValidator{}).ValidateUpdate(ctx, oldObj, newObj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("accepts deleting Type objects", func() {
			warnings, err := (&TypeValidator{}).ValidateDelete(ctx, &langv1.Type{})
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(BeEmpty())
		})

		It("is called by the API server on create and update", func() {
			obj := &langv1.Type{}
			obj.SetName("type-validation-test")
			obj.SetNamespace("default")
			Expect(k8sClient.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func() {
				Expect(k8sClient.Delete(ctx, obj)).To(Succeed())
			})

			obj.SetLabels(map[string]string{"changed": "true"})
			Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		})

		// TODO(user): add a test for every rule you implement, e.g. that an invalid Type is rejected:
		// _, err := (&TypeValidator{}).ValidateCreate(ctx, invalidObj)
		// Expect(err).To(HaveOccurred())
	})
})
