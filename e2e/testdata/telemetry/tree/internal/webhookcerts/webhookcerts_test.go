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

package webhookcerts

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIssuedCertificateVerifiesForEachHost(t *testing.T) {
	ca, err := NewCA("test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.Issue([]string{"172.18.0.1", "tunnel.example.com"}, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("the certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"172.18.0.1", "tunnel.example.com"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
			t.Errorf("not valid for %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "127.0.0.1"}); err == nil {
		t.Error("valid for a host it was not issued for")
	}
	if cert.NotAfter.After(ca.cert.NotAfter) {
		t.Errorf("the certificate outlives its CA: %v after %v", cert.NotAfter, ca.cert.NotAfter)
	}
	other, err := NewCA("other-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: other.Pool(), DNSName: "172.18.0.1"}); err == nil {
		t.Error("verified by a CA that did not sign it")
	}
}

const manifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-ingress-example-com-v1-app}
  failurePolicy: Fail
  name: mapp-v1.kb.io
  rules:
  - apiGroups: [ingress.example.com]
    apiVersions: [v1]
    operations: [CREATE, UPDATE]
    resources: [apps]
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-ingress-example-com-v1-app}
  failurePolicy: Fail
  name: vapp-v1.kb.io
  sideEffects: None
- admissionReviewVersions: [v1]
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-gone}
  name: vgone-v1.kb.io
  sideEffects: None
