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
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	seav1 "example.com/lighthouse/api/v1"
	// +kubebuilder:scaffold:imports
)

// The tests of this package run against a throw-away control plane (etcd and kube-apiserver)
// started by envtest; no controller manager runs, tests call Reconcile directly.
// Binaries come from KUBEBUILDER_ASSETS, which "make test" sets, or else from bin/k8s where
// "make setup-envtest" puts them. More: https://book.kubebuilder.io/reference/envtest.html

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
)

func TestControllers(t *testing.T) {
	RegisterFailHandler(Fail)

	RunSpecs(t, "Controller Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))

	ctx, cancel = context.WithCancel(context.TODO())

	var err error
	err = seav1.AddToScheme(scheme.Scheme)
	Expect(err).NotTo(HaveOccurred())

	// +kubebuilder:scaffold:scheme

	By("starting the test control plane")
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		// envtest switches the CRDs of types that have several versions with conversion
		// functions to webhook conversion, served by a manager. No manager runs here, so it
		// is given an empty scheme to check: the API server then converts by itself, which
		// only changes apiVersion. Conversions are tested with the webhooks instead.
		Scheme: runtime.NewScheme(),
	}
	if dir := envtestBinaryDir(); dir != "" {
		testEnv.BinaryAssetsDirectory = dir
	}

	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(cfg).NotTo(BeNil())

	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	Expect(k8sClient).NotTo(BeNil())
})

var _ = AfterSuite(func() {
	By("stopping the test control plane")
	cancel()
	Expect(testEnv.Stop()).To(Succeed())
})

// envtestBinaryDir returns the first directory found under bin/k8s, where "make setup-envtest"
// installs the control-plane binaries, so the tests also run from an IDE without
// KUBEBUILDER_ASSETS. It returns "" when there is none; KUBEBUILDER_ASSETS wins when set.
func envtestBinaryDir() string {
	root := filepath.Join("..", "..", "bin", "k8s")
	entries, err := os.ReadDir(root)
	if err != nil {
		logf.Log.V(1).Info("No envtest binaries found", "path", root, "reason", err.Error())
		return ""
	}
	for _, entry := range entries {
		if entry.IsDir() {
			return filepath.Join(root, entry.Name())
		}
	}
	return ""
}
