//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/lang/test/utils"
)

// Names of the objects `make deploy` creates; they carry the namePrefix and
// namespace set in config/default/kustomization.yaml.
const (
	// namespace is where the manager runs.
	namespace = "lang-system"
	// serviceAccountName is the identity of the manager pod.
	serviceAccountName = "lang-controller-manager"
	// metricsServiceName is the Service in front of the metrics endpoint.
	metricsServiceName = "lang-controller-manager-metrics-service"
	// metricsRoleBindingName lets serviceAccountName read the metrics; the
	// suite creates it and removes it again.
	metricsRoleBindingName = "lang-metrics-binding"
	// curlPodName is the short-lived pod that scrapes the metrics endpoint.
	curlPodName = "curl-metrics"
)

var _ = Describe("Manager", Ordered, func() {
	// controllerPodName is filled in by the first spec once the pod runs.
	var controllerPodName string

	BeforeAll(func() {
		By("creating the manager namespace")
		cmd := exec.Command("kubectl", "create", "ns", namespace)
		_, err := utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "the namespace could not be created")

		By("enforcing the restricted Pod Security Standard on the namespace")
		cmd = exec.Command("kubectl", "label", "--overwrite", "ns", namespace,
			"pod-security.kubernetes.io/enforce=restricted")
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "the namespace could not be labelled")

		By("installing the CRDs")
		cmd = exec.Command("make", "install")
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "the CRDs could not be installed")

		By("deploying the controller-manager")
		cmd = exec.Command("make", "deploy", "IMG="+projectImage)
		_, err = utils.Run(cmd)
		Expect(err).NotTo(HaveOccurred(), "the controller-manager could not be deployed")
	})

	AfterAll(func() {
		By("deleting the curl-metrics pod")
		cmd := exec.Command("kubectl", "delete", "pod", curlPodName, "-n", namespace, "--ignore-not-found")
		_, _ = utils.Run(cmd)

		By("deleting the metrics ClusterRoleBinding")
		cmd = exec.Command("kubectl", "delete", "clusterrolebinding", metricsRoleBindingName, "--ignore-not-found")
		_, _ = utils.Run(cmd)

		By("undeploying the controller-manager")
		cmd = exec.Command("make", "undeploy", "ignore-not-found=true")
		_, _ = utils.Run(cmd)

		By("uninstalling the CRDs")
		cmd = exec.Command("make", "uninstall", "ignore-not-found=true")
		_, _ = utils.Run(cmd)

		By("deleting the manager namespace")
		cmd = exec.Command("kubectl", "delete", "ns", namespace, "--ignore-not-found")
		_, _ = utils.Run(cmd)
	})

	// When a spec fails, print what is needed to understand why: manager
	// logs, namespace events, the scrape output and the pod description.
	AfterEach(func() {
		if !CurrentSpecReport().Failed() {
			return
		}
		dump := func(title string, args ...string) {
			output, err := utils.Run(exec.Command("kubectl", args...))
			if err != nil {
				_, _ = fmt.Fprintf(GinkgoWriter, "could not get %s: %v\n", title, err)
				return
			}
			_, _ = fmt.Fprintf(GinkgoWriter, "--- %s ---\n%s\n", title, output)
		}

		if controllerPodName != "" {
			dump("controller-manager logs", "logs", controllerPodName, "-n", namespace)
			dump("controller-manager pod", "describe", "pod", controllerPodName, "-n", namespace)
		}
		dump("events", "get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
		dump("curl-metrics logs", "logs", curlPodName, "-n", namespace)
	})

	SetDefaultEventuallyTimeout(2 * time.Minute)
	SetDefaultEventuallyPollingInterval(time.Second)

	Context("Manager", func() {
		It("runs the controller-manager pod", func() {
			By("waiting for exactly one controller-manager pod to be running")
			verifyControllerUp := func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "pods", "-n", namespace,
					"-l", "control-plane=controller-manager",
					"-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred(), "the controller-manager pods could not be listed")

				// Pods that are being deleted print a second field; skip them.
				var pods []string
				for _, line := range utils.GetNonEmptyLines(output) {
					if fields := strings.Fields(line); len(fields) == 1 {
						pods = append(pods, fields[0])
					}
				}
				g.Expect(pods).To(HaveLen(1), "expected one controller-manager pod, found %v", pods)
				controllerPodName = pods[0]
				g.Expect(controllerPodName).To(ContainSubstring("controller-manager"))

				cmd = exec.Command("kubectl", "get", "pods", controllerPodName, "-n", namespace,
					"-o", "jsonpath={.status.phase}")
				output, err = utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(Equal("Running"), "the controller-manager pod is not running yet")
			}
			Eventually(verifyControllerUp).Should(Succeed())
		})

		It("serves metrics to an authorised client", func() {
			By("binding the metrics-reader ClusterRole to the manager's service account")
			cmd := exec.Command("kubectl", "create", "clusterrolebinding", metricsRoleBindingName,
				"--clusterrole=lang-metrics-reader",
				fmt.Sprintf("--serviceaccount=%s:%s", namespace, serviceAccountName),
			)
			_, err := utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "the metrics ClusterRoleBinding could not be created")

			By("checking that the metrics Service exists")
			cmd = exec.Command("kubectl", "get", "service", metricsServiceName, "-n", namespace)
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "the metrics Service is missing")

			By("requesting a token for the service account")
			token := serviceAccountToken()
			Expect(token).NotTo(BeEmpty())

			By("waiting for the metrics Service to have a ready endpoint")
			verifyMetricsEndpointReady := func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "endpointslices.discovery.k8s.io", "-n", namespace,
					"-l", "kubernetes.io/service-name="+metricsServiceName,
					"-o", "jsonpath={range .items[*]}{range .endpoints[*]}{.addresses[*]}{end}{end}")
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).NotTo(BeEmpty(), "the metrics Service has no ready endpoint yet")
			}
			Eventually(verifyMetricsEndpointReady).Should(Succeed())

			By("checking that the manager started its metrics server")
			verifyMetricsServerStarted := func(g Gomega) {
				cmd := exec.Command("kubectl", "logs", controllerPodName, "-n", namespace)
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(output).To(ContainSubstring("Serving metrics server"),
					"the metrics server has not started yet")
			}
			Eventually(verifyMetricsServerStarted).Should(Succeed())

			By("waiting for a ready endpoint of the Service lang-webhook-service")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "endpointslices.discovery.k8s.io",
					"-n", namespace,
					"-l", "kubernetes.io/service-name=lang-webhook-service",
					"-o", "jsonpath={.items[*].endpoints[*].conditions.ready}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).To(ContainSubstring("true"))
			}).Should(Succeed())
			By("waiting for the CA bundle of lang-mutating-webhook-configuration")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
					"lang-mutating-webhook-configuration",
					"-o", "jsonpath={.webhooks[*].clientConfig.caBundle}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).NotTo(BeEmpty())
			}).Should(Succeed())
			By("waiting for the CA bundle of lang-validating-webhook-configuration")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "validatingwebhookconfigurations.admissionregistration.k8s.io",
					"lang-validating-webhook-configuration",
					"-o", "jsonpath={.webhooks[*].clientConfig.caBundle}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).NotTo(BeEmpty())
			}).Should(Succeed())
			// +kubebuilder:scaffold:e2e-metrics-webhooks-readiness

			By("scraping the metrics endpoint from a pod that presents the token")
			overrides, err := curlPodOverrides(token)
			Expect(err).NotTo(HaveOccurred())
			cmd = exec.Command("kubectl", "run", curlPodName, "--restart=Never",
				"--namespace", namespace,
				"--image=curlimages/curl:latest",
				"--overrides", overrides)
			_, err = utils.Run(cmd)
			Expect(err).NotTo(HaveOccurred(), "the curl-metrics pod could not be created")

			By("waiting for the curl-metrics pod to complete")
			verifyCurlDone := func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "pods", curlPodName, "-n", namespace,
					"-o", "jsonpath={.status.phase}")
				output, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				if output == "Failed" {
					// curl gave up (see its logs below): waiting longer changes nothing.
					StopTrying("the curl-metrics pod failed").Now()
				}
				g.Expect(output).To(Equal("Succeeded"), "the curl-metrics pod has not completed yet")
			}
			Eventually(verifyCurlDone, 5*time.Minute).Should(Succeed())

			By("checking that the scrape was authorised")
			Expect(getMetricsOutput()).To(ContainSubstring("< HTTP/1.1 200 OK"))
		})

		It("should have a serving certificate for the webhooks", func() {
			By("waiting for cert-manager to store it in the secret webhook-server-cert")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "secret", "webhook-server-cert",
					"-n", namespace, "-o", "jsonpath={.data.tls\\.crt}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).NotTo(BeEmpty())
			}).Should(Succeed())
		})
		It("should have the CA bundle injected into the mutating webhooks", func() {
			By("reading the caBundle of lang-mutating-webhook-configuration")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "mutatingwebhookconfigurations.admissionregistration.k8s.io",
					"lang-mutating-webhook-configuration",
					"-o", "jsonpath={.webhooks[*].clientConfig.caBundle}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).NotTo(BeEmpty())
			}).Should(Succeed())
		})
		It("should have the CA bundle injected into the validating webhooks", func() {
			By("reading the caBundle of lang-validating-webhook-configuration")
			Eventually(func(g Gomega) {
				cmd := exec.Command("kubectl", "get", "validatingwebhookconfigurations.admissionregistration.k8s.io",
					"lang-validating-webhook-configuration",
					"-o", "jsonpath={.webhooks[*].clientConfig.caBundle}")
				out, err := utils.Run(cmd)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(out).NotTo(BeEmpty())
			}).Should(Succeed())
		})
		// +kubebuilder:scaffold:e2e-webhooks-checks

		// TODO(user): add specs for your own controllers here, for example: create a custom
		// resource, wait for its status to report readiness, and check that the
		// reconcile metrics (controller_runtime_reconcile_total) were recorded.
	})
})

