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
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1ac "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

const (
	// projectName prefixes the names of the webhook configurations make run registers.
	projectName = "lighthouse"
	// manifestsFile is where `make manifests` writes the webhook configurations; make run
	// runs the manager in the project's root.
	manifestsFile = "config/webhook/manifests.yaml"
	// labelRun marks the webhook configurations of make run, with the run's instance
	// (instanceID: this machine and directory) as its value.
	labelRun = "opbuilder.io/make-run"
	// annotationAlive says when the run that registered a configuration last renewed it.
	annotationAlive = "opbuilder.io/make-run-alive"
	// annotationConversion keeps a CRD's conversion as it was before make run pointed it at
	// this machine (JSON), to be put back when make run stops.
	annotationConversion = "opbuilder.io/conversion-before-make-run"
	// localValidity is how long make run's certificate authority and certificate last.
	localValidity = 7 * 24 * time.Hour
	// A run renews annotationAlive every aliveEvery. A configuration of another instance not
	// renewed for staleAfter was left by a run that was killed: the next run deletes it.
	aliveEvery = time.Minute
	staleAfter = 5 * time.Minute
	// cleanupTimeout bounds the removal once the manager is told to stop.
	cleanupTimeout = 10 * time.Second
)

var localLog = ctrl.Log.WithName("make-run-webhooks")

// Local serves the manager's webhooks from this machine, for `make run`. With a certificate
// authority and a serving certificate made for the address at which the API server reaches
// this machine, it registers webhook configurations of its own (named after the project and
// this run's instance, failurePolicy Ignore) that call the webhook server there by URL, and
// points the conversion of the CRDs the manager converts at it. When the manager stops, the
// configurations are deleted and each CRD's conversion is put back as it was.
//
// A run that is killed leaves nothing that blocks the cluster's admission: its webhooks are
// skipped once they cannot be reached (Ignore), and the next make run deletes them (any run
// deletes those of another instance not renewed for five minutes). A CRD's conversion cannot
// fail open: it stays pointed at this machine until the next make run stops and puts it back.
type Local struct {
	host string
	port int
	cert *tls.Certificate

	mgr        ctrl.Manager
	client     client.Client
	ca         *CA
	baseURL    string
	instance   string
	mutating   *admissionregistrationv1.MutatingWebhookConfiguration
	validating *admissionregistrationv1.ValidatingWebhookConfiguration
	convert    bool
	converted  []string
}

// SetupLocal serves the webhooks of server from this machine when host (the manager's
// --webhook-dev-host, which make run passes) is not empty: host is the address at which the
// API server reaches this machine (a host, or host:port when a tunnel forwards another port to
// the webhook port), or "auto" to find it. Call it once every webhook is set up: it makes the
// certificate, has server serve it, and adds the registration to mgr. Nothing happens when
// server serves no webhook (none in the project, or ENABLE_WEBHOOKS=false). certPath (the
// manager's --webhook-cert-path) must be empty then: make run's certificate is its own.
func SetupLocal(mgr ctrl.Manager, server webhook.Server, host, certPath string) error {
	if host == "" {
		return nil
	}
	if certPath != "" {
		return errors.New("--webhook-dev-host serves a certificate of its own: " +
			"give it or --webhook-cert-path, not both")
	}
	mux := server.WebhookMux()
	if mux == nil {
		return nil
	}
	defaultServer, ok := server.(*webhook.DefaultServer)
	if !ok {
		return fmt.Errorf("--webhook-dev-host needs controller-runtime's webhook server, not a %T", server)
	}
	l := &Local{host: host, port: defaultServer.Options.Port}
	served := func(path string) bool {
		_, pattern := mux.Handler(&http.Request{URL: &url.URL{Path: path}})
		return pattern == path
	}
	if err := l.setup(mgr, served); err != nil || l.ca == nil {
		return err
	}
	// The server reads its TLS options when it starts.
	defaultServer.Options.TLSOpts = append(defaultServer.Options.TLSOpts, func(c *tls.Config) {
		c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return l.cert, nil }
	})
	return mgr.Add(l)
}

