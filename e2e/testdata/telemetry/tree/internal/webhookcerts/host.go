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

package webhookcerts

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DetectHost finds the address at which the API server of cfg reaches this machine, and says
// why it chose it: this machine's address on the network of the cluster's nodes (kind, and
// minikube's docker driver, on Linux), the API server's own address when it runs on this
// machine (a control plane started here, k3s), or this machine's address on the API server's
// network. Elsewhere (a remote cluster, kind on Docker Desktop) it fails, asking for the
// address.
func DetectHost(ctx context.Context, cfg *rest.Config, reader client.Reader) (string, string, error) {
	server := cfg.Host
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", "", fmt.Errorf("reading the API server's address %q: %w", cfg.Host, err)
	}
	apiServer, err := net.DefaultResolver.LookupIP(ctx, "ip", u.Hostname())
	if err != nil {
		return "", "", fmt.Errorf("resolving the API server's host: %w", err)
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", "", err
	}
	var local []*net.IPNet
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			local = append(local, n)
		}
	}
	// Best effort: who may not list nodes gets the rules about the API server's address.
	var nodes corev1.NodeList
	var nodeIPs []net.IP
	if err := reader.List(ctx, &nodes); err == nil {
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if ip := net.ParseIP(a.Address); a.Type == corev1.NodeInternalIP && ip != nil {
					nodeIPs = append(nodeIPs, ip)
				}
			}
		}
	}
	return chooseHost(u.Hostname(), apiServer, nodeIPs, local)
}

// chooseHost is DetectHost's rule: the address of this machine (local) that the nodes or the
// API server (apiHost, at apiServer) reach.
func chooseHost(apiHost string, apiServer, nodes []net.IP, local []*net.IPNet) (string, string, error) {
	isLocal := func(ip net.IP) bool {
		for _, n := range local {
			if n.IP.Equal(ip) {
				return true
			}
		}
		return ip.IsLoopback()
	}
	// on is this machine's address on a network holding ip, loopback aside.
	on := func(ip net.IP) *net.IPNet {
		for _, n := range local {
			if !n.IP.IsLoopback() && n.Contains(ip) {
				return n
			}
		}
		return nil
	}
	for _, ip := range nodes {
		if n := on(ip); n != nil && !isLocal(ip) {
			return n.IP.String(), fmt.Sprintf("the node %s is on this machine's network %s", ip, n), nil
		}
	}
	nodeHere := false
	for _, ip := range nodes {
		nodeHere = nodeHere || isLocal(ip)
	}
	for _, ip := range apiServer {
		if !isLocal(ip) {
			continue
		}
		if len(nodes) > 0 && !nodeHere {
			return "", "", fmt.Errorf("the API server answers on this machine (%s) but its nodes (%s) are on "+
				"no network of this machine: a cluster in a VM or in containers of Docker Desktop (kind, minikube)? "+
				"Pass the address at which they reach this machine, as in make run WEBHOOK_DEV_HOST=host.docker.internal",
				ip, nodes[0])
		}
		return ip.String(), fmt.Sprintf("the API server (%s) runs on this machine", ip), nil
	}
	for _, ip := range apiServer {
		if n := on(ip); n != nil {
			return n.IP.String(), fmt.Sprintf("the API server (%s) is on this machine's network %s", ip, n), nil
		}
	}
	return "", "", fmt.Errorf("cannot tell at which address the API server (%s) reaches this machine: "+
		"forward a port of a host it reaches to this machine's webhook port (a tunnel, e.g. "+
		"`ssh -R 9443:localhost:9443 HOST`) and pass that address, as in "+
		"make run WEBHOOK_DEV_HOST=HOST:9443", apiHost)
}
