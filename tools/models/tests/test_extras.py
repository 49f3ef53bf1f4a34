"""Tests of the zoo's newest-opset, float64, grad and certify variants (no tlcheck needed)."""

from __future__ import annotations

import json
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper
from torch.onnx import _constants

from tlcheck_models import extras
from tlcheck_models.extras import Check
from tlcheck_models.run import Counts, Outcome, Variant, _write, plan, plant, primary_variant, report, table
from tlcheck_models.zoo import ZOO, build


def _spec(name: str):  # type: ignore[no-untyped-def]
    return next(s for s in ZOO if s.name == name)


def test_newest_opset_is_torchs_own() -> None:
    # Independently of extras: the constants torch's exporters check opset_version against.
    assert extras.newest_opset("torchscript") == _constants.ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET
    assert extras.newest_opset("dynamo") == _constants.ONNX_MAX_OPSET
    assert extras.opset_for("torchscript", "default") == 17
    assert extras.opset_for("dynamo", "default") == 18
    assert extras.opset_for("dynamo", "17") == 18  # the dynamo exporter's own opsets start at 18
    assert extras.opset_for("torchscript", "13") == 13


@pytest.mark.parametrize("name", ["mlp", "resnet", "gpt2-1layer"])
def test_float64_variant(name: str) -> None:
    m, x = extras.to_dtype(*build(_spec(name), 3), "float64")
    assert all(p.dtype == torch.float64 for p in m.parameters())
    assert all(t.dtype == (torch.float64 if t.is_floating_point() else torch.int64) for t in x)
    m32, x32 = build(_spec(name), 3)
    with torch.no_grad():
        y64, y32 = m(*x), m32(*x32)
    assert y64.dtype == torch.float64
    # The same model: float32's result is float64's to float32 accuracy.
    assert torch.allclose(y64.float(), y32, rtol=1e-4, atol=1e-5)


def test_float64_epsilon_is_the_graphs() -> None:
    m, _ = extras.to_dtype(*build(_spec("unet"), 1), "float64")
    gns = [g for g in m.modules() if isinstance(g, torch.nn.GroupNorm)]
    assert gns and all(g.eps == float(np.float32(1e-5)) and g.eps != 1e-5 for g in gns)
    m32, _ = build(_spec("unet"), 1)
    assert all(g.eps == 1e-5 for g in m32.modules() if isinstance(g, torch.nn.GroupNorm))


