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

// Package telemetry lets operators see what the manager does (telemetry.opbuilder.io/v1-alpha):
// an OpenTelemetry span for every reconcile with the Kubernetes API calls made under it, a span
// for every admission webhook call, the trace id on the reconcile's log lines and as an exemplar
// of the reconcile-duration histogram, and a log level that can be changed while the manager runs.
//
// Tracing is configured by the standard OpenTelemetry environment variables only. It is on when
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (OTLP over HTTP with
// protobuf, port 4318 by convention), unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
// Otherwise no exporter is made, nothing is wrapped, and every span is a no-op.
package telemetry

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	uzap "go.uber.org/zap"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

const (
	// LogLevelPath serves the manager's log level on the metrics server, behind the same
	// authentication and authorization as /metrics: GET returns {"level":"info"}, PUT with
	// {"level":"debug"} changes it (debug shows the V(1) lines).
	LogLevelPath = "/debug/loglevel"
	// OpenMetricsPath serves the metrics in the OpenMetrics format when the scraper asks for it
	// (Accept: application/openmetrics-text), the only format that carries exemplars.
	OpenMetricsPath = "/metrics/openmetrics"
	// instrumentation names the tracer of the spans this package makes.
	instrumentation = "example.com/lighthouse/internal/telemetry"
)

// tracer makes the reconcile spans; it follows the provider Setup installs.
var tracer = otel.Tracer(instrumentation)

// Enabled reports whether the environment asks for traces.
func Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if slices.Contains(strings.Split(os.Getenv("OTEL_TRACES_EXPORTER"), ","), "none") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// WrapConfig traces the manager's calls to the Kubernetes API: a client span for every request
// made inside another span (a reconcile, a webhook call), none for the informers' own lists and
// watches. It returns cfg, changed only when tracing is on.
func WrapConfig(cfg *rest.Config) *rest.Config {
	if !Enabled() {
		return cfg
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return otelhttp.NewTransport(rt,
			otelhttp.WithFilter(func(r *http.Request) bool {
				return trace.SpanContextFromContext(r.Context()).IsValid()
			}),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
				return "k8s.api " + r.Method
			}),
		)
	})
	return cfg
}

// Setup serves the log level and the OpenMetrics exposition on the metrics server and, when the
// environment asks for traces, installs the OTLP exporter; serviceName is the service.name of
// the spans unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise. The spans still
// batched are sent when the manager stops.
func Setup(mgr manager.Manager, serviceName string, level uzap.AtomicLevel) error {
	if err := mgr.AddMetricsServerExtraHandler(LogLevelPath, level); err != nil {
		return err
	}
	openMetrics := promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.HTTPErrorOnError,
		EnableOpenMetrics: true,
	})
	if err := mgr.AddMetricsServerExtraHandler(OpenMetricsPath, openMetrics); err != nil {
		return err
	}
	if !Enabled() {
		return nil
	}
	ctx := context.Background()
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return err
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(
		propagation.TraceContext{}, propagation.Baggage{}))
	return mgr.Add(flusher{provider: provider})
}

// flusher sends the batched spans when the manager stops; it runs on every replica.
type flusher struct {
	provider *sdktrace.TracerProvider
}

func (f flusher) Start(ctx context.Context) error {
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return f.provider.Shutdown(shutdown)
}

func (flusher) NeedLeaderElection() bool {
	return false
}
