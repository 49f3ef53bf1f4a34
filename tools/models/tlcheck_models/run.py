"""Export the zoo to ONNX, record ONNX Runtime's outputs and run tlcheck compare.

For every model of zoo.ZOO and every exporter asked for (``torchscript``:
``torch.onnx.export(dynamo=False)``; ``dynamo``: ``dynamo=True``) it writes,
under the output directory, ``NAME-EXPORTER/model.onnx`` and
``test_data_set_0/{input,output}_N.pb`` with ONNX Runtime's float32 outputs
(graph optimisations off, so that the runtime evaluates the exported
formulas), then runs ``tlcheck compare --json`` and records the verdict,
the decided fraction and the time. A planted fault — one output element
multiplied by 1 + 10⁻³ — must make compare FAIL (exit 1). Exit status 1
when any model does not import, FAILS, or — unless its zoo entry says
compare is not expected to decide it — does not hold or misses the
planted fault.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from tlcheck_models.zoo import ZOO, Spec, build


@dataclass(frozen=True)
class Outcome:
    """The result of one model and exporter."""

    name: str
    verdict: str  # holds, inconclusive, FAILS, refused, export failed
    decides: bool  # whether the verdict must decide (zoo.Spec.decides)
    elements: int
    decided: int
    planted_caught: bool
    seconds: float
    reason: str

    @property
    def ok(self) -> bool:
        if not self.decides:
            return self.verdict in ("holds", "inconclusive")
        return self.verdict == "holds" and self.planted_caught


def export(spec: Spec, exporter: str, opset: int, seed: int, out_dir: str) -> str:
    """Export one model; write its data set with ONNX Runtime's outputs. Returns the case directory."""
    model, inputs = build(spec, seed)
    case = os.path.join(out_dir, f"{spec.name}-{exporter}")
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    path = os.path.join(case, "model.onnx")
    names = [f"input_{i}" for i in range(len(inputs))]
    with torch.no_grad():
        if exporter == "torchscript":
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"], opset_version=opset,
                              dynamo=False, do_constant_folding=True)
        else:
            # The dynamo exporter's own opsets start at 18 (it converts down
            # with bugs: a Split it writes at 17 does not load).
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"],
                              opset_version=max(opset, 18), dynamo=True, external_data=False)
    m = onnx.load(path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
    outs = sess.run(None, feed)
    inits = {t.name for t in m.graph.initializer}
    in_names = [v.name for v in m.graph.input if v.name not in inits]
    for k, n in enumerate(in_names):
        _write(os.path.join(case, "test_data_set_0", f"input_{k}.pb"), feed[n], n)
    for k, (v, o) in enumerate(zip(m.graph.output, outs)):
        _write(os.path.join(case, "test_data_set_0", f"output_{k}.pb"), o, v.name)
    return case


def _write(path: str, a: np.ndarray, name: str) -> None:
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(a), name).SerializeToString())


def plant(case: str, out_dir: str) -> str:
    """A copy of case's data set with output 0's largest element times 1 + 10⁻³."""
    src = os.path.join(case, "test_data_set_0")
    dst = os.path.join(out_dir, os.path.basename(case) + "-planted")
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        t = onnx.TensorProto()
        with open(os.path.join(src, f), "rb") as fh:
            t.ParseFromString(fh.read())
        if f == "output_0.pb":
            a = numpy_helper.to_array(t).copy()
            flat = a.reshape(-1)
            j = int(np.argmax(np.abs(flat)))
            flat[j] = flat[j] * np.float32(1 + 1e-3) if flat[j] != 0 else np.float32(1e-3)
            t = numpy_helper.from_array(a, t.name)
        with open(os.path.join(dst, f), "wb") as fh:
            fh.write(t.SerializeToString())
    return dst


def compare(tlcheck: str, case: str, data: str) -> tuple[int, dict | None, str]:
    p = subprocess.run([tlcheck, "compare", "--json", "--onnx", os.path.join(case, "model.onnx"), "--data", data],
                       capture_output=True, text=True, timeout=600, check=False)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, (p.stderr or "").strip().splitlines()[0] if p.stderr.strip() else ""


def check(tlcheck: str, spec: Spec, exporter: str, opset: int, seed: int, out_dir: str) -> Outcome:
    name = f"{spec.name}-{exporter}-opset{opset}"
    t0 = time.monotonic()
    try:
        case = export(spec, exporter, opset, seed, out_dir)
    except Exception as e:  # an exporter failure is reported, not raised
        return Outcome(name, "export failed", spec.decides, 0, 0, False, time.monotonic() - t0, f"{type(e).__name__}: {str(e)[:200]}")
    rc, doc, err = compare(tlcheck, case, os.path.join(case, "test_data_set_0"))
    secs = time.monotonic() - t0
    if rc == 2 or doc is None:
        return Outcome(name, "refused", spec.decides, 0, 0, False, secs, err)
    holds, fails, inc = int(doc["holds"]), int(doc["fails"]), int(doc["inconclusive"])
    verdict = "FAILS" if fails else ("inconclusive" if inc else "holds")
    prc, _, _ = compare(tlcheck, case, plant(case, out_dir))
    return Outcome(name, verdict, spec.decides, holds + fails + inc, holds + fails, prc == 1, secs, err if fails else "")


def report(results: Sequence[Outcome]) -> int:
    for r in results:
        frac = f"{100.0 * r.decided / r.elements:.1f} %" if r.elements else "-"
        print(f"{r.name:34s} {r.verdict:13s} decided {frac:>7s} of {r.elements:5d}; planted fault caught: "
              f"{'yes' if r.planted_caught else 'NO'}; {r.seconds:.1f} s"
              f"{'' if r.decides else ' (not expected to decide)'} {r.reason}")
    return 0 if all(r.ok for r in results) else 1


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tlcheck", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--exporters", default="torchscript", help="comma-separated: torchscript, dynamo")
    p.add_argument("--models", default=",".join(s.name for s in ZOO))
    p.add_argument("out")
    a = p.parse_args(argv)
    want = set(a.models.split(","))
    res = [check(a.tlcheck, s, e, a.opset, a.seed, a.out) for s in ZOO if s.name in want for e in a.exporters.split(",")]
    return report(res)


if __name__ == "__main__":
    sys.exit(main())
