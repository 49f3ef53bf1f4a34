// Package nn holds layers, initialisers, data sets, optimisers and the
// trainer, written once against the typedgraph.Ops interface so that the
// same model text runs eagerly on a tape or is recorded once as a typed
// graph; the quickstart MLP reproduces TorchLean's transcript digit for
// digit; and the model exchange formats (PyTorch parameter JSON, state
// bit patterns, the TLSF32B stream).
package nn