// serviceAccountToken returns a short-lived token of the manager's service
// account, retrying while the API server is not ready to issue one.
func serviceAccountToken() string {
	var token string
	Eventually(func(g Gomega) {
		cmd := exec.Command("kubectl", "create", "token", serviceAccountName, "-n", namespace)
		output, err := utils.Run(cmd)
		g.Expect(err).NotTo(HaveOccurred())
		token = strings.TrimSpace(output)
		g.Expect(token).NotTo(BeEmpty())
	}).Should(Succeed())
	return token
}

// curlPodOverrides returns the `kubectl run --overrides` document of the
// curl-metrics pod: it runs as the manager's service account, meets the
// restricted Pod Security Standard and requests /metrics with token.
func curlPodOverrides(token string) (string, error) {
	url := fmt.Sprintf("https://%s.%s.svc.cluster.local:8443/metrics", metricsServiceName, namespace)
	overrides := map[string]any{
		"spec": map[string]any{
			"serviceAccountName": serviceAccountName,
			"containers": []any{
				map[string]any{
					"name":    "curl",
					"image":   "curlimages/curl:latest",
					"command": []string{"/bin/sh", "-c"},
					"args": []string{
						// A Service's ClusterIP refuses connections until the node's proxy has
						// its new endpoint, a moment after the endpoint is ready: retried.
						fmt.Sprintf("curl -v -k --retry 10 --retry-delay 3 --retry-connrefused "+
							"-H 'Authorization: Bearer %s' %s", token, url),
					},
					"securityContext": map[string]any{
						"allowPrivilegeEscalation": false,
						"readOnlyRootFilesystem":   true,
						"runAsNonRoot":             true,
						"runAsUser":                1000,
						"capabilities": map[string]any{
							"drop": []string{"ALL"},
						},
						"seccompProfile": map[string]any{
							"type": "RuntimeDefault",
						},
					},
				},
			},
		},
	}
	data, err := json.Marshal(overrides)
	return string(data), err
}

// getMetricsOutput returns what the curl-metrics pod printed.
func getMetricsOutput() string {
	cmd := exec.Command("kubectl", "logs", curlPodName, "-n", namespace)
	output, err := utils.Run(cmd)
	Expect(err).NotTo(HaveOccurred(), "the curl-metrics logs could not be read")
	return output
}
