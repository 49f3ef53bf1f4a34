//go:build tlcheck_testop

package spec

// testop is a throw-away built-in primitive, compiled only with the build
// tag tlcheck_testop: y = x³, dy/dx = 3x². It is the one place such an op
// is added, so that ci/stage-newop.sh can build the whole tree with it and
// list which tests, commands and tables demand an edit beyond this entry
// (docs/adding-an-op.md states the result). It is not part of any release.
func init() {
	x := X()
	err := RegisterElementwise(ElementwiseOp{
		Info: OpInfo{Name: "testop", Exact: true, Smooth: true, ZeroPreserving: true, Polynomial: true,
			IR: &IRForm{Tag: "testop", Superset: true}, Gen: GenHint{Graph: 101}, Doc: "x·x·x (throw-away, build tag tlcheck_testop); derivative 3x²"},
		F: x.Mul(x).Mul(x),
		D: Num(3, 1).Mul(x).Mul(x),
	})
	if err != nil {
		panic(err)
	}
}
