"""Export the zoo to ONNX, record both runtimes' outputs and run tlcheck compare, grad and certify.

For every model of zoo.ZOO, every exporter asked for (``torchscript``:
``torch.onnx.export(dynamo=False)``; ``dynamo``: ``dynamo=True``; ``auto``:
the exporter of the model's zoo entry), every opset (``default``: 17, and 18
for the dynamo exporter; ``newest``: the newest the installed torch's
exporter supports, extras.newest_opset) and every dtype (``float32``;
``float64``: ``model.double()``) it writes, under the output directory,
``NAME-EXPORTER-opsetN[-float64]/model.onnx`` and two data sets:
``test_data_set_0`` with ONNX Runtime's outputs (graph optimisations off,
so that the runtime evaluates the exported formulas; absent for a float64
graph ONNX Runtime has no DOUBLE kernel for) and ``test_data_set_1`` with
PyTorch's own eager outputs on the same inputs. It runs ``tlcheck compare
--json`` on each and records the verdict counts (holds / fails /
undecided) per runtime, then ``tlcheck grad`` and ``tlcheck certify`` on
the model (extras.py).

The planted fault: output 0's largest element of the first data set
multiplied by 1 + 10⁻³ (float32) or 1 + 10⁻⁹ (float64: compare's binary64
bound) must make compare FAIL (exit 1). When that element is undecided,
every element is multiplied instead, and at least one decided element must
then FAIL. ``--sensitivity`` also finds the smallest power of ten caught.

Exit status 1 when a correct output FAILS (a false FAIL is a defect; ONNX
Runtime's output FAILING is a finding, not an error, only where a probe
run without tlcheck confirms a runtime defect for the graph, and PyTorch's
only where a probe confirms an eager/export disagreement and the model
rerun with the graph's semantics has no FAILS: defects.py), when a
planted fault is missed on a decided element, when a model whose zoo
entry says ``decides`` does not import and hold everywhere, or when grad or
certify does not run (exit 0 or 1) on a model of GRAD_CERTIFY_GUARD. A
refusal at export or import, a time-out and undecided elements are
findings: reported (``--table`` writes them as a Markdown table), not errors.

The torchvision models are slow (zoo.Spec.slow) and run only when named in
``--models`` or with ``TLCHECK_ZOO_ALL=1``. CI's default run tries the
newest opset and float64 on CHEAP_VARIANTS only; ``TLCHECK_ZOO_MATRIX=1``
makes the defaults the full matrix (both exporters × default and newest
opset × float32 and float64, grad and certify on every model).
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

from tlcheck_models import defects, extras
from tlcheck_models.extras import Check
from tlcheck_models.zoo import ZOO, Spec, build

ORT_SET = "test_data_set_0"  # ONNX Runtime's outputs
TORCH_SET = "test_data_set_1"  # PyTorch's eager outputs

# The models on which grad and certify ran (exit 0 or 1) in the full matrix
# of docs/models.md ("zoo30"): a refusal or crash of either there is an
# error of the run (a regression), elsewhere a finding; a time-out (the
# machine's load) is a finding everywhere.
GRAD_CERTIFY_GUARD = frozenset({"resnet", "gpt2-1layer", "gpt2", "mlp", "unet", "bert", "vit", "llama"})
# CI's default run (no TLCHECK_ZOO_MATRIX): the models that also get the
# newest opset (both exporters) and float64, and the ones certify skips for
# CI's time (resnet's exact rational composition over its convolutions
# took 135 s on the loaded 2-core machine).
CHEAP_VARIANTS = ("mlp",)
CI_NO_CERTIFY = ("resnet",)


@dataclass(frozen=True)
class Variant:
    """One export of a model: the exporter, the opset and the dtype."""

    exporter: str
    opset: int
    dtype: str = "float32"

    @property
    def tag(self) -> str:
        return f"{self.exporter}-opset{self.opset}" + ("" if self.dtype == "float32" else f"-{self.dtype}")


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
    """The result of one model and variant."""

    name: str  # MODEL-EXPORTER-opsetN
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
    dtype: str = "float32"
    checks: tuple[Check, ...] = ()  # grad and certify (extras.Check)
    guard: bool = False  # grad and certify must run (GRAD_CERTIFY_GUARD)
    note: str = ""  # e.g. why ONNX Runtime's float64 set is missing
    primary: bool = True  # the model's own exporter at the default opset in float32: where decides applies
    defect: str = ""  # the runtime defects or export disagreements, confirmed by probes (defects.py), that explain the FAILS
    defect_runtimes: tuple[str, ...] = ()  # the runtimes whose FAILS defect explains


    @property
    def ok(self) -> bool:
        if (self.verdict == "FAILS" and not self.defect) or self.planted == "MISSED":
            return False
        if self.guard and self.verdict not in ("export failed", "refused") and any(c.broken for c in self.checks):
            return False
        if not self.decides or not self.primary:
            return True
        return self.verdict == "holds" and self.planted_caught


@dataclass(frozen=True)
class Exported:
    """An exported case: its directory, the data sets written (runtime, set) and why ONNX Runtime's is missing."""

    case: str
    sets: tuple[tuple[str, str], ...]
    ort_missing: str = ""