def test_plant_float64(tmp_path: os.PathLike) -> None:
    case = os.path.join(str(tmp_path), "c")
    os.makedirs(os.path.join(case, "test_data_set_1"))
    y = np.array([0.5, -3.0, 2.0], dtype=np.float64)
    _write(os.path.join(case, "test_data_set_1", "output_0.pb"), y, "y")
    d, delta = plant(case, str(tmp_path), rel=1e-9, data="test_data_set_1")
    t = onnx.TensorProto()
    with open(os.path.join(d, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    got = numpy_helper.to_array(t)
    assert got.dtype == np.float64
    assert np.argwhere(got != y).tolist() == [[1]]
    assert got[1] == -3.0 * (1 + 1e-9) and delta == abs(-3.0 * (1 + 1e-9) + 3.0)
    assert extras.planted_relative("float64") == 1e-9 and extras.planted_relative("float32") == 1e-3


def test_plan_cheap_and_matrix() -> None:
    ci = plan(["mlp", "bert", "llama"], ["auto"], ["default"], ["float32"], ["mlp"])
    newest_ts, newest_dy = extras.newest_opset("torchscript"), extras.newest_opset("dynamo")
    assert [(s.name, v) for s, v in ci] == [
        ("mlp", Variant("torchscript", 17)), ("mlp", Variant("torchscript", newest_ts)),
        ("mlp", Variant("dynamo", newest_dy)), ("mlp", Variant("torchscript", 17, "float64")),
        ("bert", Variant("torchscript", 17)), ("llama", Variant("dynamo", 18))]
    full = plan(["unet"], ["torchscript", "dynamo"], ["default", "newest"], ["float32", "float64"], [])
    assert len(full) == 8 and len(set(v for _, v in full)) == 8
    assert primary_variant(_spec("llama")) == Variant("dynamo", 18)


def test_certify_detail() -> None:
    out = json.dumps({"files": [{"kind": "adjointness"}, {"kind": "model_range"}, {"kind": "adjointness"}]})
    err = "certified: model_interval in place of model_composition\nnot certified: model_range: node 5 (add)\n"
    assert extras.certify_detail(out, err) == "adjointness ×2, model_range; not certified: model_range: node 5 (add)"


def test_tensor_and_agreement() -> None:
    doc = {"grad": {"input": {"shape": [2], "values": ["1/2", {"lo": 0.9, "hi": 1.1}]},
                    "params": {"w": {"shape": [1], "values": [-2.0]}, "other": {"shape": [3], "values": [0, 0, 0]}}}}
    assert extras.tensor(doc["grad"]["input"]).tolist() == [0.5, 1.0]
    a = extras.agreement(doc, {"input": np.array([0.5, 1.0]), "w": np.array([-2.5])}, 1e-4)
    assert (a.matched, a.within, a.worst) == (2, 1, "w") and a.worst_rel == pytest.approx(0.5 / 2.5)
    assert str(a) == "1 of 2 beside PyTorch's agree; worst w: 0.2"
    assert extras.agreement(doc, {"input": np.array([0.5, 1.0])}, 1e-4).within == 1


def test_torch_grads_of_the_sum() -> None:
    m = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    g = extras.torch_grads(m, (x,))
    # d/dW Σ (xWᵀ + b) = column sums of x per output; d/db = batch size; d/dx = Σ_j W_j.
    assert np.allclose(g["weight"], np.tile(x.sum(0).double().numpy(), (2, 1)))
    assert np.allclose(g["bias"], [4.0, 4.0])
    assert np.allclose(g["input"], np.tile(m.weight.detach().sum(0).double().numpy(), (4, 1)))


def test_guard_and_table_columns() -> None:
    ok = Counts(4, 0, 0)
    ran = (Check("grad", 0, "rat, 3 gradients"), Check("certify", 1, "adjointness"))
    refused = (Check("grad", 2, "grad: node 3: unsupported"),)
    base = dict(runtimes=(("pytorch", ok),), planted="caught", dtype="float64", note="ONNX Runtime: no kernel")
    good = Outcome("m-dynamo-opset23", "holds", True, 4, 4, True, 1.0, "", checks=ran, guard=True,
                   primary=False, **base)  # type: ignore[arg-type]
    bad = Outcome("m-dynamo-opset23", "holds", True, 4, 4, True, 1.0, "", checks=refused, guard=True,
                  primary=False, **base)  # type: ignore[arg-type]
    finding = Outcome("n-dynamo-opset23", "holds", False, 4, 4, True, 1.0, "", checks=refused, guard=False,
                      primary=False, **base)  # type: ignore[arg-type]
    not_primary = Outcome("m-torchscript-opset20", "export failed", True, 0, 0, False, 1.0, "x", primary=False)
    assert report([good, finding, not_primary]) == 0
    assert report([bad]) == 1
    timed_out = Outcome("m-dynamo-opset23", "holds", True, 4, 4, True, 1.0, "", checks=(Check("certify", -1, ""),),
                        guard=True, primary=False, **base)  # type: ignore[arg-type]
    assert report([timed_out]) == 0  # the machine's load, a finding
    row = table([good]).splitlines()[2]
    assert "| dynamo, opset23 | float64 | yes | no DOUBLE kernel | 4/0/0 | caught |" in row
    assert "grad ok (rat, 3 gradients); certify exit 1 (adjointness)" in row


def test_gelu_probe_tells_the_function_bodys_constants_from_rounding() -> None:
    # Two stand-in runtimes, derived independently of defects.gelu_tanh: one
    # evaluates the operator's text in a different binary64 order (a correct
    # runtime: no defect), one with ONNX's function-body constants (FLOAT
    # 2/π and 0.044715 cast to DOUBLE: the planted defect).
    from tlcheck_models import defects

    def faithful(_m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
        inner = x * (1.0 + 0.044715 * x * x) * np.sqrt(2.0 / np.pi)
        return x * 0.5 + x * 0.5 * np.tanh(inner)

    def float_constants(_m: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
        c1 = np.sqrt(np.float64(np.float32(0.63661975)))
        c0 = np.float64(np.float32(0.044715))
        return 0.5 * x * (1.0 + np.tanh(c1 * (x + c0 * x**3)))

    assert defects.probe_gelu_tanh_double(faithful) == ""
    msg = defects.probe_gelu_tanh_double(float_constants)
    assert "runtime defect" in msg
    g = onnx.helper.make_graph([onnx.helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")], "g", [], [])
    m = onnx.helper.make_model(g)
    assert defects.runtime_defects(m, "float64", float_constants) == [msg]
    assert defects.runtime_defects(m, "float32", float_constants) == []  # the probe is for DOUBLE only
    g_erf = onnx.helper.make_graph([onnx.helper.make_node("Gelu", ["x"], ["y"])], "g", [], [])
    assert defects.runtime_defects(onnx.helper.make_model(g_erf), "float64", float_constants) == []


def test_onnxruntime_double_gelu_tanh_is_the_function_body() -> None:
    # The finding on the pinned ONNX Runtime (requirements lock): its DOUBLE
    # Gelu(tanh) equals the function body's formula to binary64 rounding and
    # is off the operator's text by more than the probe's threshold.
    from tlcheck_models import defects

    x = defects.GRID.copy()
    got = defects.ort_run(defects.one_node("Gelu", onnx.TensorProto.DOUBLE, 20, approximate="tanh"), x)
    c1 = np.sqrt(np.float64(np.float32(0.63661975)))
    c0 = np.float64(np.float32(0.044715))
    body = 0.5 * x * (1.0 + np.tanh(c1 * (x + c0 * x**3)))
    assert np.max(np.abs(got - body)) < 1e-13
    assert defects.probe_gelu_tanh_double() != ""


def test_outcome_excuses_only_a_confirmed_onnxruntime_defect() -> None:
    base = dict(name="gpt2-1layer-dynamo-opset23", verdict="FAILS", decides=False, elements=800, decided=800,
                planted_caught=False, seconds=1.0, reason="", dtype="float64", primary=False)
    assert not Outcome(**base).ok  # type: ignore[arg-type]
    assert Outcome(**base, defect="ONNX Runtime's DOUBLE Gelu ...").ok  # type: ignore[arg-type]


def test_bad_arguments_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from tlcheck_models.run import bad_argument, main

    assert bad_argument("mlp,gpt2", "auto,dynamo", "default,newest,20", "float32,float64") == ""
    for args, flag in ((["--models", "nosuch"], "--models"), (["--dtypes", "float16"], "--dtypes"),
                       (["--opsets", "banana"], "--opsets"), (["--exporters", "tf"], "--exporters")):
        assert main(["--tlcheck", "/nonexistent", *args, "/nonexistent-out"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and flag in err, err
