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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// The manager's own certificates in the cluster (certs.opbuilder.io/v1-alpha), in place of
// cert-manager: every replica runs Cluster, which keeps one certificate authority and one
// serving certificate in a Secret of the manager's namespace, serves that certificate, and
// writes the authority into the caBundle of every webhook configuration and CRD conversion
// that calls the manager's webhook Service.
//
// Replicas agree through the Secret alone: a replica creates it when it is missing and changes
// it only with the resourceVersion it read, so of two replicas racing one write wins and the
// other reads the winner's certificate on its next round. No leader election is needed, and a
// replica that is not the leader serves the same certificate.
//
// Rotation drops no admission request: the serving certificate is renewed under the same
// authority (the caBundle does not change), and a new authority (the old one near expiry, or
// the Secret deleted) is added to the caBundle next to the old one first; the serving
// certificate moves to the new authority only once the caBundle holding both has been written
// everywhere and rotationGrace has passed, and the old authority leaves the caBundle
// rotationGrace after that.

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;update

const (
	// Keys of the Secret: the caBundle (one or two authorities), the authority that signs and
	// its key, and the serving certificate and key (the keys of a kubernetes.io/tls Secret).
	keyBundle    = "ca.crt"
	keySignerCrt = "signer.crt"
	keySignerKey = "signer.key"
	keyTLSCrt    = corev1.TLSCertKey
	keyTLSKey    = corev1.TLSPrivateKeyKey
	// annotationRotation records a rotation of the authority under way: its step and since
	// when ("bundle-extended 2026-01-02T03:04:05Z", then "serving-moved ...").
	annotationRotation = "opbuilder.io/webhook-ca-rotation"
	stepExtended       = "bundle-extended"
	stepMoved          = "serving-moved"

	// caValidity is how long an authority lasts; a new one is made when a fifth of it is left.
	caValidity = 10 * 365 * 24 * time.Hour
	// rotationGrace is how long each step of an authority's rotation waits for every API
	// server and every replica to have seen the step before.
	rotationGrace = time.Minute
	// servingValidity is how long a serving certificate lasts unless ClusterOptions says.
	servingValidity = 90 * 24 * time.Hour
	// checkEvery is how often each replica reads the Secret and checks the caBundles.
	checkEvery = 10 * time.Second
)

var clusterLog = ctrl.Log.WithName("webhook-certs")

// ClusterOptions says where the certificate lives and whom it serves.
type ClusterOptions struct {
	// Secret is the name of the Secret, in the manager's namespace.
	Secret string
	// Service is the name of the webhook Service, in the manager's namespace: the certificate
	// names it, and the caBundle goes to the webhooks and CRD conversions that call it.
	Service string
	// Validity is how long a serving certificate lasts (0: 90 days); it is renewed when a third
	// is left.
	Validity time.Duration
}

// Cluster keeps the webhook server's certificate; see the comment at the top of this file.
type Cluster struct {
	opts      ClusterOptions
	namespace string
	client    client.Client

	mu sync.RWMutex
	// serving is the certificate the webhook server presents, from the Secret last read.
	serving *tls.Certificate
	// last is the Secret's data last read: what this replica rebuilds the Secret from when it
	// is deleted, so that the certificate it serves stays trusted through the rotation.
	last map[string][]byte
	// injected is the bundle every caBundle held at the last check (nil: some did not).
	injected []byte
	// ready: the certificate was served and its bundle checked everywhere once; a caBundle
	// that fails to be written later does not take the pod out of its Service.
	ready bool
}