// setup finds the address, reads the webhook configurations and makes the certificate;
// l.ca stays nil when there is nothing to serve.
func (l *Local) setup(mgr ctrl.Manager, served func(string) bool) error {
	l.mgr = mgr
	l.convert = served("/convert")
	scheme := runtime.NewScheme()
	utilruntime.Must(admissionregistrationv1.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(corev1.AddToScheme(scheme))
	var err error
	if l.client, err = client.New(mgr.GetConfig(), client.Options{Scheme: scheme}); err != nil {
		return err
	}

	host, port, err := l.address(context.Background())
	if err != nil {
		return err
	}
	l.baseURL = "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	l.instance = instanceID()
	f, err := os.Open(manifestsFile)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is missing: run the manager in the project's root after "+
			"`make manifests` (make run does both)", manifestsFile)
	} else if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if l.mutating, l.validating, err = l.configurations(f, served); err != nil {
		return fmt.Errorf("reading %s: %w", manifestsFile, err)
	}
	if l.mutating == nil && l.validating == nil && !l.convert {
		return nil
	}

	if l.ca, err = NewCA(projectName+"-make-run", localValidity); err != nil {
		return err
	}
	// localhost too: Start connects to the server on this machine before registering it.
	l.cert, err = l.ca.IssueTLS([]string{host, "localhost"}, localValidity)
	return err
}

// NeedLeaderElection is false: every manager serves its webhooks, leader or not.
func (l *Local) NeedLeaderElection() bool { return false }

// Start registers the webhooks once the webhook server serves make run's certificate, renews
// them while the manager runs and removes them when ctx is done.
func (l *Local) Start(ctx context.Context) error {
	if !l.waitServing(ctx) {
		return nil
	}
	if err := l.register(ctx); err != nil {
		l.unregister()
		return fmt.Errorf("registering the webhooks of make run in the cluster "+
			"(ENABLE_WEBHOOKS=false make run runs without them): %w", err)
	}
	localLog.Info("Serving the webhooks from this machine until the manager stops",
		"url", l.baseURL, "instance", l.instance, "convertedCRDs", l.converted)
	// Closing the terminal of make run hangs it up: remove the webhooks, then stop the manager.
	hangup := make(chan os.Signal, 1)
	signal.Notify(hangup, syscall.SIGHUP)
	defer signal.Stop(hangup)
	ticker := time.NewTicker(aliveEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			l.unregister()
			return nil
		case <-hangup:
			l.unregister()
			return errors.New("make run was hung up (SIGHUP): its webhooks are removed")
		case <-ticker.C:
			l.renew(ctx)
		}
	}
}

// address is where the API server reaches the webhook server: the host given (with the port
// given, if any), or the one DetectHost finds.
func (l *Local) address(ctx context.Context) (string, int, error) {
	host, port := l.host, l.port
	if h, p, err := net.SplitHostPort(l.host); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("--webhook-dev-host=%s: the port must be a number from 1 to 65535, "+
				"as in --webhook-dev-host=tunnel.example.com:9443", l.host)
		}
		host, port = h, n
	}
	if host == "" {
		return "", 0, fmt.Errorf("--webhook-dev-host=%s: give a host, as in --webhook-dev-host=127.0.0.1", l.host)
	}
	if host != "auto" {
		return host, port, nil
	}
	host, why, err := DetectHost(ctx, l.mgr.GetConfig(), l.client)
	if err != nil {
		return "", 0, err
	}
	localLog.Info("Found the address at which the API server reaches this machine", "host", host, "reason", why)
	return host, port, nil
}

