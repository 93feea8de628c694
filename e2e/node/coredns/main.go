// Command coredns is CoreDNS (github.com/coredns/coredns, the version in versions.toml [node]
// coredns) with only the plugins the e2e node's Corefile uses: cluster DNS from the API server,
// and nothing that forwards a query out of the cluster. CoreDNS's own main imports every plugin
// (cloud DNS providers, tracing), which would triple the build; its plugin.cfg mechanism makes
// the same kind of reduced build. Built by e2e/scripts/build-node.sh through go-tool.sh --main.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
