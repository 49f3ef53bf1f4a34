"""Tests of the node-test export and the classification of tlcheck's results."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_node_tests.export import write_case
from onnx_node_tests.run import Result, classify, report, run_all


def _proc(rc: int, doc: dict | None = None, err: str = "") -> "subprocess.CompletedProcess[str]":
    return subprocess.CompletedProcess([], rc, json.dumps(doc) if doc is not None else "", err)


def test_write_case_round_trip(tmp_path: os.PathLike) -> None:
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])])
    m = helper.make_model(g)
    x = np.array([-1.0, 0.0, 2.0], dtype=np.float32)
    d = write_case(str(tmp_path), "test_relu", m, [([x], [np.maximum(x, 0)])])
    t = onnx.TensorProto()
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    assert t.name == "y"
    assert numpy_helper.to_array(t).tolist() == [0.0, 0.0, 2.0]
    assert onnx.load(os.path.join(d, "model.onnx")).graph.node[0].op_type == "Relu"


def test_classify() -> None:
    ops = frozenset({"Erf"})
    assert classify("a", _proc(0, {"fails": 0, "inconclusive": 0}), ops).status == "holds"
    assert classify("a", _proc(0, {"fails": 0, "inconclusive": 2}), ops).status == "inconclusive"
    r = classify("a", _proc(1, {"fails": 3, "inconclusive": 0}), ops)
    assert r.status == "FAILS" and "3" in r.reason
    k = classify("test_averagepool_2d_ceil_last_window_starts_on_pad", _proc(1, {"fails": 3}), ops)
    assert k.status == "FAILS (known)" and "4 decimals" in k.reason
    r = classify("a", _proc(2, None, "onnx: m.onnx: node \"y\" (Foo): op_type: unknown\nmore"), ops)
    assert r.status == "refused" and r.reason.startswith("onnx: m.onnx")


def test_report_fails_on_a_false_fails() -> None:
    lines: list[str] = []
    ok = [Result("a", "holds", "", frozenset({"Erf"})), Result("b", "refused", "why", frozenset({"Relu"}))]
    assert report(ok + [Result("k", "FAILS (known)", "rounded", frozenset())], lines.append) == 0
    assert any("holds 1 (100.0 %)" in s for s in lines)
    assert any("refused" in s and "b: why" in s for s in lines)
    lines.clear()
    bad = ok + [Result("c", "FAILS", "1 element(s) outside the bound", frozenset({"Erf"}))]
    assert report(bad, lines.append) == 1
    assert any(s.startswith("FAILS") and "c:" in s for s in lines)


def test_run_all_uses_every_case_dir(tmp_path: os.PathLike) -> None:
    for n in ("test_b", "test_a"):
        os.makedirs(os.path.join(tmp_path, n))
        open(os.path.join(tmp_path, n, "model.onnx"), "wb").close()
    os.makedirs(os.path.join(tmp_path, "not_a_case"))
    seen: list[list[str]] = []

    def fake(cmd):  # type: ignore[no-untyped-def]
        seen.append(list(cmd))
        return _proc(0, {"fails": 0, "inconclusive": 0})

    rs = run_all("tlcheck", str(tmp_path), fake)
    assert [r.name for r in rs] == ["test_a", "test_b"]
    assert seen[0][:3] == ["tlcheck", "compare", "--json"]
