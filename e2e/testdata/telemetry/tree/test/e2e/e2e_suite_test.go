//go:build e2e

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

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/lighthouse/test/utils"
)

var (
	// projectImage is the manager image built from this checkout and loaded
	// into the Kind cluster before any spec runs.
	// TODO(user): use the image name of your project.
	projectImage = "example.com/lighthouse:v0.0.1"

	// skipCertManagerInstall lets CERT_MANAGER_INSTALL_SKIP=true keep the suite
	// from touching cert-manager, e.g. on a cluster that manages it itself.
	skipCertManagerInstall = os.Getenv("CERT_MANAGER_INSTALL_SKIP") == "true"

	// shouldCleanupCertManager records whether this suite installed
	// cert-manager and therefore has to remove it again.
	shouldCleanupCertManager = false
)

// TestE2E runs the end-to-end specs against the Kind cluster prepared by
// `make setup-test-e2e`. They need the e2e build tag: `make test-e2e`.
func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	_, _ = fmt.Fprintf(GinkgoWriter, "Running the lighthouse end-to-end suite\n")
	RunSpecs(t, "lighthouse e2e suite")
}

var _ = BeforeSuite(func() {
	By("building the manager image " + projectImage)
	cmd := exec.Command("make", "docker-build", "IMG="+projectImage)
	_, err := utils.Run(cmd)
	Expect(err).NotTo(HaveOccurred(), "the manager image could not be built")

	By("loading the manager image into Kind")
	err = utils.LoadImageToKindClusterWithName(projectImage)
	Expect(err).NotTo(HaveOccurred(), "the manager image could not be loaded into Kind")

	if skipCertManagerInstall {
		_, _ = fmt.Fprintf(GinkgoWriter, "CERT_MANAGER_INSTALL_SKIP=true: leaving cert-manager alone\n")
		return
	}
	if utils.IsCertManagerCRDsInstalled() {
		_, _ = fmt.Fprintf(GinkgoWriter, "cert-manager is already installed; keeping it\n")
		return
	}

	By("installing cert-manager (webhook and metrics certificates)")
	Expect(utils.InstallCertManager()).To(Succeed(), "cert-manager could not be installed")
	shouldCleanupCertManager = true
})

var _ = AfterSuite(func() {
	if shouldCleanupCertManager {
		By("removing the cert-manager installed by this suite")
		utils.UninstallCertManager()
	}
})