def _line(s: str) -> str:
    s = s.strip()
    return s.splitlines()[0][:300] if s else ""


def _graph_inputs(m: onnx.ModelProto) -> list[str]:
    inits = {t.name for t in m.graph.initializer}
    return [v.name for v in m.graph.input if v.name not in inits]


def export(spec: Spec, v: Variant, seed: int, out_dir: str) -> Exported:
    """Export one model; write its data sets with ONNX Runtime's and PyTorch's outputs.

    A float64 graph ONNX Runtime cannot run (no DOUBLE kernel) gets
    PyTorch's data set only, and ort_missing says why."""
    model, inputs = extras.to_dtype(*build(spec, seed), v.dtype)
    case = os.path.join(out_dir, f"{spec.name}-{v.tag}")
    path = os.path.join(case, "model.onnx")
    names = [f"input_{i}" for i in range(len(inputs))]
    os.makedirs(case, exist_ok=True)
    with torch.no_grad():
        if v.exporter == "torchscript":
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"], opset_version=v.opset,
                              dynamo=False, do_constant_folding=True)
        else:
            # The dynamo exporter's own opsets start at 18 (it converts down
            # with bugs: a Split it writes at 17 does not load).
            torch.onnx.export(model, inputs, path, input_names=names, output_names=["output"],
                              opset_version=max(v.opset, 18), dynamo=True, external_data=False)
        eager = model(*inputs)
    m = onnx.load(path)
    in_names = _graph_inputs(m)
    feed = {n: t.numpy() for n, t in zip(in_names, inputs)}
    ours = eager if isinstance(eager, (tuple, list)) else (eager,)
    runs: list[tuple[str, str, list[np.ndarray]]] = []
    missing = ""
    try:
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        runs.append(("onnxruntime", ORT_SET, sess.run(None, feed)))
    except Exception as e:  # float32 must run; float64 may lack a DOUBLE kernel
        if v.dtype == "float32":
            raise
        missing = f"{type(e).__name__}: {_line(str(e))}"
    runs.append(("pytorch", TORCH_SET, [t.numpy() for t in ours]))
    for _, ds, outs in runs:
        os.makedirs(os.path.join(case, ds), exist_ok=True)
        for k, n in enumerate(in_names):
            _write(os.path.join(case, ds, f"input_{k}.pb"), feed[n], n)
        for k, (g, o) in enumerate(zip(m.graph.output, outs)):
            _write(os.path.join(case, ds, f"output_{k}.pb"), o, g.name)
    return Exported(case, tuple((rt, ds) for rt, ds, _ in runs), missing)


def _write(path: str, a: np.ndarray, name: str) -> None:
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(a), name).SerializeToString())


def plant(case: str, out_dir: str, every: bool = False, rel: float = 1e-3, data: str = ORT_SET) -> tuple[str, float]:
    """A copy of case's data set with output 0's largest element (every element) times 1 + rel, in its own dtype.

    Returns the copy's directory and the largest change made."""
    src = os.path.join(case, data)
    dst = os.path.join(out_dir, f"{os.path.basename(case)}-planted{'-all' if every else ''}-{rel:.0e}")
    os.makedirs(dst, exist_ok=True)
    delta = 0.0
    for f in os.listdir(src):
        t = onnx.TensorProto()
        with open(os.path.join(src, f), "rb") as fh:
            t.ParseFromString(fh.read())
        if f == "output_0.pb":
            a = numpy_helper.to_array(t).copy()
            one = a.dtype.type
            before = a.astype(np.float64)
            flat = a.reshape(-1)
            if every:
                flat *= one(1 + rel)
            else:
                j = int(np.argmax(np.abs(flat)))
                flat[j] = flat[j] * one(1 + rel) if flat[j] != 0 else one(rel)
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
    return p.returncode, doc, _line(p.stderr or "")


