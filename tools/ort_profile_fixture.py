#!/usr/bin/env python3
"""Record ONNX Runtime's CPU outputs of Sigmoid, Tanh, Exp and Erf on a grid
of float32 inputs, for fpbound's runtime profiles (docs/fpbound-profiles.md).

    $HOME/.cache/tlcheck-engines-venv/bin/python tools/ort_profile_fixture.py \
        > fpbound/testdata/ort_cpu_elementary.txt

Each data line is "op input output", both float32 bit patterns in hex, so the
file is exact. The grid is fixed, ORT runs on one thread, and the output is
byte for byte the same on every run on the same machine (MLAS picks its kernel
by the CPU's instruction set: SSE2, FMA3 or AVX-512 — the header records the
ORT version; fpbound's test checks every line against the profile's bound).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

# op -> (lo, hi, points) of the uniform grid, plus hand-picked points.
GRIDS = {
    "Sigmoid": (-30.0, 30.0, 241, [-100.0, -20.0, -18.0, -17.5, -3.5, -1e-3, 0.0, 1e-3, 3.5, 18.0, 20.0, 100.0]),
    "Tanh": (-12.0, 12.0, 241, [-100.0, -9.0, -8.5, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 8.5, 9.0, 100.0]),
    "Exp": (-80.0, 80.0, 241, [-100.0, -87.0, -1e-3, 0.0, 1e-3, 1.0, 88.0]),
    "Erf": (-6.0, 6.0, 241, [-1e-3, -1e-6, 0.0, 1e-6, 1e-3, 3.9, 4.0]),
}


def run(op, xs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(xs)])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(xs)])
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op.lower(), [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {"x": xs})[0]


def main():
    out = sys.stdout
    out.write("# ONNX Runtime %s CPUExecutionProvider, float32: op input output (bit patterns)\n" % ort.__version__)
    out.write("# written by tools/ort_profile_fixture.py; do not edit\n")
    for op, (lo, hi, n, extra) in GRIDS.items():
        grid = np.linspace(lo, hi, n, dtype=np.float64).astype(np.float32)
        xs = np.unique(np.concatenate([grid, np.array(extra, dtype=np.float32)]))
        ys = run(op, xs)
        for a, b in zip(xs.view(np.uint32), ys.astype(np.float32).view(np.uint32)):
            out.write("%s 0x%08x 0x%08x\n" % (op.lower(), int(a), int(b)))


if __name__ == "__main__":
    main()
