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
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recordSpans sends the spans of this test to an in-memory recorder.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(provider)
	t.Cleanup(func() {
		otel.SetTracerProvider(previous)
		_ = provider.Shutdown(context.Background())
	})
	return recorder
}

func attributes(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func TestReconcilerSpanLogAndExemplar(t *testing.T) {
	recorder := recordSpans(t)
	var logged strings.Builder
	logger := funcr.New(func(prefix, args string) { logged.WriteString(args + "\n") }, funcr.Options{})
	failure := errors.New("the sea is rough")
	calls := 0
	inner := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		calls++
		logf.FromContext(ctx).Info("Reconciling")
		switch calls {
		case 1:
			return reconcile.Result{}, nil
		case 2:
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		default:
			return reconcile.Result{}, failure
		}
	})
	r := Reconciler("frigate", inner)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "harbor", Name: "alpha"}}
	ctx := logf.IntoContext(context.Background(), logger)
	for range 3 {
		_, _ = r.Reconcile(ctx, req)
	}

	spans := recorder.Ended()
	if len(spans) != 3 {
		t.Fatalf("want 3 spans, got %d", len(spans))
	}
	for i, want := range []string{ResultSuccess, ResultRequeue, ResultError} {
		s := spans[i]
		if s.Name() != "reconcile frigate" {
			t.Errorf("span %d: name %q, want %q", i, s.Name(), "reconcile frigate")
		}
		a := attributes(s.Attributes())
		for k, v := range map[string]string{
			"controller": "frigate", "k8s.namespace.name": "harbor", "k8s.object.name": "alpha", "reconcile.result": want,
		} {
			if a[k] != v {
				t.Errorf("span %d: attribute %s = %q, want %q", i, k, a[k], v)
			}
		}
		if !strings.Contains(logged.String(), `"trace_id"="`+s.SpanContext().TraceID().String()+`"`) {
			t.Errorf("span %d: its trace id is on no log line:\n%s", i, logged.String())
		}
	}
	if spans[2].Status().Code != codes.Error || spans[2].Status().Description != failure.Error() {
		t.Errorf("the failed reconcile's span has status %+v, want the error", spans[2].Status())
	}

	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exemplars := 0
	for _, f := range families {
		if f.GetName() != "reconcile_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				for _, l := range b.GetExemplar().GetLabel() {
					if l.GetName() == "trace_id" && l.GetValue() == spans[0].SpanContext().TraceID().String() {
						exemplars++
					}
				}
			}
		}
	}
	if exemplars != 1 {
		t.Errorf("want the first reconcile's trace id as one exemplar of reconcile_duration_seconds, found %d", exemplars)
	}
}

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		result reconcile.Result
		err    error
		want   string
	}{
		{reconcile.Result{}, nil, ResultSuccess},
		{reconcile.Result{RequeueAfter: time.Second}, nil, ResultRequeue},
		{reconcile.Result{RequeueAfter: time.Second}, errors.New("boom"), ResultError},
	} {
		if got := Outcome(c.result, c.err); got != c.want {
			t.Errorf("Outcome(%+v, %v) = %s, want %s", c.result, c.err, got, c.want)
		}
	}
}

func TestLogLevelChangesAtRunTime(t *testing.T) {
	opts := zap.Options{Development: true}
	level := LogLevel(&opts)
	if level.Level() != zapcore.DebugLevel {
		t.Fatalf("development logging starts at %s, want debug", level.Level())
	}
	put := httptest.NewRequest(http.MethodPut, LogLevelPath, strings.NewReader(`{"level":"error"}`))
	put.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	level.ServeHTTP(w, put)
	if w.Code != http.StatusOK {
		t.Fatalf("PUT %s: status %d: %s", LogLevelPath, w.Code, w.Body.String())
	}
	if opts.Level.Enabled(zapcore.InfoLevel) || !opts.Level.Enabled(zapcore.ErrorLevel) {
		t.Errorf("after PUT error the logger still logs info lines, or no longer errors")
	}
	w = httptest.NewRecorder()
	level.ServeHTTP(w, httptest.NewRequest(http.MethodGet, LogLevelPath, nil))
	if !strings.Contains(w.Body.String(), `"level":"error"`) {
		t.Errorf("GET %s returned %q, want the level error", LogLevelPath, w.Body.String())
	}

	numeric := zap.Options{Level: zapcore.Level(-2)}
	if got := LogLevel(&numeric).Level(); got != zapcore.Level(-2) {
		t.Errorf("--zap-log-level=2 gives the level %d, want -2", got)
	}
}

func TestTracingFollowsTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
			"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
			t.Setenv(k, c.env[k])
		}
		if got := Enabled(); got != c.want {
			t.Errorf("Enabled() with %v = %v, want %v", c.env, got, c.want)
		}
	}
}
