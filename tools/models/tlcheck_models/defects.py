"""Runtime defects established independently of tlcheck.

A FAILS verdict on a runtime's recorded output is either a finding about the
runtime or a false FAIL of tlcheck (a defect of ours). The zoo tells them
apart only by evidence gathered without tlcheck: a **probe** is a one-node
ONNX graph of one operator in one element type, run by ONNX Runtime on a
grid of inputs and set beside the operator's formula as the ONNX operator
documentation states it, evaluated by numpy in binary64. A probe establishes
a defect when the runtime's largest deviation exceeds ``PROBE_RELATIVE``
times the formula's largest magnitude on the grid: 2⁻³⁰, about 10⁷ times
binary64's unit roundoff, so a correctly rounded evaluation of the formula
in binary64, in any order and with any faithful tanh, is far inside it (a
handful of roundings of relative size 2⁻⁵³ each).

The one probe so far:

* ``Gelu`` with ``approximate="tanh"`` on ``DOUBLE``. The operator's text
  (ONNX Operators.md, Gelu-20) states y = x/2 · (1 + tanh(√(2/π)·(x +
  0.044715·x³))), and ONNX's reference evaluator computes it with binary64
  constants. ONNX Runtime 1.x has a FLOAT kernel only and, for DOUBLE,
  expands the operator's function body, whose constants are FLOAT tensors
  (2/π as 0.63661975, 0.044715) cast to the input type by ``CastLike``:
  √(2/π) is then off by about 10⁻⁸ relative, a million times binary64's
  rounding. tlcheck's compare judges the graph by the operator's text, so
  it FAILS ONNX Runtime's DOUBLE output of a graph with this Gelu — a true
  FAIL, and the zoo reports it as a runtime defect (run.Outcome.defect),
  not as a false FAIL, only when this probe confirms it on the installed
  runtime.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper

PROBE_RELATIVE = 2.0**-30
"""A probe's threshold: the largest deviation over the largest magnitude of the formula on the grid."""

Runner = Callable[[onnx.ModelProto, np.ndarray], np.ndarray]
"""Evaluates a one-input, one-output graph on one array (ort_run, or a test's stand-in)."""


def ort_run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    """ONNX Runtime's CPU provider on the graph, graph optimisations off (as the zoo records)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, {"x": x})[0])


def one_node(op: str, elem: int, opset: int, **attrs: object) -> onnx.ModelProto:
    """A graph of the single node op(x) → y over a vector of element type elem."""
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "probe",
                          [helper.make_tensor_value_info("x", elem, [None])],
                          [helper.make_tensor_value_info("y", elem, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """Gelu-20's approximate="tanh" formula as the operator's text states it, in binary64."""
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


GRID = np.linspace(-6.0, 6.0, 4001)
"""The probes' inputs: where Gelu's tanh is neither 0 nor saturated, both signs, zero included."""


def deviation(run: Runner, model: onnx.ModelProto, formula: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """The runtime's largest deviation from the formula on GRID, and the formula's largest magnitude."""
    want = formula(GRID)
    got = np.asarray(run(model, GRID.copy()), dtype=np.float64)
    return float(np.max(np.abs(got - want))), float(np.max(np.abs(want)))


def probe_gelu_tanh_double(run: Runner = ort_run) -> str:
    """The defect message when the runtime's DOUBLE Gelu(tanh) is off the operator's text, else ""."""
    try:
        dev, scale = deviation(run, one_node("Gelu", TensorProto.DOUBLE, 20, approximate="tanh"), gelu_tanh)
    except Exception:  # a runtime without the op has no defect to report here
        return ""
    if dev <= PROBE_RELATIVE * scale:
        return ""
    return (f"ONNX Runtime's DOUBLE Gelu(approximate=tanh) is off the operator's formula by up to {dev:.2g} "
            f"on [-6, 6] ({dev / scale:.1e} of its largest value; binary64 rounding is below 1e-15): "
            "a runtime defect (tools/models/tlcheck_models/defects.py), not a false FAIL")


def _is_gelu_tanh(n: onnx.NodeProto) -> bool:
    if n.op_type != "Gelu" or n.domain not in ("", "ai.onnx"):
        return False
    return any(a.name == "approximate" and a.s == b"tanh" for a in n.attribute)


def runtime_defects(model: onnx.ModelProto, dtype: str, run: Runner = ort_run) -> list[str]:
    """The defects, each confirmed by its probe on run, that apply to the nodes of model in dtype."""
    out: list[str] = []
    if dtype == "float64" and any(_is_gelu_tanh(n) for n in model.graph.node):
        msg = probe_gelu_tanh_double(run)
        if msg:
            out.append(msg)
    return out
