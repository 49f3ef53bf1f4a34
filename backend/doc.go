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
// provider or handler is an error. Today only the reference provider
// exists, so checked_cuda selects but does not bind.
//
// A Session is what the eager interpreter uses: Select before each
// operation executes, caching one binding per op, and recording each
// capsule's first selection in a Report, which prints the --show-backend
// lines.
//
// # Extension points
//
// Kernel plans (issue 4). A GraphKernelPlan is a list of (node id, IR tag,
// backend op, Capsule) in graph order and holds no tensors. It is built
// from the pieces here: map each node's tag to a registry op, call
// Profile.Select (which needs no session and no provider), and store the
// Selection's Capsule, a plain value. Accepting or rejecting a plan is
// re-running Profile.Rejections on each entry; binding it is
// Providers.Bind on each entry; executing it is Binding.Execute; its
// report is WriteReport over its capsules.
//
// Further providers (issue 6 and package cuda). A provider implements
// Provider (or is a FuncProvider around a Handler) and is registered in a
// Providers set; its capsules are appended to a catalog with
// Catalog.Append, and a profile over that catalog selects them. The fast
// float32 CPU provider is expected to use the name ProviderFastCPU,
// ReductionImplementationDefined for accumulating ops and
// NumericalCertificate evidence for its value contracts; trust levels,
// assurance policies and admissibility need no change for it.
package backend
