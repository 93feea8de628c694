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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The outcomes of a reconcile, as the span's reconcile.result and the histogram's result label.
const (
	ResultSuccess = "success"
	ResultRequeue = "requeue"
	ResultError   = "error"
)

// reconcileDuration times every reconcile; a traced one carries its trace id as an exemplar.
var reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "reconcile_duration_seconds",
	Help:    "How long each reconcile took, by controller and result (success, requeue, error).",
	Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
}, []string{"controller", "result"})

func init() {
	metrics.Registry.MustRegister(reconcileDuration)
}

// Reconciler runs r inside a span "reconcile <controller>" that names the object
// (k8s.namespace.name, k8s.object.name) and the outcome (reconcile.result, and the error as the
// span's status). The logger in the context carries the trace id (trace_id), and the reconcile's
// duration goes to reconcile_duration_seconds with the trace id as its exemplar.
func Reconciler(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		attrs := []attribute.KeyValue{
			attribute.String("controller", controller),
			attribute.String("k8s.object.name", req.Name),
		}
		if req.Namespace != "" {
			attrs = append(attrs, attribute.String("k8s.namespace.name", req.Namespace))
		}
		ctx, span := tracer.Start(ctx, "reconcile "+controller, trace.WithAttributes(attrs...))
		defer span.End()
		sc := span.SpanContext()
		if sc.IsValid() {
			ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("trace_id", sc.TraceID().String()))
		}

		start := time.Now()
		result, err := r.Reconcile(ctx, req)
		outcome := Outcome(result, err)
		span.SetAttributes(attribute.String("reconcile.result", outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		observe(controller, outcome, time.Since(start), sc)
		return result, err
	})
}

// Outcome names what a reconcile returned: error, requeue (a Result asking for another run) or
// success.
func Outcome(result reconcile.Result, err error) string {
	switch {
	case err != nil:
		return ResultError
	case !result.IsZero():
		return ResultRequeue
	default:
		return ResultSuccess
	}
}

func observe(controller, outcome string, took time.Duration, sc trace.SpanContext) {
	o := reconcileDuration.WithLabelValues(controller, outcome)
	if eo, ok := o.(prometheus.ExemplarObserver); ok && sc.IsSampled() {
		eo.ObserveWithExemplar(took.Seconds(), prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	o.Observe(took.Seconds())
}
