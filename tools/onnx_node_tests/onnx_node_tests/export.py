"""Write the ONNX backend node test cases out as model.onnx and .pb files."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper


def write_case(out_dir: str, name: str, model: onnx.ModelProto,
               data_sets: Sequence[tuple[Sequence[Any], Sequence[Any]]]) -> str:
    """Write one case: model.onnx and test_data_set_N/input_M.pb, output_M.pb.

    Inputs and outputs are numpy arrays (or TensorProtos), in the order of the
    graph's inputs (those that are not initializers) and outputs.
    """
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    inits = {t.name for t in model.graph.initializer}
    in_names = [v.name for v in model.graph.input if v.name not in inits]
    out_names = [v.name for v in model.graph.output]
    for k, (inputs, outputs) in enumerate(data_sets):
        ds = os.path.join(case_dir, f"test_data_set_{k}")
        os.makedirs(ds, exist_ok=True)
        for kind, names, values in (("input", in_names, inputs), ("output", out_names, outputs)):
            for m, v in enumerate(values):
                t = v if isinstance(v, onnx.TensorProto) else numpy_helper.from_array(
                    np.asarray(v), names[m] if m < len(names) else "")
                with open(os.path.join(ds, f"{kind}_{m}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
    return case_dir


def _copy_dir(src: str, dst: str) -> None:
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)


def export(out_dir: str, only: Iterable[str] = ()) -> int:
    """Write every node test case (or those named in only) under out_dir; return the count."""
    from onnx.backend.test.loader import load_model_tests

    wanted = set(only)
    n = 0
    for case in load_model_tests(kind="node"):
        if wanted and case.name not in wanted:
            continue
        model_dir = getattr(case, "model_dir", None)
        if model_dir and os.path.exists(os.path.join(model_dir, "model.onnx")):
            _copy_dir(model_dir, os.path.join(out_dir, case.name))
        elif getattr(case, "model", None) is not None and getattr(case, "data_sets", None):
            try:
                write_case(out_dir, case.name, case.model, case.data_sets)
            except (ValueError, TypeError, NotImplementedError) as e:  # sequences, optionals, strings
                shutil.rmtree(os.path.join(out_dir, case.name), ignore_errors=True)
                print(f"{case.name}: not written ({e.__class__.__name__}: values that are not tensors)",
                      file=sys.stderr)
                continue
        else:
            print(f"{case.name}: neither a model directory nor an in-memory model", file=sys.stderr)
            continue
        n += 1
    return n


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out", help="output directory")
    p.add_argument("names", nargs="*", help="only these cases")
    a = p.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    n = export(a.out, a.names)
    print(f"wrote {n} node test cases to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
