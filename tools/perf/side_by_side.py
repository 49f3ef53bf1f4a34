#!/usr/bin/env python3
"""ONNX Runtime's float32 forward against ``tlcheck compare``, side by side.

For each seeded model built in the tree (torchvision's ``resnet18``,
``resnet50``, ``squeezenet1_0``, ``alexnet``, ``vgg19``, ``densenet121`` or
``googlenet`` (Inception v1, without its training-only auxiliary heads) with ``weights=None`` after
``torch.manual_seed(seed)``: no weights are downloaded), exported to ONNX
(opset 17) with a seeded N(0, 1) input of ``[1, 3, size, size]``, the runner

1. records ONNX Runtime's float32 output (CPU execution provider, 2 intra-op
   threads) as the data set ``input_0.pb``/``output_0.pb`` that compare
   judges;
2. times, interleaved, ``runs`` ONNX Runtime forwards (one ``run`` of a
   warmed session each) and ``runs`` ``tlcheck compare --json --stats``
   processes (wall clock, the process started and ended), on the same model
   and input, and the CPU time (user + sys) of each: the runner's own
   process CPU time across the forward (ONNX Runtime's threads included),
   and the finished child's (``RUSAGE_CHILDREN``) for compare;
3. prints one Markdown row per model: min and median of each, the ratios of
   the medians and of the minima, the CPU times' minima and medians and the
   ratio of their medians, compare's peak RSS (its ``--stats``) and its
   verdict counts. On a shared machine the wall clock swings with the other
   processes' load; CPU time much less.

Run (in the engines venv, ``TLCHECK_ENGINES_VENV``)::

    go build -o /tmp/tlcheck ./cmd/tlcheck
    python tools/perf/side_by_side.py --tlcheck /tmp/tlcheck --size 64 \
        --model squeezenet --model resnet18 --runs 3

Extra ``--arg`` values are passed to compare (limits such as
``--arg=--max-rat-work=1e12``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

MODELS = ("resnet18", "resnet50", "squeezenet", "alexnet", "vgg19", "densenet121", "googlenet")


@dataclass
class Row:
    """One model's measurements (seconds, bytes)."""

    model: str
    size: int
    ort: list[float]
    tlcheck: list[float]
    rss: int
    verdict: str
    ort_cpu: list[float]
    tlcheck_cpu: list[float]

    def cells(self) -> list[str]:
        om, od = min(self.ort), statistics.median(self.ort)
        tm, td = min(self.tlcheck), statistics.median(self.tlcheck)
        ocm, ocd = min(self.ort_cpu), statistics.median(self.ort_cpu)
        tcm, tcd = min(self.tlcheck_cpu), statistics.median(self.tlcheck_cpu)
        return [
            f"{self.model} 1×3×{self.size}×{self.size}",
            f"{om * 1e3:.1f} / {od * 1e3:.1f} ms",
            f"{tm:.2f} / {td:.2f} s",
            f"{td / od:.0f}× / {tm / om:.0f}×",
            f"{ocm * 1e3:.1f} / {ocd * 1e3:.1f} ms",
            f"{tcm:.2f} / {tcd:.2f} s",
            f"{tcd / ocd:.0f}×",
            f"{self.rss / 2**20:.0f} MiB",
            self.verdict,
        ]


HEADER = ["model", "ORT float32 min / median", "compare min / median",
          "ratio (medians / minima)", "ORT CPU min / median", "compare CPU min / median",
          "CPU ratio (medians)", "compare peak RSS", "verdict (holds/fails/inconclusive)"]


def table(rows: list[Row]) -> str:
    """The Markdown table of rows."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


def build(name: str, size: int, seed: int, out: str):
    """Exports the seeded model to out/model.onnx; returns its path and the
    seeded input."""
    import torch
    import torchvision

    ctor = {"resnet18": torchvision.models.resnet18,
            "resnet50": torchvision.models.resnet50,
            "squeezenet": torchvision.models.squeezenet1_0,
            "alexnet": torchvision.models.alexnet,
            "vgg19": torchvision.models.vgg19,
            "densenet121": torchvision.models.densenet121,
            "googlenet": torchvision.models.googlenet}[name]
    torch.manual_seed(seed)
    # googlenet's auxiliary classifiers are training-only; without weights
    # torchvision builds them unless told not to (init_weights keeps the
    # seeded initialisation deterministic).
    kw = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    m = ctor(weights=None, **kw).eval()
    x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(seed))
    path = os.path.join(out, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(m, (x,), path, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamo=False)
    return path, x.numpy()


def session(path: str):
    """An ONNX Runtime session on the CPU execution provider, 2 threads."""
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads = 2
    o.inter_op_num_threads = 1
    return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])


def record(sess, x, data: str) -> None:
    """Writes input_0.pb and ONNX Runtime's output_0.pb into data."""
    from onnx import numpy_helper

    os.makedirs(data, exist_ok=True)
    (y,) = sess.run(None, {"x": x})
    for name, arr, pb in (("x", x, "input_0.pb"), ("y", y, "output_0.pb")):
        t = numpy_helper.from_array(arr, name)
        with open(os.path.join(data, pb), "wb") as f:
            f.write(t.SerializeToString())


def verdict(doc: dict) -> str:
    """A short summary of compare's --json document: its verdict and the
    elements that hold, fail and are inconclusive."""
    counts = "/".join(str(doc.get(k, "?")) for k in ("holds", "fails", "inconclusive"))
    return f"{doc.get('verdict', '?')} ({counts})"


def measure(args, name: str, work: str) -> Row:
    path, x = build(name, args.size, args.seed, work)
    sess = session(path)
    data = os.path.join(work, "data")
    record(sess, x, data)
    sess.run(None, {"x": x})  # warm
    cmd = [args.tlcheck, "compare", "--onnx", path, "--data", data, "--json", "--stats", *args.arg]
    ort_t, tl_t, ort_c, tl_c, rss, doc = [], [], [], [], 0, {}
    for _ in range(args.runs):
        c0, t0 = time.process_time(), time.perf_counter()
        sess.run(None, {"x": x})
        ort_t.append(time.perf_counter() - t0)
        ort_c.append(time.process_time() - c0)
        c0, t0 = children_cpu(), time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        tl_t.append(time.perf_counter() - t0)
        tl_c.append(children_cpu() - c0)
        if p.returncode not in (0, 1):
            sys.exit(f"{name}: tlcheck compare exited {p.returncode}: {p.stderr.strip()}")
        doc = json.loads(p.stdout)
        rss = max(rss, int((doc.get("stats") or {}).get("peak_rss_bytes", 0)))
    return Row(name, args.size, ort_t, tl_t, rss, verdict(doc), ort_c, tl_c)


def children_cpu() -> float:
    """The user + sys seconds of this process's finished children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tlcheck", required=True, help="the tlcheck binary")
    ap.add_argument("--model", action="append", choices=MODELS)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--arg", action="append", default=[], help="an extra compare flag")
    ap.add_argument("--keep", help="a directory that keeps each model and its data set "
                    "(DIR/NAME-SIZE/model.onnx, .../data), for BenchmarkRecordedDir")
    args = ap.parse_args()
    if args.runs < 3:
        sys.exit("--runs must be at least 3")
    rows = []
    for name in args.model or ["squeezenet"]:
        if args.keep:
            work = os.path.join(args.keep, f"{name}-{args.size}")
            os.makedirs(work, exist_ok=True)
            rows.append(measure(args, name, work))
            continue
        with tempfile.TemporaryDirectory(prefix="tlcheck-perf-") as work:
            rows.append(measure(args, name, work))
    print(table(rows))


if __name__ == "__main__":
    main()