// SetupCluster has the manager make, store, serve and rotate its own webhook certificate when
// opts.Secret (the manager's --webhook-cert-secret) is not empty. Call it once every webhook is
// set up. certPath (--webhook-cert-path) must be empty then: the certificate comes from the
// Secret. The pod turns Ready only once it serves the Secret's certificate and the caBundles
// hold its authority.
func SetupCluster(mgr ctrl.Manager, server webhook.Server, opts ClusterOptions, certPath string) error {
	if opts.Secret == "" {
		return nil
	}
	if certPath != "" {
		return errors.New("--webhook-cert-secret makes a certificate of its own: " +
			"give it or --webhook-cert-path, not both")
	}
	if opts.Service == "" {
		return errors.New("--webhook-cert-secret needs --webhook-service, the name of the webhook Service")
	}
	if opts.Validity == 0 {
		opts.Validity = servingValidity
	}
	if opts.Validity < 3*checkEvery {
		return fmt.Errorf("a serving certificate valid for %s would be renewed before every replica "+
			"serves it: give at least %s", opts.Validity, 3*checkEvery)
	}
	defaultServer, ok := server.(*webhook.DefaultServer)
	if !ok {
		return fmt.Errorf("--webhook-cert-secret needs controller-runtime's webhook server, not a %T", server)
	}
	namespace, err := ownNamespace()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(admissionregistrationv1.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(corev1.AddToScheme(scheme))
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	cl := &Cluster{opts: opts, namespace: namespace, client: c}
	// The server reads its TLS options when it starts.
	defaultServer.Options.TLSOpts = append(defaultServer.Options.TLSOpts, func(t *tls.Config) {
		t.GetCertificate = cl.getCertificate
	})
	if err := mgr.AddReadyzCheck("webhook-certs", cl.readyz); err != nil {
		return err
	}
	return mgr.Add(cl)
}

// ownNamespace is the namespace the manager runs in: POD_NAMESPACE, else its service account's.
func ownNamespace() (string, error) {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns, nil
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("--webhook-cert-secret keeps the certificate in the manager's namespace, "+
			"which is unknown outside a pod: set POD_NAMESPACE (%w)", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// NeedLeaderElection is false: every replica serves the webhooks, leader or not.
func (c *Cluster) NeedLeaderElection() bool { return false }

// Start keeps the certificate until ctx is done.
func (c *Cluster) Start(ctx context.Context) error {
	clusterLog.Info("Keeping the webhook certificate in a Secret",
		"secret", c.namespace+"/"+c.opts.Secret, "service", c.opts.Service)
	ticker := time.NewTicker(checkEvery)
	defer ticker.Stop()
	for {
		// A write that lost a race is read back at once.
		for range 3 {
			retry, err := c.round(ctx)
			if err != nil {
				clusterLog.Error(err, "Keeping the webhook certificate; trying again shortly")
			}
			if !retry {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

func (c *Cluster) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.serving == nil {
		return nil, errors.New("the webhook certificate is not read from its Secret yet")
	}
	return c.serving, nil
}

func (c *Cluster) readyz(*http.Request) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.serving == nil:
		return errors.New("no webhook certificate yet")
	case !c.ready:
		return errors.New("the caBundles do not hold the webhook certificate's authority yet")
	}
	return nil
}

// round reads the Secret, advances it (creating it when missing), serves its certificate and
// writes its bundle into the caBundles. retry: a write lost a race, read again.
func (c *Cluster) round(ctx context.Context) (retry bool, err error) {
	key := types.NamespacedName{Namespace: c.namespace, Name: c.opts.Secret}
	secret := &corev1.Secret{}
	err = c.client.Get(ctx, key, secret)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return false, fmt.Errorf("reading Secret %s: %w", key, err)
	}
	c.mu.RLock()
	injected, last := c.injected, c.last
	c.mu.RUnlock()
	if missing {
		// Rebuilt from what this replica serves, so that it stays trusted while the new
		// authority is rolled out.
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.namespace, Name: c.opts.Secret},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{},
		}
		for k, v := range last {
			if k != keySignerCrt && k != keySignerKey {
				secret.Data[k] = v
			}
		}
	}
	changed, err := c.advance(secret, !missing && bytes.Equal(injected, secret.Data[keyBundle]), time.Now())
	if err != nil {
		return false, err
	}
	switch {
	case missing:
		err = c.client.Create(ctx, secret)
	case changed:
		err = c.client.Update(ctx, secret)
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		return true, nil
	} else if err != nil {
		return false, fmt.Errorf("writing Secret %s: %w", key, err)
	}
	if missing || changed {
		clusterLog.Info("Wrote the webhook certificate's Secret",
			"secret", key.String(), "rotation", secret.Annotations[annotationRotation])
	}

	serving, err := tls.X509KeyPair(secret.Data[keyTLSCrt], secret.Data[keyTLSKey])
	if err != nil {
		return false, fmt.Errorf("the certificate in Secret %s: %w", key, err)
	}
	injectErr := c.inject(ctx, secret.Data[keyBundle])
	c.mu.Lock()
	c.serving, c.last, c.injected = &serving, secret.Data, nil
	if injectErr == nil {
		c.injected, c.ready = secret.Data[keyBundle], true
	}
	c.mu.Unlock()
	return false, injectErr
}

// advance brings the Secret's data to what it must hold at now: an authority that is not near
// its expiry, a serving certificate of the bundle that is not near its expiry, and the next step
// of a rotation under way once injected (every caBundle holds the Secret's bundle, checked by
// this replica) and its grace is over.
// It reports whether anything changed.
func (c *Cluster) advance(secret *corev1.Secret, injected bool, now time.Time) (bool, error) {
	data := secret.Data
	if data == nil {
		data = map[string][]byte{}
		secret.Data = data
	}
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	hosts := []string{
		c.opts.Service + "." + c.namespace + ".svc",
		c.opts.Service + "." + c.namespace + ".svc.cluster.local",
	}
	bundle := parseBundle(data[keyBundle], now)
	signer, signerErr := decodeCA(data[keySignerCrt], data[keySignerKey])
	issue := func() error {
		certPEM, keyPEM, err := signer.Issue(hosts, c.opts.Validity)
		data[keyTLSCrt], data[keyTLSKey] = certPEM, keyPEM
		return err
	}
	step, since := rotationStep(secret.Annotations[annotationRotation])

	if signerErr != nil || now.After(signer.cert.NotAfter.Add(-caValidity/5)) {
		var err error
		if signer, err = NewCA(c.opts.Secret, caValidity); err != nil {
			return false, err
		}
		data[keySignerCrt], data[keySignerKey] = encodeCA(signer)
		// The serving certificate stays while some API server may not trust the new authority.
		bundle = append(bundle, signer.cert)
		if servesUnder(data, bundle, hosts, now, 0) && len(bundle) > 1 {
			secret.Annotations[annotationRotation] = stepExtended + " " + now.UTC().Format(time.RFC3339)
		} else {
			// Nothing served yet (a new install): the new authority serves at once.
			bundle = []*x509.Certificate{signer.cert}
			delete(secret.Annotations, annotationRotation)
			if err := issue(); err != nil {
				return false, err
			}
		}
		data[keyBundle] = encodeBundle(bundle)
		return true, nil
	}

	changed := false
	graceOver := injected && now.Sub(since) >= rotationGrace
	switch {
	case step == stepExtended && graceOver:
		// Every API server trusts the new authority: serve under it.
		if err := issue(); err != nil {
			return false, err
		}
		secret.Annotations[annotationRotation] = stepMoved + " " + now.UTC().Format(time.RFC3339)
		changed = true
	case step == stepMoved && graceOver:
		// Every replica serves under the new authority: the old one goes.
		bundle = []*x509.Certificate{signer.cert}
		delete(secret.Annotations, annotationRotation)
		changed = true
	case step == "" && !servesUnder(data, []*x509.Certificate{signer.cert}, hosts, now, c.opts.Validity/3):
		// A serving certificate near its expiry (or missing) is renewed under the same
		// authority: the caBundle does not change.
		if err := issue(); err != nil {
			return false, err
		}
		changed = true
	}
	if !slices.ContainsFunc(bundle, signer.cert.Equal) {
		bundle = append(bundle, signer.cert)
	}
	if encoded := encodeBundle(bundle); !bytes.Equal(encoded, data[keyBundle]) {
		data[keyBundle] = encoded
		changed = true
	}
	return changed, nil
}

// rotationStep reads annotationRotation: the step and since when.
func rotationStep(value string) (string, time.Time) {
	step, at, ok := strings.Cut(value, " ")
	if !ok {
		return "", time.Time{}
	}
	since, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return "", time.Time{}
	}
	return step, since
}

