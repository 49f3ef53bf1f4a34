package fpbound

// intervalSweepWork is the budget's estimate of one interval sweep from
// an element of node j (sweep), in Options.SweepWork's units: the sweep
// runs the VJP rule of node j and of every node it reaches through
// parents an error reaches, once each, and skips every other node, so its
// work is the declared work of the nodes it visits — sweepWork(j, 0), the
// set the dense sweep from j visits — and not the declared work of the
// whole prefix of j. The two differ where an error reaches only part of
// the prefix: on the zoo's UNet the first instance_norm's 2048 sweeps
// visit the norm alone (the conv before it is fused into it, its input
// exact), 4096 units each, and were charged 65024 each, the whole 2²⁷
// budget (docs/bounds.md, unet36). The budget decides only which sweeps
// run; every bound is sound whatever it is.
func (r *foRun[F]) intervalSweepWork(j int) int64 {
	if intervalSweepPrefix {
		return r.prefix[j]
	}
	return r.sweepWork(j, 0)
}

// intervalSweepPrefix (tests only) restores the charge before unet36:
// the declared work of node j's whole prefix per interval sweep.
var intervalSweepPrefix bool
