"""Run ``tlcheck compare`` on written ONNX node test cases and report.

Each case directory (model.onnx + test_data_set_N/) gets one run of
``tlcheck compare --json``; the result is one of

* ``holds``        every recorded output element holds within the bound;
* ``inconclusive`` none fails, some element is undecided (reported, not a failure);
* ``FAILS``        some element is provably outside the bound: for the ONNX
                   suite's own reference outputs this is a false verdict of
                   tlcheck or a disagreement with the operator specification,
                   and it fails the run;
* ``FAILS (known)`` a FAILS on a case listed in KNOWN_INEXACT_REFERENCE, whose
                   recorded output the suite writes by hand with few digits, so
                   that no evaluation gives it: the verdict is true and is listed,
                   but does not fail the run;
* ``refused``      tlcheck did not take the case (exit 2: an op or dtype it
                   does not import, a data-dependent op, …), with its one-line reason.

The report lists the counts, the pass rate over the cases whose graph uses an op
of ISSUE_OPS (the ops the "real models" issue names), and every case that is not
``holds`` with its reason. The exit status is 1 when any case FAILS, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ISSUE_OPS = frozenset({
    "LayerNormalization", "Erf", "Where", "Equal", "Less", "Not", "Range", "Trilu", "CumSum",
    "RMSNormalization", "RotaryEmbedding", "Attention", "Gelu", "Einsum", "GroupNormalization",
    "Resize", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceLogSumExp", "ArgMax",
    "TopK", "GlobalMaxPool", "HardSwish", "Mod", "Floor", "IsNaN", "ScatterND", "Hardmax",
})


# Cases whose expected outputs the ONNX suite writes by hand, rounded: a FAILS
# there is a true statement about the recorded value, not a false verdict.
KNOWN_INEXACT_REFERENCE = {
    "test_averagepool_2d_ceil_last_window_starts_on_pad":
        "the expected output is written with 4 decimals (0.1511 for the window mean 1.3595/9 = 0.151055…)",
}


@dataclass(frozen=True)
class Result:
    """The outcome of one case."""

    name: str
    status: str  # holds, inconclusive, FAILS, refused
    reason: str
    ops: frozenset[str]


Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(cmd: Sequence[str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=600, check=False)


def model_ops(path: str) -> frozenset[str]:
    """The op types of a model's graph (empty when it cannot be read)."""
    try:
        import onnx

        m = onnx.load(path, load_external_data=False)
    except Exception:  # a model the Python reader refuses is still given to tlcheck
        return frozenset()
    return frozenset(n.op_type for n in m.graph.node)


def classify(name: str, proc: "subprocess.CompletedProcess[str]", ops: frozenset[str]) -> Result:
    """Classify one tlcheck compare --json run by its exit status and document."""
    err = (proc.stderr or "").strip().splitlines()
    first = err[0] if err else ""
    if proc.returncode == 2:
        return Result(name, "refused", first or "exit 2", ops)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        return Result(name, "refused", f"exit {proc.returncode}, no JSON document: {first}", ops)
    fails, inconc = int(doc.get("fails", 0)), int(doc.get("inconclusive", 0))
    if proc.returncode == 1 or fails > 0:
        if name in KNOWN_INEXACT_REFERENCE:
            return Result(name, "FAILS (known)", KNOWN_INEXACT_REFERENCE[name], ops)
        return Result(name, "FAILS", f"{fails} element(s) outside the bound", ops)
    if proc.returncode != 0:
        return Result(name, "refused", f"exit {proc.returncode}: {first}", ops)
    if inconc > 0:
        return Result(name, "inconclusive", f"{inconc} element(s) undecided", ops)
    return Result(name, "holds", "", ops)


def run_all(tlcheck: str, root: str, runner: Runner = _run) -> list[Result]:
    """Run tlcheck compare on every case directory under root, in name order."""
    out = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        model = os.path.join(d, "model.onnx")
        if not os.path.isfile(model):
            continue
        proc = runner([tlcheck, "compare", "--json", "--onnx", model, "--data", d])
        out.append(classify(name, proc, model_ops(model)))
    return out


def report(results: Sequence[Result], out: Callable[[str], None] = print) -> int:
    """Print the counts and every case that is not holds; return the exit status."""
    by: dict[str, int] = {}
    for r in results:
        by[r.status] = by.get(r.status, 0) + 1
    issue = [r for r in results if r.ops & ISSUE_OPS]
    issue_pass = sum(1 for r in issue if r.status == "holds")
    imported = sum(1 for r in results if r.status != "refused")
    out(f"node tests: {len(results)}; imported {imported}; holds {by.get('holds', 0)}; "
        f"inconclusive {by.get('inconclusive', 0)}; FAILS {by.get('FAILS', 0)}; "
        f"FAILS on hand-rounded references {by.get('FAILS (known)', 0)}; refused {by.get('refused', 0)}")
    if issue:
        out(f"node tests using the issue's ops: {len(issue)}; holds {issue_pass} "
            f"({100.0 * issue_pass / len(issue):.1f} %)")
    for r in results:
        if r.status != "holds":
            out(f"{r.status:13s} {r.name}: {r.reason}")
    return 1 if by.get("FAILS", 0) else 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tlcheck", required=True, help="the tlcheck binary")
    p.add_argument("root", help="the directory export wrote")
    a = p.parse_args(argv)
    return report(run_all(a.tlcheck, a.root))


if __name__ == "__main__":
    sys.exit(main())
