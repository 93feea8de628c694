// Command kubectl is a wrapper that builds the kubectl client matching the
// kube-apiserver we compile for e2e tests, so tests never depend on whatever
// (possibly older) kubectl the host happens to provide.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Register the client-go credential plugins (exec, oidc, ...) the way the
	// upstream binary does, so any kubeconfig that works there works here.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	// Honour -v/--v before cobra parses flags, so early client setup logs too.
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