// servesUnder says whether the Secret's serving certificate is signed by one of cas, names
// every host, and has more than renewBefore left at now.
func servesUnder(data map[string][]byte, cas []*x509.Certificate, hosts []string, now time.Time,
	renewBefore time.Duration) bool {
	pair, err := tls.X509KeyPair(data[keyTLSCrt], data[keyTLSKey])
	if err != nil || pair.Leaf == nil {
		return false
	}
	if now.After(pair.Leaf.NotAfter.Add(-renewBefore)) {
		return false
	}
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca)
	}
	for _, h := range hosts {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool, CurrentTime: now}); err != nil {
			return false
		}
	}
	return true
}

// inject writes bundle into the caBundle of every webhook and CRD conversion that calls the
// Service, and says whether all of them hold it.
func (c *Cluster) inject(ctx context.Context, bundle []byte) error {
	ours := func(s *admissionregistrationv1.ServiceReference) bool {
		return s != nil && s.Name == c.opts.Service && s.Namespace == c.namespace
	}
	var errs []error
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	if err := c.client.List(ctx, &mutating); err != nil {
		return err
	}
	for i := range mutating.Items {
		o, stale := &mutating.Items[i], false
		for j := range o.Webhooks {
			if cc := &o.Webhooks[j].ClientConfig; ours(cc.Service) && !bytes.Equal(cc.CABundle, bundle) {
				cc.CABundle, stale = bundle, true
			}
		}
		errs = append(errs, c.update(ctx, o, stale))
	}
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := c.client.List(ctx, &validating); err != nil {
		return err
	}
	for i := range validating.Items {
		o, stale := &validating.Items[i], false
		for j := range o.Webhooks {
			if cc := &o.Webhooks[j].ClientConfig; ours(cc.Service) && !bytes.Equal(cc.CABundle, bundle) {
				cc.CABundle, stale = bundle, true
			}
		}
		errs = append(errs, c.update(ctx, o, stale))
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := c.client.List(ctx, &crds); err != nil {
		return err
	}
	for i := range crds.Items {
		o := &crds.Items[i]
		conv := o.Spec.Conversion
		if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			continue
		}
		cc := conv.Webhook.ClientConfig
		s := cc.Service
		stale := s != nil && s.Name == c.opts.Service && s.Namespace == c.namespace &&
			!bytes.Equal(cc.CABundle, bundle)
		if stale {
			cc.CABundle = bundle
		}
		errs = append(errs, c.update(ctx, o, stale))
	}
	return errors.Join(errs...)
}