def _number(x: float | str) -> float:
    """A compare document's float ("NaN", "+Inf", "-Inf" or a number)."""
    return float(x.replace("Inf", "inf")) if isinstance(x, str) else float(x)


def counts(doc: dict, output0: bool = False) -> Counts:
    """The verdict counts of a compare document (of output 0 of the first set only, with output0)."""
    d = doc["sets"][0]["outputs"][0] if output0 else doc
    return Counts(int(d["holds"]), int(d["fails"]), int(d["inconclusive"]))


def planted(tlcheck: str, case: str, out_dir: str, first: Counts, bound: float, timeout: float,
            rel: float = 1e-3, data: str = ORT_SET) -> str:
    """Whether the planted fault (relative rel) is caught, given output 0's counts and largest bound on data.

    A fault no larger than the bound is within what compare may accept: a
    miss then is a finding (the bound is loose there), not an error."""
    if first.holds == 0:
        return "n/a"  # nothing decided: nothing to catch
    d, delta = plant(case, out_dir, rel=rel, data=data)
    rc, _, _ = compare(tlcheck, case, d, timeout)
    if rc == 1:
        return "caught"
    if rc == -1:  # the machine's load, not a miss
        return f"not tried: compare timed out after {timeout:.0f} s"
    if first.undecided:
        # The largest element may be an undecided one: plant every element.
        d, delta = plant(case, out_dir, every=True, rel=rel, data=data)
        rc, doc, _ = compare(tlcheck, case, d, timeout)
        if rc == 1 and doc is not None:
            return f"caught (all planted: {counts(doc, True).fails} of {first.holds} decided)"
    if delta <= bound:
        return f"not caught: the fault {delta:.3g} is within the bound {bound:.3g}"
    return "MISSED"


def smallest_caught(tlcheck: str, case: str, out_dir: str, timeout: float, data: str,
                    exponents: Sequence[int]) -> int | None:
    """The largest k of exponents (tried in increasing order) whose planted fault 10⁻ᵏ on the largest element is caught.

    Stops at the first k not caught; None when the first is not caught."""
    best = None
    for k in exponents:
        d, _ = plant(case, out_dir, rel=10.0 ** -k, data=data)
        if compare(tlcheck, case, d, timeout)[0] != 1:
            break
        best = k
    return best


def _checks(tlcheck: str, spec: Spec, v: Variant, seed: int, e: Exported, out_dir: str, timeout: float,
            certify: bool) -> tuple[Check, ...]:
    """grad (beside PyTorch's autograd gradients) and, when asked, certify on the exported model."""
    model_path = os.path.join(e.case, "model.onnx")
    data = os.path.join(e.case, e.sets[0][1])
    t0 = time.monotonic()
    try:
        ours = extras.torch_grads(*extras.to_dtype(*build(spec, seed), v.dtype))
    except Exception:  # PyTorch's own gradient is only a plausibility figure
        ours = {}
    g = extras.run_grad(tlcheck, model_path, data, ours, timeout, extras.grad_tolerance(v.dtype))
    out = [Check(g.command, g.rc, g.detail, time.monotonic() - t0)]
    if certify:
        t1 = time.monotonic()
        cert = os.path.join(out_dir, os.path.basename(e.case) + "-certificates")
        c = extras.run_certify(tlcheck, model_path, data, cert, timeout)
        extras.remove(cert)
        out.append(Check(c.command, c.rc, c.detail, time.monotonic() - t1))
    return tuple(out)


