module example.com/lighthouse

go 1.26.0

require sigs.k8s.io/controller-runtime v0.25.0

// OpenTelemetry (telemetry.opbuilder.io/v1-alpha): internal/telemetry
require (
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.72.0
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
)