`

func TestConfigurationsCallThisMachineAndFailOpen(t *testing.T) {
	l := &Local{baseURL: "https://127.0.0.1:9443", instance: "0123abcd"}
	served := func(path string) bool { return path != "/validate-gone" }
	m, v, err := l.configurations(strings.NewReader(manifests), served)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil || v == nil {
		t.Fatalf("mutating %v, validating %v", m, v)
	}
	if m.Name != projectName+"-make-run-0123abcd" || m.Labels[labelRun] != "0123abcd" {
		t.Errorf("name %q, labels %v", m.Name, m.Labels)
	}
	if len(m.Webhooks) != 1 || len(v.Webhooks) != 1 {
		t.Fatalf("want the served webhooks only, got %d mutating, %d validating", len(m.Webhooks), len(v.Webhooks))
	}
	check := func(name string, cc admissionregistrationv1.WebhookClientConfig,
		policy *admissionregistrationv1.FailurePolicyType, url string) {
		if cc.Service != nil || cc.URL == nil || *cc.URL != url {
			t.Errorf("%s: client config %+v, want the URL %s", name, cc, url)
		}
		if policy == nil || *policy != admissionregistrationv1.Ignore {
			t.Errorf("%s: failurePolicy %v, want Ignore", name, policy)
		}
	}
	check(m.Webhooks[0].Name, m.Webhooks[0].ClientConfig, m.Webhooks[0].FailurePolicy,
		"https://127.0.0.1:9443/mutate-ingress-example-com-v1-app")
	check(v.Webhooks[0].Name, v.Webhooks[0].ClientConfig, v.Webhooks[0].FailurePolicy,
		"https://127.0.0.1:9443/validate-ingress-example-com-v1-app")
	if got := m.Webhooks[0].Rules; len(got) != 1 || got[0].Resources[0] != "apps" {
		t.Errorf("rules not kept: %+v", got)
	}

	m, v, err = l.configurations(strings.NewReader("# no objects until a webhook exists\n"), served)
	if err != nil || m != nil || v != nil {
		t.Errorf("a file without objects: %v, %v, %v", m, v, err)
	}
}

func TestAddressTakesHostAndPort(t *testing.T) {
	for _, c := range []struct {
		flag, host string
		port       int
	}{
		{"127.0.0.1", "127.0.0.1", 9443},
		{"host.docker.internal", "host.docker.internal", 9443},
		{"tunnel.example.com:443", "tunnel.example.com", 443},
		{"[::1]:19443", "::1", 19443},
		{"::1", "::1", 9443},
	} {
		host, port, err := (&Local{host: c.flag, port: 9443}).address(t.Context())
		if err != nil || host != c.host || port != c.port {
			t.Errorf("%s: %s %d %v, want %s %d", c.flag, host, port, err, c.host, c.port)
		}
	}
	for _, bad := range []string{"tunnel.example.com:https", "127.0.0.1:0", ":9443"} {
		if _, _, err := (&Local{host: bad, port: 9443}).address(t.Context()); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestChooseHost(t *testing.T) {
	network := func(cidr string) *net.IPNet {
		ip, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	ips := func(s ...string) []net.IP {
		out := make([]net.IP, 0, len(s))
		for _, a := range s {
			out = append(out, net.ParseIP(a))
		}
		return out
	}
	loopback := network("127.0.0.1/8")
	for _, c := range []struct {
		name             string
		apiServer, nodes []net.IP
		local            []*net.IPNet
		want             string
	}{
		{"kind", ips("127.0.0.1"), ips("172.18.0.2"), []*net.IPNet{loopback, network("172.18.0.1/16")}, "172.18.0.1"},
		{"a control plane on this machine", ips("127.0.0.1"), nil, []*net.IPNet{loopback}, "127.0.0.1"},
		{"a node on this machine", ips("10.200.0.1"), ips("192.168.1.10"),
			[]*net.IPNet{loopback, network("10.200.0.1/32"), network("192.168.1.10/24")}, "10.200.0.1"},
		{"minikube's docker driver", ips("192.168.49.2"), ips("192.168.49.2"),
			[]*net.IPNet{loopback, network("192.168.49.1/24")}, "192.168.49.1"},
		{"a cluster on the LAN, nodes hidden", ips("192.168.1.50"), nil,
			[]*net.IPNet{loopback, network("192.168.1.10/24")}, "192.168.1.10"},
	} {
		got, why, err := chooseHost("server", c.apiServer, c.nodes, c.local)
		if err != nil || got != c.want || why == "" {
			t.Errorf("%s: %q (%s) %v, want %s", c.name, got, why, err, c.want)
		}
	}
	_, _, err := chooseHost("127.0.0.1", ips("127.0.0.1"), ips("172.18.0.2"), []*net.IPNet{loopback})
	if err == nil || !strings.Contains(err.Error(), "WEBHOOK_DEV_HOST=host.docker.internal") {
		t.Errorf("kind on Docker Desktop: %v, want an error naming host.docker.internal", err)
	}
	_, _, err = chooseHost("api.example.com", ips("203.0.113.10"), ips("10.0.0.5"),
		[]*net.IPNet{loopback, network("192.168.1.10/24")})
	if err == nil || !strings.Contains(err.Error(), "WEBHOOK_DEV_HOST=") {
		t.Errorf("a remote cluster: %v, want an error naming WEBHOOK_DEV_HOST", err)
	}
}

func TestClientConfigApplier(t *testing.T) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if got := clientConfigApplier(crd); got != "" {
		t.Errorf("no managed fields: %q", got)
	}
	fields := func(v any) *metav1.FieldsV1 {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return metav1.NewFieldsV1(string(raw))
	}
	clientConfig := map[string]any{"f:spec": map[string]any{"f:conversion": map[string]any{
		"f:webhook": map[string]any{"f:clientConfig": map[string]any{"f:service": map[string]any{}}}}}}
	crd.ManagedFields = []metav1.ManagedFieldsEntry{
		{Manager: "kube-apiserver", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
			FieldsV1: fields(map[string]any{"f:status": map[string]any{}})},
		{Manager: "someone", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(clientConfig)},
		{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: fields(map[string]any{"f:spec": map[string]any{"f:group": map[string]any{}}})},
	}
	if got := clientConfigApplier(crd); got != "" {
		t.Errorf("nobody applied the client config, got %q", got)
	}
	crd.ManagedFields = append(crd.ManagedFields, metav1.ManagedFieldsEntry{
		Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(clientConfig)})
	if got := clientConfigApplier(crd); got != "kubectl" {
		t.Errorf("got %q, want kubectl", got)
	}
}

func TestLeftOver(t *testing.T) {
	now := time.Now()
	config := func(instance string, alive time.Time) *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{labelRun: instance},
			Annotations: map[string]string{annotationAlive: alive.UTC().Format(time.RFC3339)},
		}}
	}
	for _, c := range []struct {
		name string
		o    *admissionregistrationv1.MutatingWebhookConfiguration
		want bool
	}{
		{"this instance's, just renewed", config("mine", now), true},
		{"another run's, just renewed", config("theirs", now.Add(-time.Minute)), false},
		{"another run's, not renewed for five minutes", config("theirs", now.Add(-staleAfter)), true},
		{"another run's, never renewed", &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{labelRun: "theirs"}}}, true},
	} {
		if got := leftOver(c.o, "mine", now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
