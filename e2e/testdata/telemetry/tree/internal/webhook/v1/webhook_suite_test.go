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

package v1

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	seav1 "example.com/lighthouse/api/v1"
	// +kubebuilder:scaffold:imports
)

// The tests of this package run against a throw-away control plane (etcd and kube-apiserver)
// started by envtest, with the webhook configurations of config/webhook installed and pointed
// at a manager that serves the webhooks of this package on a local port.
// Binaries come from KUBEBUILDER_ASSETS, which "make test" sets, or else from bin/k8s where
// "make setup-envtest" puts them. More: https://book.kubebuilder.io/reference/envtest.html

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
)

func TestAPIs(t *testing.T) {
	RegisterFailHandler(Fail)

	RunSpecs(t, "Webhook Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))

	ctx, cancel = context.WithCancel(context.TODO())

	var err error
	err = seav1.AddToScheme(scheme.Scheme)
	Expect(err).NotTo(HaveOccurred())

	// +kubebuilder:scaffold:scheme

	By("starting the test control plane with the webhook configurations installed")
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: false,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join("..", "..", "..", "config", "webhook")},
		},
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

	By("starting a manager that serves the webhooks")
	// envtest made the installed webhook configurations call this host, port and certificate.
	installOptions := &testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme.Scheme,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    installOptions.LocalServingHost,
			Port:    installOptions.LocalServingPort,
			CertDir: installOptions.LocalServingCertDir,
		}),
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
	})
	Expect(err).NotTo(HaveOccurred())

	err = SetupBeaconWebhookWithManager(mgr)
	Expect(err).NotTo(HaveOccurred())

	// +kubebuilder:scaffold:webhook

	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	By("waiting until the webhook server accepts connections")
	Eventually(func() error {
		return mgr.GetWebhookServer().StartedChecker()(nil)
	}).Should(Succeed())
})

var _ = AfterSuite(func() {
	By("stopping the manager and the test control plane")
	cancel()
	Expect(testEnv.Stop()).To(Succeed())
})

// envtestBinaryDir returns the first directory found under bin/k8s, where "make setup-envtest"
// installs the control-plane binaries, so the tests also run from an IDE without
// KUBEBUILDER_ASSETS. It returns "" when there is none; KUBEBUILDER_ASSETS wins when set.
func envtestBinaryDir() string {
	root := filepath.Join("..", "..", "..", "bin", "k8s")
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
