/*
Copyright 2026 The Guestbook Authors.

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
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	ingressv1 "example.com/guestbook/api/v1"
)

// gatewayLog is the logger of the Gateway webhooks.
var gatewayLog = logf.Log.WithName("gateway-resource") //nolint:unused // used once defaulting or validation is added

// SetupGatewayWebhookWithManager registers the webhooks of Gateway with the webhook server of mgr.
func SetupGatewayWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &ingressv1.Gateway{}).
		Complete()
}
