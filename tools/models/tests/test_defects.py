"""Tests of defects.py's export probe (no tlcheck needed): it fires on a planted eager/export disagreement
and not on a model whose eager run computes what its export says."""

from __future__ import annotations

import os

import numpy as np
import onnx
import torch
from torch import nn

from tlcheck_models import defects


class Attention(nn.Module):
    """Linear → softmax → Linear in float64; the softmax as transformers' eager attention writes it
    (narrow: ``softmax(w, dtype=float32).to(w.dtype)``) or computed in DOUBLE and then cast by hand."""

    def __init__(self, narrow: bool) -> None:
        super().__init__()
        self.narrow = narrow
        self.a, self.b = nn.Linear(16, 16), nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.a(x)
        if self.narrow:
            p = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(w.dtype)
        else:
            p = nn.functional.softmax(w, dim=-1).to(torch.float32).to(w.dtype)
        return self.b(p)


def _export(narrow: bool, tmp: str) -> tuple[onnx.ModelProto, nn.Module, torch.Tensor]:
    torch.manual_seed(38)
    m = Attention(narrow).double().eval()
    x = 3 * torch.randn(64, 16, dtype=torch.float64)
    path = os.path.join(tmp, f"m{int(narrow)}.onnx")
    with torch.no_grad():
        torch.onnx.export(m, (x,), path, opset_version=17, dynamo=False)
    return onnx.load(path), m, x


def _eager(m: nn.Module, x: torch.Tensor):  # type: ignore[no-untyped-def]
    def run() -> list[np.ndarray]:
        with torch.no_grad():
            return [m(x).numpy()]
    return run


def test_softmax_probe_catches_the_planted_disagreement(tmp_path: os.PathLike) -> None:
    model, m, x = _export(True, str(tmp_path))
    assert defects.softmax_then_cast(model) == 1  # the exporter's Softmax in DOUBLE, then Cast to FLOAT
    recorded = _eager(m, x)()
    # Independently of graph_softmax: the graph's semantics written out by hand.
    with torch.no_grad():
        w = m.a(x)
        by_hand = m.b(torch.softmax(w, dim=-1).to(torch.float32).to(torch.float64)).numpy()
    dist = float(np.max(np.abs(recorded - by_hand)))
    assert dist > defects.PROBE_RELATIVE * float(np.max(np.abs(by_hand)))  # the planted disagreement is real
    msg, rerun = defects.probe_softmax_export(model, _eager(m, x), [recorded])
    assert "runtime/export disagreement" in msg and f"{dist:.2g}" in msg
    assert len(rerun) == 1 and np.array_equal(rerun[0], by_hand)
    # The patch is undone: eager PyTorch's binary32 softmax again.
    assert np.array_equal(_eager(m, x)(), recorded)


def test_softmax_probe_quiet_on_an_agreeing_model(tmp_path: os.PathLike) -> None:
    model, m, x = _export(False, str(tmp_path))
    assert defects.softmax_then_cast(model) == 1  # the same pattern in the graph
    recorded = _eager(m, x)()
    assert defects.probe_softmax_export(model, _eager(m, x), [recorded]) == ("", [])
    # A graph without the pattern is not probed at all (eager is never called).
    g = onnx.helper.make_graph([onnx.helper.make_node("Relu", ["x"], ["y"])], "g",
                               [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [2])],
                               [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [2])])

    def never() -> list[np.ndarray]:
        raise AssertionError("probed a graph without the pattern")

    assert defects.probe_softmax_export(onnx.helper.make_model(g), never, [np.zeros(2)]) == ("", [])
