package fpbound

// nodeSeen (tests only: the unet38 profile) is called after node j's
// sweeps with the budget spent so far (spent) and the fallback
// allowance spent so far (cutSpent).
var nodeSeen func(j int, nodes []foNode, spent, cutSpent int64)

// seen reports node j's sweeps to nodeSeen.
func (r *foRun[F]) seen(j int) {
	if nodeSeen != nil && !r.gmode {
		nodeSeen(j, r.nodes, r.spent, r.cutSpent)
	}
}