// configurations turns the webhook configurations of `make manifests` (read from r) into make
// run's: the same webhooks, calling the webhook server by URL, failurePolicy Ignore. A webhook
// whose path the manager does not serve is left out.
func (l *Local) configurations(r io.Reader, served func(string) bool) (
	*admissionregistrationv1.MutatingWebhookConfiguration,
	*admissionregistrationv1.ValidatingWebhookConfiguration, error,
) {
	// keep points cc at the webhook server, if it serves the path cc names.
	keep := func(name string, cc *admissionregistrationv1.WebhookClientConfig) bool {
		path := "/"
		if cc.Service != nil && cc.Service.Path != nil {
			path = *cc.Service.Path
		} else if cc.URL != nil {
			if u, err := url.Parse(*cc.URL); err == nil && u.Path != "" {
				path = u.Path
			}
		}
		if !served(path) {
			localLog.Info("Leaving out a webhook the manager does not serve; is the file up to date?",
				"file", manifestsFile, "webhook", name, "path", path)
			return false
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: new(l.baseURL + path)}
		return true
	}
	var mutating []admissionregistrationv1.MutatingWebhook
	var validating []admissionregistrationv1.ValidatingWebhook
	decoder := yaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		var doc map[string]any
		if err := decoder.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, err
		}
		switch doc["kind"] {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(doc, &c); err != nil {
				return nil, nil, err
			}
			for _, w := range c.Webhooks {
				if keep(w.Name, &w.ClientConfig) {
					w.FailurePolicy = new(admissionregistrationv1.Ignore)
					mutating = append(mutating, w)
				}
			}
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(doc, &c); err != nil {
				return nil, nil, err
			}
			for _, w := range c.Webhooks {
				if keep(w.Name, &w.ClientConfig) {
					w.FailurePolicy = new(admissionregistrationv1.Ignore)
					validating = append(validating, w)
				}
			}
		}
	}
	var m *admissionregistrationv1.MutatingWebhookConfiguration
	var v *admissionregistrationv1.ValidatingWebhookConfiguration
	if len(mutating) > 0 {
		m = &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: l.objectMeta(), Webhooks: mutating}
	}
	if len(validating) > 0 {
		v = &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: l.objectMeta(), Webhooks: validating}
	}
	return m, v, nil
}

func (l *Local) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        projectName + "-make-run-" + l.instance,
		Labels:      map[string]string{"app.kubernetes.io/name": projectName, labelRun: l.instance},
		Annotations: map[string]string{annotationAlive: time.Now().UTC().Format(time.RFC3339)},
	}
}

// registered is what register creates.
func (l *Local) registered() []client.Object {
	var objects []client.Object
	if l.mutating != nil {
		objects = append(objects, l.mutating)
	}
	if l.validating != nil {
		objects = append(objects, l.validating)
	}
	return objects
}

// register deletes what killed runs left, then creates the configurations and points the
// conversion of the CRDs at this machine.
func (l *Local) register(ctx context.Context) error {
	if err := l.deleteLeftovers(ctx); err != nil {
		return err
	}
	if l.mutating != nil {
		for i := range l.mutating.Webhooks {
			l.mutating.Webhooks[i].ClientConfig.CABundle = l.ca.CertPEM
		}
	}
	if l.validating != nil {
		for i := range l.validating.Webhooks {
			l.validating.Webhooks[i].ClientConfig.CABundle = l.ca.CertPEM
		}
	}
	for _, o := range l.registered() {
		if err := l.client.Create(ctx, o); err != nil {
			return err
		}
	}
	if !l.convert {
		return nil
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := l.client.List(ctx, &crds); err != nil {
		return err
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		if !l.converts(crd) {
			continue
		}
		if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
			localLog.Info("Leaving a CRD without webhook conversion as it is (was it installed without its "+
				"config/crd/patches/webhook_in_*.yaml?)", "crd", crd.Name)
			continue
		}
		if err := l.pointConversion(ctx, crd.Name); err != nil {
			return err
		}
		l.converted = append(l.converted, crd.Name)
	}
	if len(l.converted) == 0 {
		localLog.Info("No CRD the manager converts is installed in the cluster: run make install")
	}
	return nil
}