// update writes o when stale; a conflict is left to the next round.
func (c *Cluster) update(ctx context.Context, o client.Object, stale bool) error {
	if !stale {
		return nil
	}
	if err := c.client.Update(ctx, o); err != nil {
		return fmt.Errorf("writing the caBundle of %s: %w", o.GetName(), err)
	}
	clusterLog.Info("Wrote the caBundle", "object", o.GetName())
	return nil
}

// encodeCA is the authority's certificate and key, PEM-encoded, as the Secret holds them.
func encodeCA(ca *CA) (certPEM, keyPEM []byte) {
	keyDER, err := x509.MarshalECPrivateKey(ca.key)
	utilruntime.Must(err)
	return ca.CertPEM, encodePEM("EC PRIVATE KEY", keyDER)
}

// decodeCA reads an authority back from the Secret.
func decodeCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("no certificate authority")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("the authority's key does not match its certificate")
	}
	return &CA{cert: cert, key: key, CertPEM: certPEM}, nil
}

// parseBundle is the authorities of a caBundle that are not expired at now.
func parseBundle(b []byte, now time.Time) []*x509.Certificate {
	var cas []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return cas
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil && cert.IsCA && now.Before(cert.NotAfter) {
			cas = append(cas, cert)
		}
	}
}

func encodeBundle(cas []*x509.Certificate) []byte {
	var out bytes.Buffer
	for _, ca := range cas {
		out.Write(encodePEM("CERTIFICATE", ca.Raw))
	}
	return out.Bytes()
}
