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

package utils

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
)

const (
	// certManagerVersion is the cert-manager release the e2e suite installs
	// when the cluster does not have cert-manager yet.
	certManagerVersion = "v1.21.1"
	certManagerURLTmpl = "https://github.com/cert-manager/cert-manager/releases/download/%s/cert-manager.yaml"

	// defaultKindBinary and defaultKindCluster apply when the KIND and
	// KIND_CLUSTER environment variables are unset (`make test-e2e` sets both).
	defaultKindBinary  = "kind"
	defaultKindCluster = "kind"
)

// Run executes cmd from the project's root directory and returns what it
// printed on stdout and stderr. A non-zero exit becomes an error that quotes
// the command and its output.
func Run(cmd *exec.Cmd) (string, error) {
	dir, err := GetProjectDir()
	if err != nil {
		return "", err
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=on")

	command := strings.Join(cmd.Args, " ")
	_, _ = fmt.Fprintf(ginkgo.GinkgoWriter, "running: %q\n", command)

	output, err := cmd.CombinedOutput()
	if err != nil {
		return string(output), fmt.Errorf("%q failed: %w\n%s", command, err, output)
	}
	return string(output), nil
}

// InstallCertManager applies the pinned cert-manager release and waits until
// its webhook is available, so Certificates and Issuers can be created
// right after it returns.
func InstallCertManager() error {
	url := fmt.Sprintf(certManagerURLTmpl, certManagerVersion)
	if _, err := Run(exec.Command("kubectl", "apply", "-f", url)); err != nil {
		return err
	}

	_, err := Run(exec.Command("kubectl", "wait", "deployment.apps/cert-manager-webhook",
		"--for", "condition=Available",
		"--namespace", "cert-manager",
		"--timeout", "5m",
	))
	return err
}

// UninstallCertManager removes what InstallCertManager created. Failures are
// only reported, since this runs during cleanup.
func UninstallCertManager() {
	url := fmt.Sprintf(certManagerURLTmpl, certManagerVersion)
	if _, err := Run(exec.Command("kubectl", "delete", "-f", url, "--ignore-not-found")); err != nil {
		warnError(err)
	}

	// cert-manager's leader-election leases live in kube-system and are not part
	// of the release manifest; left behind they slow down a later reinstall.
	for _, lease := range []string{"cert-manager-cainjector-leader-election", "cert-manager-controller"} {
		cmd := exec.Command("kubectl", "delete", "lease", lease,
			"--namespace", "kube-system", "--ignore-not-found", "--force", "--grace-period=0")
		if _, err := Run(cmd); err != nil {
			warnError(err)
		}
	}
}

// IsCertManagerCRDsInstalled tells whether any cert-manager CRD is already
// registered in the cluster.
func IsCertManagerCRDsInstalled() bool {
	output, err := Run(exec.Command("kubectl", "get", "crds", "-o", "name"))
	if err != nil {
		return false
	}

	for _, line := range GetNonEmptyLines(output) {
		if strings.HasSuffix(line, ".cert-manager.io") {
			return true
		}
	}
	return false
}

// LoadImageToKindClusterWithName copies a locally built image into the nodes
// of the Kind cluster named by KIND_CLUSTER (default "kind"), using the Kind
// binary named by KIND (default "kind").
func LoadImageToKindClusterWithName(name string) error {
	kind := envOr("KIND", defaultKindBinary)
	cluster := envOr("KIND_CLUSTER", defaultKindCluster)

	_, err := Run(exec.Command(kind, "load", "docker-image", name, "--name", cluster))
	return err
}

// GetNonEmptyLines splits command output into lines, dropping blank ones.
func GetNonEmptyLines(output string) []string {
	var lines []string
	for line := range strings.SplitSeq(output, "\n") {
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// GetProjectDir returns the root of the project (the directory holding
// go.mod), wherever below it the tests are started from.
func GetProjectDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot determine the working directory: %w", err)
	}

	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod found in %s or any parent directory", wd)
		}
		dir = parent
	}
}

// UncommentCode removes prefix from the start of every line of target inside
// filename. target is the commented text exactly as it appears in the file;
// it is an error if it cannot be found.
func UncommentCode(filename, target, prefix string) error {
	content, err := os.ReadFile(filename)
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", filename, err)
	}

	before, after, found := strings.Cut(string(content), target)
	if !found {
		return fmt.Errorf("%s does not contain the text to uncomment:\n%s", filename, target)
	}

	lines := strings.Split(target, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimPrefix(line, prefix)
	}
	updated := before + strings.Join(lines, "\n") + after

	info, err := os.Stat(filename)
	if err != nil {
		return err
	}
	return os.WriteFile(filename, []byte(updated), info.Mode().Perm())
}

// envOr returns the value of the environment variable key, or fallback when
// it is unset or empty.
func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// warnError prints a non-fatal problem to the Ginkgo output.
func warnError(err error) {
	_, _ = fmt.Fprintf(ginkgo.GinkgoWriter, "warning: %v\n", err)
}
