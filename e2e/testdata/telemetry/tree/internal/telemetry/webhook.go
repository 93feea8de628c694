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

package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WebhookServer traces the admission and conversion webhooks registered on s: a server span
// "webhook <path>" for every call, the parent of the API calls the webhook makes (and the child
// of the API server's span when it sends a traceparent). Without tracing it returns s itself.
func WebhookServer(s webhook.Server) webhook.Server {
	if !Enabled() {
		return s
	}
	return tracedServer{Server: s}
}

type tracedServer struct {
	webhook.Server
}

func (s tracedServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, otelhttp.NewHandler(hook, "webhook "+path,
		otelhttp.WithSpanNameFormatter(func(operation string, _ *http.Request) string {
			return operation
		}),
		otelhttp.WithSpanOptions(trace.WithAttributes(attribute.String("webhook.path", path))),
	))
}