// deleteLeftovers deletes the configurations of make run that this instance left, and those
// of any instance not renewed for staleAfter.
func (l *Local) deleteLeftovers(ctx context.Context) error {
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	selector := client.MatchingLabels{"app.kubernetes.io/name": projectName}
	var objects []client.Object
	if err := l.client.List(ctx, &mutating, selector, client.HasLabels{labelRun}); err != nil {
		return err
	}
	for i := range mutating.Items {
		objects = append(objects, &mutating.Items[i])
	}
	if err := l.client.List(ctx, &validating, selector, client.HasLabels{labelRun}); err != nil {
		return err
	}
	for i := range validating.Items {
		objects = append(objects, &validating.Items[i])
	}
	for _, o := range objects {
		if !leftOver(o, l.instance, time.Now()) {
			continue
		}
		if err := l.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			return err
		}
		localLog.Info("Deleted a webhook configuration that a killed make run left",
			"name", o.GetName(), "instance", o.GetLabels()[labelRun])
	}
	return nil
}

// leftOver says whether a configuration of make run was left by a run that no longer serves
// it: one of this instance (which is starting), or one not renewed for staleAfter.
func leftOver(o client.Object, instance string, now time.Time) bool {
	alive, err := time.Parse(time.RFC3339, o.GetAnnotations()[annotationAlive])
	return o.GetLabels()[labelRun] == instance || err != nil || now.Sub(alive) >= staleAfter
}

// converts says whether the manager's /convert converts the objects of crd.
func (l *Local) converts(crd *apiextensionsv1.CustomResourceDefinition) bool {
	gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
	if _, ok := l.mgr.GetConverterRegistry().GetConverter(gk); ok {
		return true
	}
	scheme := l.mgr.GetScheme()
	for _, v := range crd.Spec.Versions {
		obj, err := scheme.New(gk.WithVersion(v.Name))
		if err != nil {
			continue
		}
		ok, err := conversion.IsConvertible(scheme, obj)
		return err == nil && ok
	}
	return false
}

// pointConversion points the conversion webhook of the CRD name at this machine, keeping the
// client config it had (unless a killed run kept it already).
func (l *Local) pointConversion(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := l.client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return err
		}
		kept, ok := crd.Annotations[annotationConversion]
		if !ok {
			before, err := json.Marshal(crd.Spec.Conversion.Webhook.ClientConfig)
			if err != nil {
				return err
			}
			kept = string(before)
		}
		cc := &apiextensionsv1.WebhookClientConfig{URL: new(l.baseURL + "/convert"), CABundle: l.ca.CertPEM}
		return l.setClientConfig(ctx, &crd, cc, &kept)
	})
}

// restoreConversion puts back the client config the conversion webhook of the CRD name had,
// unless something else has pointed it elsewhere since (make install, or another make run,
// which puts it back when it stops).
func (l *Local) restoreConversion(ctx context.Context, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := l.client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return client.IgnoreNotFound(err)
		}
		kept, ok := crd.Annotations[annotationConversion]
		if cc := l.clientConfig(&crd); !ok || cc == nil || cc.URL == nil || *cc.URL != l.baseURL+"/convert" {
			return nil
		}
		var before apiextensionsv1.WebhookClientConfig
		if err := json.Unmarshal([]byte(kept), &before); err != nil {
			return err
		}
		return l.setClientConfig(ctx, &crd, &before, nil)
	})
}

func (l *Local) clientConfig(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.WebhookClientConfig {
	if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
		return c.Webhook.ClientConfig
	}
	return nil
}

