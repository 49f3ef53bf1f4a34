"""Export the zoo to ONNX, record both runtimes' outputs and run tlcheck compare.

For every model of zoo.ZOO and every exporter asked for (``torchscript``:
``torch.onnx.export(dynamo=False)``; ``dynamo``: ``dynamo=True``; ``auto``:
the exporter of the model's zoo entry) it writes, under the output
directory, ``NAME-EXPORTER/model.onnx`` and two data sets:
``test_data_set_0`` with ONNX Runtime's float32 outputs (graph
optimisations off, so that the runtime evaluates the exported formulas) and
``test_data_set_1`` with PyTorch's own eager float32 outputs on the same
inputs. It runs ``tlcheck compare --json`` on each and records the verdict
counts (holds / fails / undecided) per runtime.

The planted fault: output 0's largest element of ONNX Runtime's data set
multiplied by 1 + 10⁻³ must make compare FAIL (exit 1). When that element
is undecided, every element is multiplied instead, and at least one
decided element must then FAIL.

Exit status 1 when a correct output FAILS (a false FAIL is a defect), when a
planted fault is missed on a decided element, or when a model whose zoo
entry says ``decides`` does not import and hold everywhere. A refusal at
export or import, a time-out and undecided elements are findings: reported
(``--table`` writes them as a Markdown table), not errors.

The torchvision models are slow (zoo.Spec.slow) and run only when named in
``--models`` or with ``TLCHECK_ZOO_ALL=1``.
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

ORT_SET = "test_data_set_0"  # ONNX Runtime's outputs
TORCH_SET = "test_data_set_1"  # PyTorch's eager outputs


@dataclass(frozen=True)
class Counts:
    """compare's verdict counts on one recorded data set."""

    holds: int = 0
    fails: int = 0
    undecided: int = 0

    @property
    def elements(self) -> int:
        return self.holds + self.fails + self.undecided

    def __str__(self) -> str:
        return f"{self.holds}/{self.fails}/{self.undecided}"


@dataclass(frozen=True)
class Outcome:
    """The result of one model and exporter."""

    name: str
    verdict: str  # holds, inconclusive, FAILS, refused, export failed, timeout
    decides: bool  # whether the verdict must decide (zoo.Spec.decides)
    elements: int
    decided: int
    planted_caught: bool
    seconds: float
    reason: str
    runtimes: tuple[tuple[str, Counts], ...] = ()  # (runtime, counts), ONNX Runtime first
    planted: str = ""  # caught, caught (all planted), MISSED, n/a: the table's words
    source: str = "torch.nn"
    exporter: str = ""

    @property
    def ok(self) -> bool:
        if self.verdict == "FAILS" or self.planted == "MISSED":
            return False
        if not self.decides:
            return True
        return self.verdict == "holds" and self.planted_caught


def export(spec: Spec, exporter: str, opset: int, seed: int, out_dir: str) -> str:
    """Export one model; write its data sets with ONNX Runtime's and PyTorch's outputs. Returns the case directory."""
    model, inputs = build(spec, seed)
    case = os.path.join(out_dir, f"{spec.name}-{exporter}")
    path = os.path.join(case, "model.onnx")
    names = [f"input_{i}" for i in range(len(inputs))]
    os.makedirs(case, exist_ok=True)
    with torch.no_grad():
        if exporter == "torchscript":
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"], opset_version=opset,
                              dynamo=False, do_constant_folding=True)
        else:
            # The dynamo exporter's own opsets start at 18 (it converts down
            # with bugs: a Split it writes at 17 does not load).
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"],
                              opset_version=max(opset, 18), dynamo=True, external_data=False)
        eager = model(*inputs)
    m = onnx.load(path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
    ours = eager if isinstance(eager, (tuple, list)) else (eager,)
    inits = {t.name for t in m.graph.initializer}
    in_names = [v.name for v in m.graph.input if v.name not in inits]
    for ds, outs in ((ORT_SET, sess.run(None, feed)), (TORCH_SET, [t.numpy() for t in ours])):
        os.makedirs(os.path.join(case, ds), exist_ok=True)
        for k, n in enumerate(in_names):
            _write(os.path.join(case, ds, f"input_{k}.pb"), feed[n], n)
        for k, (v, o) in enumerate(zip(m.graph.output, outs)):
            _write(os.path.join(case, ds, f"output_{k}.pb"), o, v.name)
    return case


def _write(path: str, a: np.ndarray, name: str) -> None:
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(a), name).SerializeToString())


