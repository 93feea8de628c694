// Command etcd builds the etcd server from the published go.etcd.io/etcd
// modules. The etcd server module carries local replace directives, so it
// cannot be installed with `go install pkg@version`; depending on it from
// this small module sidesteps that and gives us the exact etcd version the
// official envtest bundles pair with the pinned Kubernetes release.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	// etcdmain.Main parses the full argv itself (including argv[0]).
	etcdmain.Main(os.Args)
}