def check(tlcheck: str, spec: Spec, v: Variant, seed: int, out_dir: str, timeout: float = 600,
          grad: bool = True, certify: bool = True, sensitivity: bool = False) -> Outcome:
    """Export, compare on every data set, plant the fault, and run grad and certify: one table row."""
    name = f"{spec.name}-{v.exporter}-opset{v.opset}"
    t0 = time.monotonic()
    rel = extras.planted_relative(v.dtype)

    def outcome(verdict: str, reason: str, **kw: object) -> Outcome:
        return Outcome(name, verdict, spec.decides, seconds=time.monotonic() - t0, reason=reason[:300],
                       source=spec.source, exporter=v.exporter, dtype=v.dtype,
                       guard=spec.name in GRAD_CERTIFY_GUARD, primary=v == primary_variant(spec), **kw)  # type: ignore[arg-type]

    try:
        e = export(spec, v, seed, out_dir)
    except Exception as err:  # an exporter failure is reported, not raised
        return outcome("export failed", f"{type(err).__name__}: {_line(str(err))}", elements=0, decided=0,
                       planted_caught=False)
    note = f"ONNX Runtime: {e.ort_missing}" if e.ort_missing else ""
    checks = _checks(tlcheck, spec, v, seed, e, out_dir, timeout, certify) if grad else ()
    runtimes: list[tuple[str, Counts]] = []
    reason = ""
    first, bound = Counts(), 0.0
    for runtime, ds in e.sets:
        rc, doc, err = compare(tlcheck, e.case, os.path.join(e.case, ds), timeout)
        if rc == -1 or rc == 2 or doc is None:
            return outcome("timeout" if rc == -1 else "refused", err, elements=0, decided=0, planted_caught=False,
                           checks=checks, note=note)
        runtimes.append((runtime, counts(doc)))
        if not runtimes[1:]:
            first, bound = counts(doc, True), _number(doc["sets"][0]["outputs"][0].get("bound", 0))
        if doc["fails"]:
            reason = reason or f"{runtime}: {err}"
    total = Counts(*(sum(getattr(c, f) for _, c in runtimes) for f in ("holds", "fails", "undecided")))
    verdict = "FAILS" if total.fails else ("inconclusive" if total.undecided else "holds")
    defect, explained = "", ()
    failing = [rt for rt, c in runtimes if c.fails]
    if failing:
        # A runtime's FAILS are a finding, not an error, only when a probe
        # run without tlcheck's bound explains them (defects.py): for ONNX
        # Runtime an operator defect, for PyTorch an eager/export
        # disagreement whose graph-semantics rerun has no FAILS. Every
        # failing runtime must be explained.
        graph = onnx.load(os.path.join(e.case, "model.onnx"))
        found: list[str] = []
        done: list[str] = []
        for rt in failing:
            msgs = (defects.runtime_defects(graph, v.dtype) if rt == "onnxruntime"
                    else [export_disagreement(tlcheck, spec, v, seed, e, graph, out_dir, timeout)])
            msgs = [m for m in msgs if m]
            if msgs:
                found += msgs
                done.append(rt)
        if len(done) == len(failing):
            defect, explained = "; ".join(found), tuple(done)
    p = planted(tlcheck, e.case, out_dir, first, bound, timeout, rel, e.sets[0][1])
    if p.startswith("caught") and rel != 1e-3:
        p = f"{p} at {rel:.0e}"
    if sensitivity and p.startswith("caught"):
        start = round(-np.log10(rel))
        k = smallest_caught(tlcheck, e.case, out_dir, timeout, e.sets[0][1], range(start, start + 12))
        p += f"; smallest caught 1e-{k}" if k is not None else ""
    return outcome(verdict, reason, elements=total.elements, decided=total.holds + total.fails,
                   planted_caught=p.startswith("caught"), runtimes=tuple(runtimes), planted=p, checks=checks,
                   note="; ".join(x for x in (note, defect) if x), defect=defect, defect_runtimes=explained)


def export_disagreement(tlcheck: str, spec: Spec, v: Variant, seed: int, e: Exported, graph: onnx.ModelProto,
                        out_dir: str, timeout: float) -> str:
    """The probe's finding (defects.probe_softmax_export) on PyTorch's recorded outputs, when the model
    rerun eagerly with the graph's semantics has no FAILS under tlcheck compare; "" otherwise."""
    sets = dict(e.sets)
    if "pytorch" not in sets:
        return ""
    src = os.path.join(e.case, sets["pytorch"])
    outs = sorted(f for f in os.listdir(src) if f.startswith("output_"))
    recorded = [numpy_helper.to_array(_read(os.path.join(src, f))) for f in outs]
    model, inputs = extras.to_dtype(*build(spec, seed), v.dtype)

    def eager() -> list[np.ndarray]:
        with torch.no_grad():
            y = model(*inputs)
        return [t.numpy() for t in (y if isinstance(y, (tuple, list)) else (y,))]

    msg, rerun = defects.probe_softmax_export(graph, eager, recorded)
    if not msg:
        return ""
    dst = os.path.join(out_dir, f"{os.path.basename(e.case)}-graph-semantics")
    os.makedirs(dst, exist_ok=True)
    for f in os.listdir(src):
        if f.startswith("input_"):
            with open(os.path.join(src, f), "rb") as a, open(os.path.join(dst, f), "wb") as b:
                b.write(a.read())
    for f, o in zip(outs, rerun):
        _write(os.path.join(dst, f), o, _read(os.path.join(src, f)).name)
    rc, doc, _ = compare(tlcheck, e.case, dst, timeout)
    if rc not in (0, 1) or doc is None or doc["fails"]:
        return ""
    return f"{msg}; the rerun with the graph's semantics: {counts(doc)} holds/fails/undecided under tlcheck compare"


