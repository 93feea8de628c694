module example.com/harbor

go 1.26.0

require sigs.k8s.io/controller-runtime v0.25.0
