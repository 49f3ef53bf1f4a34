"""Quantization ops against ONNX Runtime: write seeded cases for the runner.

QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked; integer and
float 8 types; NaN and ±∞ in x), DynamicQuantizeLinear, and a weight-only QDQ
model (DequantizeLinear → MatMul → Add → Relu, with a second data set whose
largest output element is planted × (1 + 1e-3)). Each case is a directory
model.onnx + test_data_set_N as export writes them, the outputs ONNX
Runtime's (CPU provider, graph optimisations off). Not run in CI (the node
tests are); by hand:

    python -m onnx_node_tests.quant_ort OUT
    python -m onnx_node_tests.run --tlcheck BIN OUT

expected: 0 FAILS but the planted data set of ``qdq_matmul`` (docs/onnx.md,
section q34, has the figures). Needs onnxruntime (in the engines venv).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh


def _save(d: str, m: onnx.ModelProto, x: np.ndarray, k: int = 0, outs: Sequence[np.ndarray] | None = None,
          out_types: Sequence[int] = ()) -> list[np.ndarray]:
    import onnxruntime as ort

    ds = os.path.join(d, f"test_data_set_{k}")
    os.makedirs(ds, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    if outs is None:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        outs = ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})
    with open(os.path.join(ds, "input_0.pb"), "wb") as f:
        f.write(nh.from_array(x, "x").SerializeToString())
    for i, y in enumerate(outs):
        name = m.graph.output[i].name
        if i < len(out_types) and out_types[i] in (TP.FLOAT8E4M3FN, TP.FLOAT8E5M2):
            t = h.make_tensor(name, out_types[i], y.shape, np.asarray(y).view(np.uint8).tobytes(), raw=True)
        else:
            t = nh.from_array(np.asarray(y), name)
        with open(os.path.join(ds, f"output_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    return list(outs)


def _qdq(out: str, name: str, op: str, x: np.ndarray, scale: np.ndarray, zp: np.ndarray | None,
         attrs: dict, opset: int, out_type: int) -> None:
    inits = [nh.from_array(scale, "s")]
    ins = ["x", "s"]
    if zp is not None:
        inits.append(nh.from_array(zp, "z"))
        ins.append("z")
    g = h.make_graph([h.make_node(op, ins, ["y"], **attrs)], name,
                     [h.make_tensor_value_info("x", nh.helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
                     [h.make_tensor_value_info("y", out_type, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    _save(os.path.join(out, name), m, x, out_types=[out_type])


def write(out: str) -> int:
    """Write every case under out; return the count."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 6)) * 50).astype(np.float32)
    x[0, :3] = [np.nan, np.inf, -np.inf]
    x[1, :3] = [2.5, -3.5, 1e9]
    cases = [
        ("q_u8", "QuantizeLinear", x, np.array(0.37, np.float32), np.array(17, np.uint8), {}, 13, TP.UINT8),
        ("q_i8_axis0", "QuantizeLinear", x, np.array([0.5, 1.3, 0.01, 7], np.float32),
         np.array([-128, 0, 5, 127], np.int8), {"axis": 0}, 13, TP.INT8),
        ("q_i8_axis1", "QuantizeLinear", x, (rng.random(6) + 0.1).astype(np.float32), np.zeros(6, np.int8),
         {"axis": 1}, 19, TP.INT8),
        ("q_e4m3", "QuantizeLinear", x, np.array(0.37, np.float32), None,
         {"output_dtype": TP.FLOAT8E4M3FN}, 21, TP.FLOAT8E4M3FN),
        ("q_e4m3_nosat", "QuantizeLinear", x, np.array(0.37, np.float32), None,
         {"output_dtype": TP.FLOAT8E4M3FN, "saturate": 0}, 21, TP.FLOAT8E4M3FN),
        ("q_u16_blocked", "QuantizeLinear", x, (rng.random((4, 2)) + 0.01).astype(np.float32),
         np.full((4, 2), 30000, np.uint16), {"axis": 1, "block_size": 3}, 21, TP.UINT16),
    ]
    xi = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    xu = rng.integers(0, 65536, (4, 6)).astype(np.uint16)
    xi32 = rng.integers(-2**30, 2**30, (4, 6)).astype(np.int32)
    cases += [
        ("dq_i8", "DequantizeLinear", xi, np.array(0.0371, np.float32), np.array(-3, np.int8), {}, 13, TP.FLOAT),
        ("dq_i8_axis1", "DequantizeLinear", xi, rng.random(6).astype(np.float32), np.arange(6).astype(np.int8),
         {"axis": 1}, 13, TP.FLOAT),
        ("dq_u16_blocked", "DequantizeLinear", xu, rng.random((2, 6)).astype(np.float32),
         np.full((2, 6), 100, np.uint16), {"axis": 0, "block_size": 2}, 21, TP.FLOAT),
        ("dq_i32", "DequantizeLinear", xi32, np.array(0.001, np.float32), None, {}, 13, TP.FLOAT),
        ("dq_u16_f16", "DequantizeLinear", xu, np.array(0.01, np.float16), np.array(7, np.uint16), {}, 21,
         TP.FLOAT16),
    ]
    for c in cases:
        _qdq(out, *c)
    n = len(cases)
    for k in range(8):
        shape = [(3, 7), (50,), (4, 4, 4), (2, 9)][k % 4]
        xd = (rng.standard_normal(shape) * [1, 30, 0.01, 1000][k % 4]).astype(np.float32)
        if k >= 4:
            xd = np.abs(xd) + 0.1 if k % 2 else -np.abs(xd) - 0.1
        g = h.make_graph([h.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], f"dyn{k}",
                         [h.make_tensor_value_info("x", TP.FLOAT, xd.shape)],
                         [h.make_tensor_value_info("y", TP.UINT8, xd.shape),
                          h.make_tensor_value_info("s", TP.FLOAT, []),
                          h.make_tensor_value_info("z", TP.UINT8, [])])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
        m.ir_version = 8
        _save(os.path.join(out, f"dynamicquantize_{k}"), m, xd)
        n += 1
    w = rng.integers(-128, 128, (8, 5)).astype(np.int8)
    nodes = [h.make_node("DequantizeLinear", ["W", "s", "zp"], ["Wf"], axis=1),
             h.make_node("MatMul", ["x", "Wf"], ["m"]), h.make_node("Add", ["m", "b"], ["a"]),
             h.make_node("Relu", ["a"], ["y"])]
    g = h.make_graph(nodes, "qdq", [h.make_tensor_value_info("x", TP.FLOAT, [3, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3, 5])],
                     [nh.from_array(w, "W"), nh.from_array((rng.random(5) * 0.05).astype(np.float32), "s"),
                      nh.from_array(rng.integers(-5, 5, 5).astype(np.int8), "zp"),
                      nh.from_array(rng.standard_normal(5).astype(np.float32), "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    xm = rng.standard_normal((3, 8)).astype(np.float32)
    d = os.path.join(out, "qdq_matmul")
    y = _save(d, m, xm)[0].copy()
    y.flat[np.argmax(np.abs(y))] *= np.float32(1 + 1e-3)
    _save(d, m, xm, k=1, outs=[y])
    return n + 1


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m onnx_node_tests.quant_ort OUT", file=sys.stderr)
        return 2
    print(f"wrote {write(args[0])} cases to {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