// setClientConfig sets the client config of crd's conversion webhook to cc, and
// annotationConversion to kept (nil removes it). When a field manager applied the client
// config (server-side, as make install's kubectl does), the change is applied as that
// manager, so that its next apply replaces it: `make install` after a make run that was
// killed installs the CRD as it always does.
func (l *Local) setClientConfig(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition,
	cc *apiextensionsv1.WebhookClientConfig, kept *string) error {
	if owner := clientConfigApplier(crd); owner != "" {
		ac, err := apiextensionsv1ac.ExtractCustomResourceDefinition(crd, owner)
		if err != nil {
			return err
		}
		ac.Spec.Conversion.Webhook.ClientConfig = clientConfigApply(cc)
		delete(ac.Annotations, annotationConversion)
		if kept != nil {
			ac.WithAnnotations(map[string]string{annotationConversion: *kept})
		}
		return l.client.Apply(ctx, ac, client.FieldOwner(owner), client.ForceOwnership)
	}
	if crd.Spec.Conversion.Webhook == nil {
		crd.Spec.Conversion.Webhook = &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}}
	}
	crd.Spec.Conversion.Webhook.ClientConfig = cc
	delete(crd.Annotations, annotationConversion)
	if kept != nil {
		metav1.SetMetaDataAnnotation(&crd.ObjectMeta, annotationConversion, *kept)
	}
	return l.client.Update(ctx, crd)
}

// clientConfigApplier is the field manager that applied the client config of crd's conversion
// webhook, if one did.
func clientConfigApplier(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, m := range crd.ManagedFields {
		if m.Operation != metav1.ManagedFieldsOperationApply || m.Subresource != "" || m.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(m.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for _, key := range []string{"f:spec", "f:conversion", "f:webhook", "f:clientConfig"} {
			fields, _ = fields[key].(map[string]any)
		}
		if fields != nil {
			return m.Manager
		}
	}
	return ""
}

// clientConfigApply is cc as an apply configuration.
func clientConfigApply(cc *apiextensionsv1.WebhookClientConfig) *apiextensionsv1ac.WebhookClientConfigApplyConfiguration {
	out := apiextensionsv1ac.WebhookClientConfig()
	if cc.URL != nil {
		out.WithURL(*cc.URL)
	}
	if s := cc.Service; s != nil {
		service := apiextensionsv1ac.ServiceReference().WithNamespace(s.Namespace).WithName(s.Name)
		if s.Path != nil {
			service.WithPath(*s.Path)
		}
		if s.Port != nil {
			service.WithPort(*s.Port)
		}
		out.WithService(service)
	}
	if len(cc.CABundle) > 0 {
		out.WithCABundle(cc.CABundle...)
	}
	return out
}

// renew says that this run still serves its configurations.
func (l *Local) renew(ctx context.Context) {
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`,
		annotationAlive, time.Now().UTC().Format(time.RFC3339))
	for _, o := range l.registered() {
		if err := l.client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch)); err != nil {
			localLog.Error(err, "Failed to renew a webhook configuration of make run", "name", o.GetName())
		}
	}
}

// unregister deletes the configurations and puts the CRDs' conversion back.
func (l *Local) unregister() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	failed := false
	for _, o := range l.registered() {
		if err := l.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			localLog.Error(err, "Failed to delete a webhook configuration of make run", "name", o.GetName())
			failed = true
		}
	}
	for _, name := range l.converted {
		if err := l.restoreConversion(ctx, name); err != nil {
			localLog.Error(err, "Failed to put back the conversion of a CRD", "crd", name)
			failed = true
		}
	}
	if !failed {
		localLog.Info("Removed the webhooks of make run from the cluster")
	}
}

// waitServing waits until the webhook server serves make run's certificate on this machine;
// false when ctx ends first.
func (l *Local) waitServing(ctx context.Context) bool {
	dialer := &tls.Dialer{Config: &tls.Config{
		RootCAs:    l.ca.Pool(),
		ServerName: "localhost",
		MinVersion: tls.VersionTLS12,
	}}
	address := net.JoinHostPort("localhost", strconv.Itoa(l.port))
	for {
		conn, err := dialer.DialContext(ctx, "tcp", address)
		if err == nil {
			_ = conn.Close()
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// instanceID tells this run's configurations from those of other machines and checkouts.
func instanceID() string {
	host, _ := os.Hostname()
	dir, _ := os.Getwd()
	h := fnv.New32a()
	_, _ = io.WriteString(h, host+"\x00"+dir)
	return fmt.Sprintf("%08x", h.Sum32())
}
