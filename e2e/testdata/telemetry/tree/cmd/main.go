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

package main

import (
	"crypto/tls"
	"flag"
	"os"
	"path/filepath"
	"slices"

	// Registers the client-go credential plugins (exec, OIDC, cloud providers)
	// so that kubeconfig files which rely on them work out of the box.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	seav1 "example.com/lighthouse/api/v1"
	"example.com/lighthouse/internal/controller"
	"example.com/lighthouse/internal/telemetry"
	webhookv1 "example.com/lighthouse/internal/webhook/v1"
	"example.com/lighthouse/internal/webhookcerts"
	// +kubebuilder:scaffold:imports
)

var (
	// scheme knows every Go type the manager reads or writes.
	scheme = runtime.NewScheme()
	// setupLog reports what happens while the manager is being assembled.
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(seav1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// main wires the controllers and webhooks of this project into a single
// controller-runtime manager and runs it until the process is signalled.
func main() {
	var (
		metricsAddr          string
		probeAddr            string
		enableLeaderElection bool
		secureMetrics        bool
		enableHTTP2          bool
		webhookCertPath      string
		webhookCertName      string
		webhookCertKey       string
		webhookPort          int
		webhookDevHost       string
		metricsCertPath      string
		metricsCertName      string
		metricsCertKey       string
		tlsOpts              []func(*tls.Config)
	)

	flag.StringVar(&metricsAddr, "metrics-bind-address", "0",
		"Address of the metrics endpoint, e.g. :8443 (HTTPS) or :8080 (HTTP). "+
			"\"0\" turns the endpoint off.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081",
		"Address serving the /healthz and /readyz probes.")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Take a leader-election lease so that only one replica reconciles at a time.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"Serve metrics over HTTPS behind Kubernetes authentication and authorization. "+
			"Set to false for plain HTTP.")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "",
		"Directory holding the webhook serving certificate. Empty: the webhook server uses its default location.")
	flag.StringVar(&webhookCertName, "webhook-cert-name", "tls.crt",
		"File name of the webhook certificate inside --webhook-cert-path.")
	flag.StringVar(&webhookCertKey, "webhook-cert-key", "tls.key",
		"File name of the webhook private key inside --webhook-cert-path.")
	flag.IntVar(&webhookPort, "webhook-port", webhook.DefaultPort,
		"Port the webhook server listens on; -1 turns the webhook server off.")
	flag.StringVar(&webhookDevHost, "webhook-dev-host", "",
		"Serve the webhooks from this machine (make run): the address at which the API server reaches it "+
			"(host or host:port), or \"auto\" to find it. The manager makes a certificate for it and points "+
			"webhook configurations of its own and the CRDs' conversion at itself until it stops.")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"Directory holding the metrics serving certificate. Empty: a self-signed certificate is generated.")
	flag.StringVar(&metricsCertName, "metrics-cert-name", "tls.crt",
		"File name of the metrics certificate inside --metrics-cert-path.")
	flag.StringVar(&metricsCertKey, "metrics-cert-key", "tls.key",
		"File name of the metrics private key inside --metrics-cert-path.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"Allow HTTP/2 on the metrics and webhook servers. Off by default, which keeps the "+
			"servers out of reach of HTTP/2 rapid-reset denial-of-service attacks (CVE-2023-44487).")
	opts := zap.Options{
		Development: true,
	}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()

	// The log level can change while the manager runs: see LogLevelPath in internal/telemetry.
	logLevel := telemetry.LogLevel(&opts)
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	// HTTP/2 stays off unless asked for: the servers then only offer HTTP/1.1.
	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) {
			setupLog.Info("HTTP/2 is disabled; serving HTTP/1.1 only")
			c.NextProtos = []string{"http/1.1"}
		})
	}

	// Certificates mounted from a Secret are reloaded from disk whenever they
	// change, so a rotated certificate is picked up without a restart.
	var webhookCertWatcher, metricsCertWatcher *certwatcher.CertWatcher

	webhookTLSOpts := slices.Clone(tlsOpts)
	if webhookCertPath != "" {
		setupLog.Info("Using the webhook certificate from disk",
			"path", webhookCertPath, "cert", webhookCertName, "key", webhookCertKey)

		var err error
		webhookCertWatcher, err = certwatcher.New(
			filepath.Join(webhookCertPath, webhookCertName),
			filepath.Join(webhookCertPath, webhookCertKey),
		)
		if err != nil {
			setupLog.Error(err, "Failed to load the webhook certificate")
			os.Exit(1)
		}

		webhookTLSOpts = append(webhookTLSOpts, func(c *tls.Config) {
			c.GetCertificate = webhookCertWatcher.GetCertificate
		})
	}

	webhookServer := webhook.NewServer(webhook.Options{
		Port:    webhookPort,
		TLSOpts: webhookTLSOpts,
	})

	// The metrics endpoint. When secured, every request must carry a token that
	// the API server accepts (TokenReview) and that is allowed to GET /metrics
	// (SubjectAccessReview); config/rbac grants the manager both checks and
	// offers the metrics-reader ClusterRole for scrapers.
	metricsServerOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       slices.Clone(tlsOpts),
	}
	if secureMetrics {
		metricsServerOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	// Without --metrics-cert-path the metrics server signs its own certificate,
	// which suits development but not production scrapers that verify TLS.
	// TODO(user): for production, mount a certificate from cert-manager and pass
	// --metrics-cert-path (see cert_metrics_manager_patch.yaml in config/default).
	if metricsCertPath != "" {
		setupLog.Info("Using the metrics certificate from disk",
			"path", metricsCertPath, "cert", metricsCertName, "key", metricsCertKey)

		var err error
		metricsCertWatcher, err = certwatcher.New(
			filepath.Join(metricsCertPath, metricsCertName),
			filepath.Join(metricsCertPath, metricsCertKey),
		)
		if err != nil {
			setupLog.Error(err, "Failed to load the metrics certificate")
			os.Exit(1)
		}

		metricsServerOptions.TLSOpts = append(metricsServerOptions.TLSOpts, func(c *tls.Config) {
			c.GetCertificate = metricsCertWatcher.GetCertificate
		})
	}

	mgr, err := ctrl.NewManager(telemetry.WrapConfig(ctrl.GetConfigOrDie()), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsServerOptions,
		WebhookServer:          telemetry.WebhookServer(webhookServer),
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "6ad7192b.example.com",
		// TODO(user): decide about LeaderElectionReleaseOnCancel. It hands the
		// lease over as soon as the manager stops instead of letting it expire,
		// which makes rolling updates faster. Only turn it on if nothing runs
		// after mgr.Start returns: the next leader may already be working then.
		// LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "Failed to create the manager")
		os.Exit(1)
	}

	if err := (&controller.BeaconReconciler{
		Client: mgr.GetClient(),
		Scheme: mgr.GetScheme(),
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to set up controller", "controller", "beacon")
		os.Exit(1)
	}
	//nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		// The pod turns Ready only once the webhook server accepts connections: the API server
		// calls the webhooks through the Service as soon as the pod is Ready, and a plain ping
		// would let the first calls after a rollout be refused.
		if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
			setupLog.Error(err, "Failed to set up the webhook server's readiness check")
			os.Exit(1)
		}
	}
	//nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := webhookv1.SetupBeaconWebhookWithManager(mgr); err != nil {
			setupLog.Error(err, "Failed to set up webhook", "webhook", "Beacon")
			os.Exit(1)
		}
	}
	// +kubebuilder:scaffold:builder

	// make run (--webhook-dev-host) serves the webhooks from this machine with a certificate
	// made for it; see internal/webhookcerts.
	if err := webhookcerts.SetupLocal(mgr, webhookServer, webhookDevHost, webhookCertPath); err != nil {
		setupLog.Error(err, "Failed to serve the webhooks from this machine")
		os.Exit(1)
	}

	if metricsCertWatcher != nil {
		setupLog.Info("Adding the metrics certificate watcher to the manager")
		if err := mgr.Add(metricsCertWatcher); err != nil {
			setupLog.Error(err, "Failed to add the metrics certificate watcher")
			os.Exit(1)
		}
	}

	if webhookCertWatcher != nil {
		setupLog.Info("Adding the webhook certificate watcher to the manager")
		if err := mgr.Add(webhookCertWatcher); err != nil {
			setupLog.Error(err, "Failed to add the webhook certificate watcher")
			os.Exit(1)
		}
	}

	// Traces of reconciles, API calls and webhooks when the OTEL_* environment asks for them,
	// the log-level endpoint and the OpenMetrics exposition (telemetry.opbuilder.io/v1-alpha).
	if err := telemetry.Setup(mgr, "lighthouse", logLevel); err != nil {
		setupLog.Error(err, "Failed to set up telemetry")
		os.Exit(1)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up the health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up the readiness check")
		os.Exit(1)
	}

	setupLog.Info("Starting the manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}
