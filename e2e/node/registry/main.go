// Command registry is the OCI registry of github.com/distribution/distribution (the version in
// versions.toml [node] distribution) with only the filesystem storage driver: the e2e node's
// local mirror keeps its images in the e2e cache. distribution's own main also links the S3,
// Azure and GCS drivers and its auth and proxy backends, which would more than double the
// build. Built by e2e/scripts/build-node.sh through go-tool.sh --main.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
