// Package check is tlcheck's public API for checking autodiff rules that
// tlcheck did not write: a user's own primitive (Op) and a user's float32
// kernel for a declared semantic primitive (Kernel), from the user's own
// go test.
//
// # Declaring a primitive
//
// Go has no generic function values, so a primitive's rules are written
// once as a generic function over spec.Scalar and instantiated for the
// three scalars the oracles evaluate:
//
//	func rules[T spec.Scalar[T]]() check.Rules[T] { return check.Rules[T]{Forward: …, JVP: …, VJP: …} }
//	op := check.Primitive{Name: "mymax", Arity: 2, Exact: true, Ties: "0.5/0.5",
//		Rat: rules[spec.Rat](), Interval: rules[spec.Interval](), Dual: rules[check.Dual]()}
//	check.Op(t, op, check.Options{})
//
// The op is registered into private copies of the reference registries
// (spec.New + spec.Registry.Register), one set per check: it never reaches
// spec.Default, so user ops cannot leak into other checks or collide with
// each other across tests.
//
// # Obligations and their oracles
//
// Every case draws exact rational inputs x, tangents dx, dx′, cotangents
// δ, δ′ and coefficients a, b, and decides (package obligations, whose doc
// states each argument):
//
//   - adjointness ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩;
//   - JVP linearity in dx and VJP linearity in δ;
//   - zero preservation vjp(x, 0) = 0 with the parents' shapes;
//   - the derivative obligation jvp(x,dx) = f′(x)·dx against the forward
//     rule's own derivative, by DualInterval enclosures.
//
// Where Primitive.Exact is set and the Rat rules succeed, the first three are
// decided exactly over Rat (compared with ==); elsewhere by overlap of
// outward-rounded interval enclosures, which can only prove a law wrong,
// never wrongly: a "fails" verdict is a proof. The derivative obligation
// runs for every op (not only inexact ones): the Rat laws cannot tell a
// JVP and VJP that are consistently wrong from right ones, the forward
// rule's derivative can. At a declared kink or tie — an input element
// equal to one of Primitive.Kinks, or, for an op that declares Ties, two
// equal input elements at one position of two parents (anywhere, with
// TiesWithin) — the derivative is a convention, and the dual
// evaluation of the forward rule would impose its own (max and min
// average the tangents of equal operands), so it decides nothing there:
// for an elementwise op (no Shape rule, ties only between parents) those
// positions get tangent 0, where the real directional derivative is
// exactly 0 under every convention, and the other positions decide; for
// any other op such a case is inconclusive for the derivative obligation
// (counted, never a verdict);
// the op's convention is pinned there by adjointness (a VJP that
// disagrees with the JVP's convention) and by linearity. Where an input
// is undecided inside an interval enclosure the case is likewise
// inconclusive. The derivative verdict "fails" is a proof provided the
// declaration is complete: the forward rule branches only at the declared
// kinks and at the declared equalities of inputs of a declared-ties op.
//
// "Holds" means: held on every decided case drawn. It is evidence over
// the cases drawn, not a theorem over all inputs; the report says how many
// cases each oracle decided.
//
// # Two rules: the JVP derived
//
// A user writes two rules, not three: leave Rules.JVP nil over every
// scalar (as JAX's custom_vjp takes a forward and a VJP only) and the JVP
// is derived from the forward rule by forward mode over dual numbers,
// jvp(x, dx) = Du f(x + dx·ε):
//
//   - exactly over Rat, through the forward rule over spec.Dual[spec.Rat]
//     (Primitive.DualRat, required then for an Exact primitive);
//   - over Interval, as the tangent enclosure of the forward rule over
//     Dual (obligations.ForwardTangent), which contains what real dual
//     numbers compute; where that evaluation cannot take a choice soundly
//     the enclosure is the whole line and the case decides nothing.
//
// The given VJP is then judged by adjointness ⟨jvp(x,dx), δ⟩ =
// ⟨dx, vjp(x,δ)⟩ against the derived JVP — over Rat with == for an
// Exact primitive, by disjoint enclosures otherwise — and by VJP
// linearity and zero preservation. Since the derived JVP is the forward
// rule's own derivative, adjointness now also does the derivative
// obligation's work: off declared kinks and ties, a VJP that is not the
// transpose of f′(x) fails, and that verdict is a proof under the same
// premise as the derivative obligation's (the declaration is complete:
// the forward rule branches only at declared kinks and ties), because
// there forward mode through the forward rule is f′(x)·dx. The
// derivative obligation itself is not run (it would compare the forward
// rule's tangent with itself); Report.DerivedJVP says so.
//
// At a declared kink or tie forward mode imposes the forward rule's own
// choice (its branch, or Dual's ½/½ split at a max tie), one valid
// convention among several, and a VJP with another valid one is not wrong.
// So there the tangents are masked as for the derivative obligation: an
// elementwise op gets dx = 0 at those positions (both sides then weigh
// the VJP's value there by 0) and the other positions decide; any other op,
// or a case with every position masked, gets dx = 0 everywhere and counts
// as inconclusive for adjointness. The VJP's convention at a kink is thus
// not judged by a derived JVP; give the JVP rule to pin it.
//
// # Generators
//
// Parent shapes come from Primitive.Shapes (default: all parents of one shape of
// rank 0…3, extents 1…3). Each element is drawn, in this order of
// simplicity (what a shrinker moves toward): a small rational from the
// parent's declared spec.Domain, one of the declared Kinks, or — when
// Primitive.Ties is declared — a copy of an element already drawn (the same
// position of an earlier parent, or an earlier element of the same
// parent), so that ties between parents and within a tensor occur on
// purpose, in most cases.
//
// # Shrinking and replay
//
// Op runs the property under pgregory.net/rapid: a failure is shrunk and
// reported with rapid's replay line (-rapid.failfile=… or -rapid.seed=…).
// Find runs the same property over a deterministic seeded sweep (case i
// drawn from spec.CaseSeed(seed, name, i)) and shrinks a failure with a
// deterministic choice-stream shrinker, so its counterexample is a pure
// function of the op and the options (the Examples print it).
//
// # Certificates
//
// With Options.CertDir set, a check that holds writes the certificate
// directory CertPath(CertDir, p) = CertDir/<Name> in package
// certificates' format (tlcheck.manifest.v2 and tlcheck.cert.v3,
// byte-deterministic): manifest.json and adjointness/<Name>.json, whose
// case i records the inputs x, the tangents dx, the cotangent δ and both
// sides of ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩ — exact rationals for the
// cases decided over Rat, outward-rounded enclosures for the others —
// exactly as for a built-in primitive. It goes through the certificates
// producer (Suite.Certify) with the primitive added to its table of rules
// (Suite.AddOps). Beside it, whatever the verdict, CertDir/<Name>.check.json
// records the Report (the decided counts and the counterexample). A check
// that fails writes no certificate and removes one a previous run left.
//
// Naming: the manifest lists the primitive under its Name (ops, and the
// file adjointness/<Name>.json); its registry_hash is
// spec.RegistryHashWith over the primitive's facts — the reference
// registry extended by the user's OpInfo (its name, arity, Exact,
// Partial, Smooth and Ties: every fact spec.RegistryHash covers; not Doc,
// Kinks, Domains nor the rules' Go code, which the verifier recomputes
// instead), so a directory names the extended rule set it was made with,
// and a verifier given a declaration with other facts fails at
// registry_hash.
//
// Seeding: Find's case i is drawn from spec.CaseSeed(seed, Name, i), as a
// built-in primitive's adjointness case i is; the certificate records
// every case of the sweep (its head: the instance, then the tangents dx
// and the cotangent δ, the first draws of the case) under the manifest's
// seed and case count, and the verifier regenerates each from them with
// the primitive's own generator and compares. Op's cases come from rapid's own
// stream, which no seed regenerates: its certificate says "draw":
// "recorded", its manifest seed is 0, and the verifier recomputes every
// claim from the recorded inputs without binding them to a seed.
//
// Verify(dir, p) re-derives such a directory from the user's go test,
// through the certificates verifier's own code path with its rule table
// extended by p: every side is recomputed from p's rules and compared with
// the recorded one, so a certificate edited in one claim, or verified
// against a different VJP, fails naming the file and the JSON path.
// tlcheck verify, which does not know the user's rules, refuses such a
// directory with one line naming the primitive (exit 2, not an obligation
// failure). The certificate covers adjointness only: linearity, zero
// preservation and the derivative obligation are decided by the check and
// recorded in the Report, not certified.
package check
