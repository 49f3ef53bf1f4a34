package leanbridge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/leanbridge/emit"
)

// TestTheoremsExist: every theorem the emitter writes and every one the
// lock names is declared in the Lean sources, and each covered primitive
// has its adjointness theorem (a grep-level check: no Lean here).
func TestTheoremsExist(t *testing.T) {
	names, err := Theorems(filepath.Join("..", "lean"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	var want []string
	for _, op := range emit.Covered {
		adj := "Tlcheck." + op + "_adjoint"
		switch op {
		case "gather": // Tlcheck.gather_adjoint is the lemma for every index list
			adj = "Tlcheck.gather_op_adjoint"
		case "scatter": // Tlcheck.scatter is the list function gather's VJP writes with
			adj = "Tlcheck.scatter_op_adjoint"
		}
		want = append(want, "Tlcheck.Certs.Adjointness."+op+".cert", "Tlcheck.Certs.Adjointness."+op+".cert_ok", adj)
	}
	want = append(want, "Tlcheck.checkAll_sound", "Tlcheck.checkCase_sound",
		"Tlcheck.square_taylor", "Tlcheck.mul_taylor", "Tlcheck.div_taylor", "Tlcheck.inv_taylor",
		"Tlcheck.relu_local_linear", "Tlcheck.max_local_linear", "Tlcheck.relu_kink_convention",
		"Tlcheck.Graph.rev_adjoint", "Tlcheck.Graph.revSkip_eq", "Tlcheck.Graph.backprop_correct",
		"Tlcheck.dot_vadd", "Tlcheck.nodesOk_wf", "Tlcheck.checkComps_sound", "Tlcheck.comp_adjoint", "Tlcheck.comp_backprop",
		"Tlcheck.Certs.Composition.cert", "Tlcheck.Certs.Composition.cert_ok", "Tlcheck.Certs.Composition.cert_all",
		"Tlcheck.graph_locallyAdjoint", "Tlcheck.graph_zeroPreserving", "Tlcheck.comp_zeroPreserving", "Tlcheck.round_jvp_nth",
		"Tlcheck.round_f16_vjp_linear", "Tlcheck.round_bf16_vjp_linear", "Tlcheck.round_f32_vjp_linear", "Tlcheck.round_f16_zero_preserving",
		"Tlcheck.round_bf16_zero_preserving", "Tlcheck.round_f32_zero_preserving", "Tlcheck.roundQ_instance", "Tlcheck.round_fwd_zeros",
		"Tlcheck.trunc_int_vjp_linear", "Tlcheck.trunc_jvp_nth", "Tlcheck.truncQ_zero", "Tlcheck.truncAll_zeros", "Tlcheck.trunc_fwd_zeros",
		"Tlcheck.trunc_int_zero_preserving", "Tlcheck.truncQ_instance",
		"Tlcheck.lens_adjoint", "Tlcheck.checkComps_adjoint", "Tlcheck.comp_adjoint_all",
		"Tlcheck.renorm_jacobian_symm", "Tlcheck.renorm_zero_preserving", "Tlcheck.maxFwd_along_linear",
		"Tlcheck.max_pool_unique_deriv", "Tlcheck.max_pool_prim_unique_deriv", "Tlcheck.max_pool_nd_unique_deriv",
		"Tlcheck.maxJvp_unique", "Tlcheck.maxFwd_unique_near", "Tlcheck.unique_max_step", "Tlcheck.gap_step",
		"Tlcheck.max_pool_unique_instance", "Tlcheck.max_pool_all_unique_deriv", "Tlcheck.nth_ext",
		"Tlcheck.reduce_sum_taylor", "Tlcheck.reduce_mean_taylor", "Tlcheck.matmul_taylor", "Tlcheck.linear_taylor",
		"Tlcheck.mse_loss_taylor", "Tlcheck.sqrt_inverse_taylor", "Tlcheck.sqrt_chain", "Tlcheck.reduceAKB_along",
		"Tlcheck.gather_reads", "Tlcheck.wsum_unflat", "Tlcheck.slice_reads", "Tlcheck.permute_reads", "Tlcheck.transpose_reads",
		"Tlcheck.broadcast_to_reads", "Tlcheck.concat_reads", "Tlcheck.transpose_idx_2x3", "Tlcheck.permute_idx_201",
		"Tlcheck.gather_op_reads", "Tlcheck.gather_idx_take", "Tlcheck.shrink_vjp_linear", "Tlcheck.shrink_local_linear",
		"Tlcheck.pad_idx_constant", "Tlcheck.pad_idx_reflect", "Tlcheck.pad_idx_edge", "Tlcheck.pad_taylor",
		"Tlcheck.index_vjp_linear", "Tlcheck.permute_vjp_linear", "Tlcheck.pad_vjp_linear", "Tlcheck.gather_vjp_linear",
		"Tlcheck.reduce_sum_vjp_linear", "Tlcheck.reduce_mean_vjp_linear",
		"Tlcheck.wsum_lt", "Tlcheck.unflat_below", "Tlcheck.slice_src_lt", "Tlcheck.sliceIdx_lt",
		"Tlcheck.size_split", "Tlcheck.gather_src_lt", "Tlcheck.gatherIdx_lt", "Tlcheck.below_nth", "Tlcheck.below_of_nth",
		"Tlcheck.bcastIdx_lt", "Tlcheck.concatSrc_lt",
		"Tlcheck.conv_prim_adjoint", "Tlcheck.conv_prim_adjoint_nobias", "Tlcheck.conv_transpose_prim_adjoint",
		"Tlcheck.conv_transpose_prim_adjoint_nobias", "Tlcheck.max_pool_prim_adjoint", "Tlcheck.avg_pool_prim_adjoint",
		"Tlcheck.convG_instance", "Tlcheck.dropout_prim_adjoint", "Tlcheck.tapplyAll_adjoint", "Tlcheck.layer_norm_instance")
	if data, err := os.ReadFile(filepath.Join("..", "lean", "statements.lock")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "theorem" {
				want = append(want, f[1])
			}
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("theorem %s is not declared in lean/Tlcheck", w)
		}
	}
}

// TestPinnedLean reads the project's pin and refuses a pin that is not
// leanprover/lean4:vX.Y.Z.
func TestPinnedLean(t *testing.T) {
	if v, err := PinnedLean(filepath.Join("..", "lean")); err != nil || strings.Count(v, ".") != 2 {
		t.Errorf("lean/lean-toolchain: %q, %v", v, err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lean-toolchain"), []byte("leanprover/lean4:nightly\n"), 0o644)
	if _, err := PinnedLean(dir); err == nil || !strings.Contains(err.Error(), "not a leanprover/lean4:vX.Y.Z pin") {
		t.Errorf("nightly pin: %v", err)
	}
}
