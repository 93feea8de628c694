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
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// trusted says whether the serving certificate of data verifies against bundle for the Service.
func trusted(t *testing.T, data map[string][]byte, bundle []byte, at time.Time) bool {
	t.Helper()
	pair, err := tls.X509KeyPair(data[keyTLSCrt], data[keyTLSKey])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatal("the bundle holds no certificate")
	}
	_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "webhook-service.system.svc", CurrentTime: at})
	return err == nil
}

func TestRotationNeverServesWhatTheInjectedBundleDoesNotTrust(t *testing.T) {
	c := &Cluster{namespace: "system", opts: ClusterOptions{Secret: "webhook-server-cert",
		Service: "webhook-service", Validity: 90 * 24 * time.Hour}}
	now := time.Now()
	secret := &corev1.Secret{}

	// A new install: an authority and a certificate under it at once.
	if changed, err := c.advance(secret, false, now); err != nil || !changed {
		t.Fatalf("a new Secret: changed %v, %v", changed, err)
	}
	if !trusted(t, secret.Data, secret.Data[keyBundle], now) {
		t.Fatal("the first certificate is not trusted by its bundle")
	}
	if changed, err := c.advance(secret, true, now); err != nil || changed {
		t.Fatalf("a Secret in order changed (%v, %v)", changed, err)
	}

	// The Secret is deleted: rebuilt from what was served, the new authority joins the bundle
	// and the certificate stays.
	injected := secret.Data[keyBundle]
	served := secret.Data[keyTLSCrt]
	rebuilt := &corev1.Secret{Data: map[string][]byte{
		keyBundle: secret.Data[keyBundle], keyTLSCrt: served, keyTLSKey: secret.Data[keyTLSKey]}}
	if _, err := c.advance(rebuilt, false, now); err != nil {
		t.Fatal(err)
	}
	if step, _ := rotationStep(rebuilt.Annotations[annotationRotation]); step != stepExtended {
		t.Fatalf("after a deletion the rotation is at %q", step)
	}
	if string(rebuilt.Data[keyTLSCrt]) != string(served) || !trusted(t, rebuilt.Data, injected, now) {
		t.Fatal("the certificate changed before the new bundle was injected")
	}
	extended := rebuilt.Data[keyBundle]

	// Not injected, or injected within the grace: nothing moves.
	if changed, _ := c.advance(rebuilt, false, now.Add(time.Hour)); changed {
		t.Fatal("the rotation moved before the bundle was injected")
	}
	if changed, _ := c.advance(rebuilt, true, now.Add(rotationGrace/2)); changed {
		t.Fatal("the rotation moved within its grace")
	}

	// Injected and the grace over: the certificate moves under the new authority, which the
	// extended bundle trusts; then the old authority leaves the bundle.
	later := now.Add(rotationGrace)
	if changed, _ := c.advance(rebuilt, true, later); !changed {
		t.Fatal("the certificate did not move after the grace")
	}
	if !trusted(t, rebuilt.Data, extended, later) || trusted(t, rebuilt.Data, injected, later) {
		t.Fatal("the moved certificate is not under the new authority alone")
	}
	later = later.Add(rotationGrace)
	if changed, _ := c.advance(rebuilt, true, later); !changed {
		t.Fatal("the old authority stayed in the bundle")
	}
	if _, ok := rebuilt.Annotations[annotationRotation]; ok || len(parseBundle(rebuilt.Data[keyBundle], later)) != 1 {
		t.Fatal("the rotation did not end with one authority")
	}
	if !trusted(t, rebuilt.Data, rebuilt.Data[keyBundle], later) {
		t.Fatal("the final certificate is not trusted by the final bundle")
	}

	// A certificate with a third of its validity left is renewed under the same authority.
	bundle := rebuilt.Data[keyBundle]
	renewal := later.Add(c.opts.Validity * 2 / 3)
	if changed, _ := c.advance(rebuilt, true, renewal); !changed {
		t.Fatal("the certificate was not renewed")
	}
	if string(rebuilt.Data[keyBundle]) != string(bundle) || !trusted(t, rebuilt.Data, bundle, renewal) {
		t.Fatal("a renewal changed the bundle")
	}
}
