"""Tests of the model zoo and of the runner's bookkeeping (no tlcheck needed)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from tlcheck_models.run import Counts, Outcome, _write, plant, report, table
from tlcheck_models.zoo import ZOO, build


def test_build_is_seeded() -> None:
    spec = next(s for s in ZOO if s.name == "mlp")
    (m1, x1), (m2, x2) = build(spec, 7), build(spec, 7)
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))
    assert torch.equal(x1[0], x2[0])
    m3, _ = build(spec, 8)
    assert not all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m3.state_dict().values()))


def test_plant_changes_one_element(tmp_path: os.PathLike) -> None:
    case = os.path.join(str(tmp_path), "c")
    os.makedirs(os.path.join(case, "test_data_set_0"))
    y = np.array([[1.0, -4.0], [2.0, 3.0]], dtype=np.float32)
    _write(os.path.join(case, "test_data_set_0", "output_0.pb"), y, "y")
    _write(os.path.join(case, "test_data_set_0", "input_0.pb"), y, "x")
    d, delta = plant(case, str(tmp_path))
    assert delta == abs(np.float32(-4.0) * np.float32(1 + 1e-3) + 4.0)
    t = onnx.TensorProto()
    with open(os.path.join(d, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    got = numpy_helper.to_array(t)
    diff = np.argwhere(got != y)
    assert diff.tolist() == [[0, 1]]  # the largest magnitude, −4
    assert got[0, 1] == np.float32(-4.0) * np.float32(1 + 1e-3)


def test_report_status() -> None:
    good = Outcome("a", "holds", True, 10, 10, True, 1.0, "")
    missed = Outcome("b", "holds", True, 10, 10, False, 1.0, "")
    undecided_ok = Outcome("c", "inconclusive", False, 10, 0, False, 1.0, "")
    undecided_bad = Outcome("d", "inconclusive", True, 10, 0, False, 1.0, "")
    fails = Outcome("e", "FAILS", False, 10, 10, True, 1.0, "")
    assert report([good, undecided_ok]) == 0
    for bad in (missed, undecided_bad, fails):
        assert report([good, bad]) == 1


def test_plant_every_element(tmp_path: os.PathLike) -> None:
    case = os.path.join(str(tmp_path), "c")
    os.makedirs(os.path.join(case, "test_data_set_0"))
    y = np.array([1.0, -4.0, 0.0], dtype=np.float32)
    _write(os.path.join(case, "test_data_set_0", "output_0.pb"), y, "y")
    t = onnx.TensorProto()
    with open(os.path.join(plant(case, str(tmp_path), every=True)[0], "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    assert numpy_helper.to_array(t).tolist() == (y * np.float32(1 + 1e-3)).tolist()


def test_findings_and_defects() -> None:
    ok = Counts(10, 0, 0)
    refused = Outcome("bert-torchscript-opset17", "refused", False, 0, 0, False, 1.0, "unsupported op", source="x")
    undecided = Outcome("u-torchscript-opset17", "inconclusive", False, 20, 0, False, 1.0, "",
                        runtimes=(("onnxruntime", Counts(0, 0, 10)), ("pytorch", Counts(0, 0, 10))), planted="n/a")
    missed = Outcome("m-torchscript-opset17", "holds", False, 20, 20, False, 1.0, "",
                     runtimes=(("onnxruntime", ok), ("pytorch", ok)), planted="MISSED")
    false_fail = Outcome("f-dynamo-opset18", "FAILS", False, 20, 20, True, 1.0, "",
                         runtimes=(("onnxruntime", ok), ("pytorch", Counts(9, 1, 0))), planted="caught")
    assert report([refused, undecided]) == 0  # findings
    assert report([missed]) == 1 and report([false_fail]) == 1  # defects
    rows = table([refused, undecided, false_fail]).splitlines()
    assert rows[2].startswith("| bert | x | torchscript, opset17 | float32 | no: unsupported op |")
    assert "| 0/0/10 | 0/0/10 | n/a |" in rows[3]
    assert "| 10/0/0 | 9/1/0 | caught |" in rows[4]


def test_unet_is_seeded() -> None:
    spec = next(s for s in ZOO if s.name == "unet")
    (m1, x1), (m2, x2) = build(spec, 3), build(spec, 3)
    with torch.no_grad():
        y1, y2 = m1(*x1), m2(*x2)
    assert y1.shape == (1, 2, 16, 16) and torch.equal(y1, y2)
