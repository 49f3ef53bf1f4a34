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

The second kind of probe is about an export, not an operator: PyTorch's
eager output and the graph the exporter wrote may compute different things.

* ``softmax(x, dtype=float32)`` of a DOUBLE x (transformers' eager attention
  in ViT, BERT and others: ``softmax(w, dim=-1, dtype=torch.float32)
  .to(w.dtype)``). PyTorch's eager kernel converts x to binary32 and computes
  the softmax in binary32; the TorchScript exporter writes ``Softmax`` on the
  DOUBLE x followed by ``Cast(to=FLOAT)`` (session 15, docs/models.md
  ``cast37``). The probe (probe_softmax_export) applies only where the
  exported graph holds that pattern (a DOUBLE Softmax read by a Cast to
  FLOAT); it reruns the eager model with the graph's semantics — every such
  softmax computed in the input's dtype and then cast, graph_softmax — and
  measures the recorded output's largest distance from the rerun. It
  establishes a **runtime/export disagreement** when that distance exceeds
  ``PROBE_RELATIVE`` times the rerun's largest magnitude (binary32 rounding
  inside the softmax moves the output by about 10⁻⁸ relative; an eager run
  that already computes what the graph says differs by nothing: the same
  kernels in the same order). The zoo (run.check) then judges the rerun with
  tlcheck compare: the finding is reported instead of an ERROR only when the
  rerun has no FAILS — the recorded output FAILS the graph because it is not
  the graph's output, and the graph's own output does not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

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


@contextlib.contextmanager
def graph_softmax() -> Iterator[None]:
    """Within: ``torch.nn.functional.softmax(x, dim, dtype=d)`` with d narrower than x's float dtype computes the
    softmax in x's dtype and then casts to d — the exported graph's Softmax then Cast — instead of eager
    PyTorch's conversion of x to d first. Other calls are unchanged."""
    import torch

    orig = torch.nn.functional.softmax

    def softmax(input, dim=None, _stacklevel=3, dtype=None):  # type: ignore[no-untyped-def]
        if (dtype is not None and input.is_floating_point() and dtype.is_floating_point
                and torch.finfo(dtype).bits < torch.finfo(input.dtype).bits):
            return orig(input, dim=dim).to(dtype)
        return orig(input, dim=dim, _stacklevel=_stacklevel, dtype=dtype)

    torch.nn.functional.softmax = softmax
    try:
        yield
    finally:
        torch.nn.functional.softmax = orig


def softmax_then_cast(model: onnx.ModelProto) -> int:
    """How many Softmax nodes of model compute in DOUBLE and are read by a Cast to FLOAT (the export of an
    eager ``softmax(x, dtype=float32)`` of a DOUBLE x)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    g = inferred.graph
    elem = {v.name: v.type.tensor_type.elem_type for v in (*g.input, *g.value_info, *g.output)}
    elem.update({t.name: t.data_type for t in g.initializer})
    casts = {n.input[0] for n in g.node if n.op_type == "Cast" and n.domain in ("", "ai.onnx") and n.input
             and any(a.name == "to" and a.i == TensorProto.FLOAT for a in n.attribute)}
    return sum(1 for n in g.node if n.op_type == "Softmax" and n.domain in ("", "ai.onnx")
               and elem.get(n.input[0]) == TensorProto.DOUBLE and n.output[0] in casts)


def probe_softmax_export(model: onnx.ModelProto, eager: Callable[[], Sequence[np.ndarray]],
                         recorded: Sequence[np.ndarray]) -> tuple[str, list[np.ndarray]]:
    """The disagreement message and the graph-semantics rerun's outputs when PyTorch's recorded outputs are
    off what the exported graph computes at its DOUBLE-Softmax-then-Cast nodes (see the module's text);
    ("", []) when the graph has no such node or the recorded outputs are within PROBE_RELATIVE of the rerun.

    eager runs the model on the recorded inputs (graph_softmax is in force while it runs)."""
    k = softmax_then_cast(model)
    if k == 0:
        return "", []
    with graph_softmax():
        rerun = [np.asarray(o) for o in eager()]
    dist, scale = 0.0, 0.0
    for got, want in zip(recorded, rerun):
        g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        dist = max(dist, float(np.max(np.abs(g - w), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(w), initial=0.0)))
    if dist <= PROBE_RELATIVE * scale:
        return "", []
    return (f"PyTorch's eager softmax(dtype=float32) of a DOUBLE value computes in binary32, the export writes "
            f"{k} Softmax in DOUBLE then Cast to FLOAT: the recorded output is up to {dist:.2g} "
            f"({dist / scale:.1e} of its largest value) from the model rerun eagerly with the graph's semantics "
            "— a runtime/export disagreement (tools/models/tlcheck_models/defects.py), not a false FAIL"), rerun


def runtime_defects(model: onnx.ModelProto, dtype: str, run: Runner = ort_run) -> list[str]:
    """The defects, each confirmed by its probe on run, that apply to the nodes of model in dtype."""
    out: list[str] = []
    if dtype == "float64" and any(_is_gelu_tanh(n) for n in model.graph.node):
        msg = probe_gelu_tanh_double(run)
        if msg:
            out.append(msg)
    return out
