// Command kube-apiserver is a thin entry point around the upstream API server
// command. It exists so the e2e tests can compile kube-apiserver from the
// published k8s.io/kubernetes module through the Go module proxy instead of
// downloading release tarballs, which are not reachable from CI.
package main

import (
	"os"
	// Embed the IANA zone database so CronJob time zones validate even on
	// hosts without /usr/share/zoneinfo.
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	// Make --logging-format=json available, as in the release binary.
	_ "k8s.io/component-base/logs/json/register"
	// Wire client-go and build-version metrics into the Prometheus registry.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
