// Package backend holds tlcheck's kernel capsules, runtime providers,
// trust levels, backend profiles, capsule selection, runtime binding and
// the capsule report.
//
// A Capsule is metadata about one executable kernel: the registry
// primitive it implements, its provider and device, its trust level, who
// owns its reverse rule (VJPMode), four contract descriptors (shape,
// layout, value, VJP), each a claim plus Evidence, and its reduction
// policy. A Catalog orders capsules; ReferenceCatalog declares one
// reference CPU capsule per primitive of the spec registry, CUDACatalog
// one native-cuda capsule per primitive.
//
// A Profile (checked_cpu, checked_cuda) fixes a device, a provider policy,
// an assurance policy and a VJP policy. Profile.Select returns the first
// admissible capsule for an op in catalog order; every rejected candidate
// is reported with its reasons. Selecting is a statement about a choice,
// not about a computation: Providers.Bind connects the chosen capsule to a
// registered Provider that has a handler for its op, and a missing
// provider or handler is an error. The reference and fast_cpu providers
// exist; checked_cuda selects but binds only in a CUDA build.
//
// A Session is what the eager interpreter uses: Select before each
// operation executes, caching one binding per op, and recording each
// capsule's first selection in a Report, which prints the --show-backend
// lines.
//
// # Kernel plans
//
// Plan maps each IR node to its registry primitives (irsem.Applications
// is the one place that mapping lives), selects a capsule per kernel with
// Profile.Select and returns a GraphKernelPlan: (node id, IR tag, backend
// op, capsule) in graph order, holding no tensors — accepting it is a
// statement about a choice, not a computation. Bind binds every capsule to
// a runtime provider (an unbound capsule is an error naming the node),
// BoundPlan.Execute runs it, and WritePlanReport prints it.
//
// # Providers
//
// The reference provider runs the spec registry's forward rules (fixed
// left folds, one rounding per operation). The fast_cpu provider
// (fastcpu.go: FastCatalog, FastCPU, FastProviders) runs the fastcpu
// kernels with implementation-defined reductions and NumericalCertificate
// evidence, discharged by package refine. A CUDA provider registers the
// same way (package cuda); until it is built, binding a checked_cuda
// capsule fails with a missing-provider error.
package backend