def _read(path: str) -> onnx.TensorProto:
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def report(results: Sequence[Outcome]) -> int:
    """Prints one line per outcome; 0 when every outcome is ok, else 1."""
    for r in results:
        frac = f"{100.0 * r.decided / r.elements:.1f} %" if r.elements else "-"
        per = "; ".join(f"{rt} {c}" for rt, c in r.runtimes)
        chk = "; ".join(c.cell() for c in r.checks)
        print(f"{r.name:34s} {r.dtype:7s} {r.verdict:13s} decided {frac:>7s} of {r.elements:6d}"
              f"{' (' + per + ' holds/fails/undecided)' if per else ''}; planted fault: "
              f"{r.planted or ('caught' if r.planted_caught else 'NO')}; {r.seconds:.1f} s"
              f"{'' if r.decides else ' (finding if undecided)'}{' ' + r.reason if r.reason else ''}"
              f"{'; ' + chk if chk else ''}{'; ' + r.note if r.note else ''}"
              f"{'' if r.ok else '  <-- ERROR'}")
    return 0 if all(r.ok for r in results) else 1


def table(results: Sequence[Outcome]) -> str:
    """The outcomes as a Markdown table (docs/models.md)."""
    rows = ["| model | defined by | exported | dtype | imported by tlcheck | ONNX Runtime holds/fails/undecided "
            "| PyTorch holds/fails/undecided | planted fault | grad / certify | time |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        model, exporter, opset = r.name.rsplit("-", 2)
        exported = f"{exporter}, {opset}" if r.verdict != "export failed" else f"no ({exporter}, {opset}): {r.reason}"
        if r.verdict == "export failed":
            imported = "-"
        elif r.verdict in ("refused", "timeout"):
            imported = f"no: {r.reason}" if r.verdict == "refused" else "yes"
        else:
            imported = "yes"
        cells = dict((rt, str(c)) for rt, c in r.runtimes)
        if r.verdict == "timeout":
            cells = {"onnxruntime": "timed out"}
        ort_cell = cells.get("onnxruntime", "no DOUBLE kernel" if r.note else "-")
        pt_cell = cells.get("pytorch", "-")
        if r.defect and "onnxruntime" in (r.defect_runtimes or ("onnxruntime",)):
            ort_cell += " (a runtime defect, confirmed by defects.py's probe)"
        if r.defect and "pytorch" in r.defect_runtimes:
            pt_cell += " (an eager/export disagreement, confirmed by defects.py's probe)"
        chk = "; ".join(c.cell() for c in r.checks) or "-"
        rows.append(f"| {model} | {r.source} | {exported.replace('|', '/')} | {r.dtype} | {imported.replace('|', '/')} "
                    f"| {ort_cell} | {pt_cell} | {r.planted or '-'} | {chk.replace('|', '/')} "
                    f"| {r.seconds:.0f} s |")
    return "\n".join(rows) + "\n"


def primary_variant(spec: Spec) -> Variant:
    """The variant CI has always run: the model's own exporter at the default opset, float32."""
    return Variant(spec.exporter, extras.opset_for(spec.exporter, "default"))


def _split(s: str) -> list[str]:
    return [x for x in s.split(",") if x]


def variants(spec: Spec, exporters: Sequence[str], opsets: Sequence[str], dtypes: Sequence[str]) -> list[Variant]:
    """The variants of one model: exporters × opsets × dtypes, each opset word resolved, duplicates dropped."""
    out: list[Variant] = []
    for x in exporters:
        e = spec.exporter if x == "auto" else x
        for o in opsets:
            for d in dtypes:
                v = Variant(e, extras.opset_for(e, o), d)
                if v not in out:
                    out.append(v)
    return out


def plan(models: Sequence[str], exporters: Sequence[str], opsets: Sequence[str], dtypes: Sequence[str],
         cheap: Sequence[str]) -> list[tuple[Spec, Variant]]:
    """Every (model, variant) to run: the asked matrix, and on the cheap models also
    both exporters at the newest opset (float32) and the model's own exporter in float64."""
    want = set(models)
    out: list[tuple[Spec, Variant]] = []
    for s in ZOO:
        if s.name not in want:
            continue
        vs = variants(s, exporters, opsets, dtypes)
        if s.name in cheap:
            more = variants(s, ("torchscript", "dynamo"), ("newest",), ("float32",))
            more += variants(s, ("auto",), ("default",), ("float64",))
            vs += [v for v in more if v not in vs]
        out += [(s, v) for v in vs]
    return out


DTYPES = ("float32", "float64")
EXPORTERS = ("torchscript", "dynamo", "auto")


def bad_argument(models: str, exporters: str, opsets: str, dtypes: str) -> str:
    """One line naming the first --models, --exporters, --opsets or --dtypes entry the run cannot do, or ""."""
    names = [s.name for s in ZOO]
    for flag, given, known in (("--models", models, names), ("--exporters", exporters, EXPORTERS),
                               ("--dtypes", dtypes, DTYPES)):
        for w in _split(given):
            if w not in known:
                return f"{flag}: unknown entry {w!r} (known: {', '.join(known)})"
    for w in _split(opsets):
        if w not in ("default", "newest") and not (w.isdigit() and 7 <= int(w) <= 99):
            return f"--opsets: entry {w!r} is neither default, newest nor an opset number"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    every = os.environ.get("TLCHECK_ZOO_ALL") == "1"
    matrix = os.environ.get("TLCHECK_ZOO_MATRIX") == "1"
    p.add_argument("--tlcheck", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--opsets", default="default,newest" if matrix else "default",
                   help="comma-separated: default (17; 18 for dynamo), newest (torch's newest for the exporter), or numbers")
    p.add_argument("--opset", dest="opsets", help="the same as --opsets (one opset)")
    p.add_argument("--exporters", default="torchscript,dynamo" if matrix else "auto",
                   help="comma-separated: torchscript, dynamo, auto (each model's own, zoo.Spec.exporter)")
    p.add_argument("--dtypes", default="float32,float64" if matrix else "float32",
                   help="comma-separated: float32, float64 (model.double())")
    p.add_argument("--cheap", default="" if matrix else ",".join(CHEAP_VARIANTS),
                   help="models that also get both exporters at the newest opset and float64 (CI's default: %(default)s)")
    p.add_argument("--no-grad", action="store_true", help="skip tlcheck grad and certify")
    p.add_argument("--no-certify", default="" if matrix else ",".join(CI_NO_CERTIFY),
                   help="models certify skips (CI's time; default %(default)s)")
    p.add_argument("--sensitivity", action="store_true",
                   help="also find the smallest planted fault (a power of ten) caught")
    p.add_argument("--models", default=",".join(s.name for s in ZOO if every or not s.slow),
                   help="comma-separated zoo names (default: all but the slow ones; all with TLCHECK_ZOO_ALL=1)")
    p.add_argument("--timeout", type=float, default=600, help="seconds for one tlcheck compare, grad or certify")
    p.add_argument("--table", help="also write the outcomes as a Markdown table to this file")
    p.add_argument("out")
    a = p.parse_args(argv)
    bad = bad_argument(a.models, a.exporters, a.opsets, a.dtypes)
    if bad:
        print(f"tlcheck_models.run: {bad}", file=sys.stderr)
        return 2
    skip = set(_split(a.no_certify))
    todo = plan(_split(a.models), _split(a.exporters), _split(a.opsets), _split(a.dtypes), _split(a.cheap))
    res = []
    for s, v in todo:
        r = check(a.tlcheck, s, v, a.seed, a.out, a.timeout, grad=not a.no_grad, certify=s.name not in skip,
                  sensitivity=a.sensitivity)
        res.append(r)
        print(f"done {r.name} {r.dtype} {r.verdict} {r.seconds:.0f} s", file=sys.stderr, flush=True)
        if a.table:  # rewritten after every row: a long run's table so far is readable
            with open(a.table, "w", encoding="utf-8") as f:
                f.write(table(res))
    return report(res)


if __name__ == "__main__":
    sys.exit(main())