def plant(case: str, out_dir: str, every: bool = False) -> tuple[str, float]:
    """A copy of case's first data set with output 0's largest element (every element) times 1 + 10⁻³.

    Returns the copy's directory and the largest change made."""
    src = os.path.join(case, ORT_SET)
    dst = os.path.join(out_dir, os.path.basename(case) + ("-planted-all" if every else "-planted"))
    os.makedirs(dst, exist_ok=True)
    delta = 0.0
    for f in os.listdir(src):
        t = onnx.TensorProto()
        with open(os.path.join(src, f), "rb") as fh:
            t.ParseFromString(fh.read())
        if f == "output_0.pb":
            a = numpy_helper.to_array(t).copy()
            before = a.astype(np.float64)
            flat = a.reshape(-1)
            if every:
                flat *= np.float32(1 + 1e-3)
            else:
                j = int(np.argmax(np.abs(flat)))
                flat[j] = flat[j] * np.float32(1 + 1e-3) if flat[j] != 0 else np.float32(1e-3)
            delta = float(np.max(np.abs(a.astype(np.float64) - before), initial=0.0))
            t = numpy_helper.from_array(a, t.name)
        with open(os.path.join(dst, f), "wb") as fh:
            fh.write(t.SerializeToString())
    return dst, delta


def compare(tlcheck: str, case: str, data: str, timeout: float = 600) -> tuple[int, dict | None, str]:
    """Runs tlcheck compare --json; rc -1 on a time-out."""
    try:
        p = subprocess.run([tlcheck, "compare", "--json", "--onnx", os.path.join(case, "model.onnx"), "--data", data],
                           capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return -1, None, f"compare timed out after {timeout:.0f} s"
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, (p.stderr or "").strip().splitlines()[0] if p.stderr.strip() else ""


def _number(x: float | str) -> float:
    """A compare document's float ("NaN", "+Inf", "-Inf" or a number)."""
    return float(x.replace("Inf", "inf")) if isinstance(x, str) else float(x)


def counts(doc: dict, output0: bool = False) -> Counts:
    """The verdict counts of a compare document (of output 0 of the first set only, with output0)."""
    d = doc["sets"][0]["outputs"][0] if output0 else doc
    return Counts(int(d["holds"]), int(d["fails"]), int(d["inconclusive"]))


def planted(tlcheck: str, case: str, out_dir: str, first: Counts, bound: float, timeout: float) -> str:
    """Whether the planted fault is caught, given output 0's counts and largest bound on the unplanted data set.

    A fault no larger than the bound is within what compare may accept: a
    miss then is a finding (the bound is loose there), not an error."""
    if first.holds == 0:
        return "n/a"  # nothing decided: nothing to catch
    d, delta = plant(case, out_dir)
    rc, _, _ = compare(tlcheck, case, d, timeout)
    if rc == 1:
        return "caught"
    if first.undecided:
        # The largest element may be an undecided one: plant every element.
        d, delta = plant(case, out_dir, every=True)
        rc, doc, _ = compare(tlcheck, case, d, timeout)
        if rc == 1 and doc is not None:
            return f"caught (all planted: {counts(doc, True).fails} of {first.holds} decided)"
    if delta <= bound:
        return f"not caught: the fault {delta:.3g} is within the bound {bound:.3g}"
    return "MISSED"


def check(tlcheck: str, spec: Spec, exporter: str, opset: int, seed: int, out_dir: str,
          timeout: float = 600) -> Outcome:
    name = f"{spec.name}-{exporter}-opset{max(opset, 18) if exporter == 'dynamo' else opset}"
    t0 = time.monotonic()

    def outcome(verdict: str, reason: str, **kw: object) -> Outcome:
        return Outcome(name, verdict, spec.decides, seconds=time.monotonic() - t0, reason=reason[:300],
                       source=spec.source, exporter=exporter, **kw)  # type: ignore[arg-type]

    try:
        case = export(spec, exporter, opset, seed, out_dir)
    except Exception as e:  # an exporter failure is reported, not raised
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return outcome("export failed", f"{type(e).__name__}: {first}", elements=0, decided=0, planted_caught=False)
    runtimes: list[tuple[str, Counts]] = []
    reason = ""
    first, bound = Counts(), 0.0
    for runtime, ds in (("onnxruntime", ORT_SET), ("pytorch", TORCH_SET)):
        rc, doc, err = compare(tlcheck, case, os.path.join(case, ds), timeout)
        if rc == -1 or rc == 2 or doc is None:
            return outcome("timeout" if rc == -1 else "refused", err, elements=0, decided=0, planted_caught=False)
        runtimes.append((runtime, counts(doc)))
        if not runtimes[1:]:
            first, bound = counts(doc, True), _number(doc["sets"][0]["outputs"][0].get("bound", 0))
        if doc["fails"]:
            reason = reason or f"{runtime}: {err}"
    total = Counts(*(sum(getattr(c, f) for _, c in runtimes) for f in ("holds", "fails", "undecided")))
    verdict = "FAILS" if total.fails else ("inconclusive" if total.undecided else "holds")
    p = planted(tlcheck, case, out_dir, first, bound, timeout)
    return outcome(verdict, reason, elements=total.elements, decided=total.holds + total.fails,
                   planted_caught=p.startswith("caught"), runtimes=tuple(runtimes), planted=p)


def report(results: Sequence[Outcome]) -> int:
    """Prints one line per outcome; 0 when every outcome is ok, else 1."""
    for r in results:
        frac = f"{100.0 * r.decided / r.elements:.1f} %" if r.elements else "-"
        per = "; ".join(f"{rt} {c}" for rt, c in r.runtimes)
        print(f"{r.name:34s} {r.verdict:13s} decided {frac:>7s} of {r.elements:6d}"
              f"{' (' + per + ' holds/fails/undecided)' if per else ''}; planted fault: "
              f"{r.planted or ('caught' if r.planted_caught else 'NO')}; {r.seconds:.1f} s"
              f"{'' if r.decides else ' (finding if undecided)'}{' ' + r.reason if r.reason else ''}"
              f"{'' if r.ok else '  <-- ERROR'}")
    return 0 if all(r.ok for r in results) else 1


def table(results: Sequence[Outcome]) -> str:
    """The outcomes as a Markdown table (docs/models.md)."""
    rows = ["| model | defined by | exported | imported by tlcheck | ONNX Runtime holds/fails/undecided "
            "| PyTorch holds/fails/undecided | planted 10⁻³ fault | time |",
            "|---|---|---|---|---|---|---|---|"]
    for r in results:
        model, exporter, opset = r.name.rsplit("-", 2)
        exported = f"{exporter}, {opset}" if r.verdict != "export failed" else f"no ({exporter}): {r.reason}"
        if r.verdict == "export failed":
            imported = "-"
        elif r.verdict in ("refused", "timeout"):
            imported = f"no: {r.reason}" if r.verdict == "refused" else "yes"
        else:
            imported = "yes"
        cells = [str(c) for _, c in r.runtimes] or (["timed out", "-"] if r.verdict == "timeout" else ["-", "-"])
        rows.append(f"| {model} | {r.source} | {exported} | {imported.replace('|', '/')} | {cells[0]} | {cells[1]} "
                    f"| {r.planted or '-'} | {r.seconds:.0f} s |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tlcheck", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--exporters", default="auto",
                   help="comma-separated: torchscript, dynamo, auto (each model's own, zoo.Spec.exporter)")
    every = os.environ.get("TLCHECK_ZOO_ALL") == "1"
    p.add_argument("--models", default=",".join(s.name for s in ZOO if every or not s.slow),
                   help="comma-separated zoo names (default: all but the slow ones; all with TLCHECK_ZOO_ALL=1)")
    p.add_argument("--timeout", type=float, default=600, help="seconds for one tlcheck compare")
    p.add_argument("--table", help="also write the outcomes as a Markdown table to this file")
    p.add_argument("out")
    a = p.parse_args(argv)
    want = set(a.models.split(","))
    res = [check(a.tlcheck, s, e, a.opset, a.seed, a.out, a.timeout) for s in ZOO if s.name in want
           for e in dict.fromkeys(s.exporter if x == "auto" else x for x in a.exporters.split(","))]
    if a.table:
        with open(a.table, "w", encoding="utf-8") as f:
            f.write(table(res))
    return report(res)


if __name__ == "__main__":
    sys.exit(main())
