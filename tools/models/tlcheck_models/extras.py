"""The zoo's variants beyond float32 at opset 17/18: the newest opset, float64, grad and certify.

* Opsets. ``default`` is the opset the zoo has always used (17 for the
  TorchScript exporter; 18 for the dynamo one, whose own opsets start at
  18). ``newest`` is the newest opset the installed torch's exporter
  supports, read from torch's own constants (``torch.onnx._constants``:
  ``ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET`` for ``dynamo=False``,
  ``ONNX_MAX_OPSET`` for ``dynamo=True``), never a hard-coded guess.
* Float64. ``model.double()`` with its floating inputs converted too (token
  ids stay integers) and every norm's ε rounded to binary32 as the ONNX
  attribute stores it (float32_epsilons): PyTorch's float64 output and, where ONNX Runtime has
  DOUBLE kernels for every node, ONNX Runtime's. compare judges a DOUBLE
  output with the binary64 bound, so the planted fault there is 10⁻⁹
  relative (float32's 10⁻³ is far outside any binary64 bound).
* grad and certify. ``tlcheck grad --onnx --data --json`` (the gradient of
  the sum of the outputs with respect to the input and every initializer)
  and ``tlcheck certify --onnx --data --partial --json`` (the certificates
  that apply; the ones that do not are listed on stderr as "not certified").
  A run that exits 0 or 1 ran; exit 2 is a refusal, with compare's first
  stderr line. grad's gradients are also set beside PyTorch's autograd
  gradients of the same sum (initializers matched to parameters by name and
  shape): a plausibility figure, how many agree within 10⁻⁴ (float32) or
  10⁻¹⁰ (float64) of their largest element, not a verdict (PyTorch's
  gradient is rounded).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch
from torch import nn

DEFAULT_OPSET = {"torchscript": 17, "dynamo": 18}


def newest_opset(exporter: str) -> int:
    """The newest opset the installed torch's exporter supports (torch.onnx._constants)."""
    from torch.onnx import _constants

    name = "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET" if exporter == "torchscript" else "ONNX_MAX_OPSET"
    v = getattr(_constants, name, None)
    if not isinstance(v, int):
        raise RuntimeError(f"torch {torch.__version__} has no torch.onnx._constants.{name}")
    return v


def opset_for(exporter: str, word: str) -> int:
    """The opset of one ``--opsets`` entry: ``default``, ``newest`` or a number (at least 18 for dynamo)."""
    if word == "default":
        return DEFAULT_OPSET[exporter]
    if word == "newest":
        return newest_opset(exporter)
    n = int(word)
    return max(n, DEFAULT_OPSET["dynamo"]) if exporter == "dynamo" else n


def to_dtype(model: nn.Module, inputs: tuple[torch.Tensor, ...], dtype: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model and inputs in dtype (``float32``: unchanged; ``float64``: ``.double()``, integer inputs kept)."""
    if dtype == "float32":
        return model, inputs
    if dtype != "float64":
        raise ValueError(f"dtype {dtype!r}: float32 or float64")
    float32_epsilons(model)
    return model.double(), tuple(t.double() if t.is_floating_point() else t for t in inputs)


EPSILON_FIELDS = ("eps", "variance_epsilon")


def float32_epsilons(model: nn.Module) -> None:
    """Rounds every norm's epsilon (``eps``, Llama's ``variance_epsilon``) to binary32, in place.

    ONNX stores ``epsilon`` as a FLOAT attribute, so a float64 export of
    GroupNorm with ε = 10⁻⁵ states ε = 9.99999974737875·10⁻⁶: PyTorch's
    float64 output with its own ε is then not the graph's function, and a
    tight binary64 bound tells them apart (the UNet exported at opset 23
    FAILED on 21 of 512 elements before this). With ε rounded the float64
    model is the one the graph states; float32 models are unchanged (their ε
    is rounded to binary32 anyway)."""
    for mod in model.modules():
        for f in EPSILON_FIELDS:
            v = getattr(mod, f, None)
            if isinstance(v, float):
                setattr(mod, f, float(np.float32(v)))


def grad_tolerance(dtype: str) -> float:
    """How close (relative to a tensor's largest element) PyTorch's gradient is expected to be, for the report."""
    return 1e-10 if dtype == "float64" else 1e-4


def planted_relative(dtype: str) -> float:
    """The planted fault's relative size for an output of dtype."""
    return 1e-9 if dtype == "float64" else 1e-3


@dataclass(frozen=True)
class Check:
    """The result of one tlcheck grad or certify run."""

    command: str  # grad or certify
    rc: int  # exit status; -1 on a time-out
    detail: str  # certificates written, or the refusal's line, or grad's agreement with PyTorch
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        """Whether the command ran to a verdict (exit 0 or 1)."""
        return self.rc in (0, 1)

    @property
    def broken(self) -> bool:
        """Whether the command refused or crashed (not a time-out): a regression on a model where it ran."""
        return not self.ran and self.rc != -1

    def cell(self) -> str:
        if self.rc == -1:
            return f"{self.command}: timed out"
        word = {0: "ok", 1: "exit 1", 2: "refused"}.get(self.rc, f"exit {self.rc}")
        return f"{self.command} {word}" + (f" ({self.detail})" if self.detail else "")


def _first_line(s: str) -> str:
    s = s.strip()
    return s.splitlines()[0][:300] if s else ""


def run_certify(tlcheck: str, model: str, data: str, out: str, timeout: float) -> Check:
    """tlcheck certify --partial on one model and data set; detail lists the kinds written and what is not."""
    shutil.rmtree(out, ignore_errors=True)
    try:
        p = subprocess.run([tlcheck, "certify", "--onnx", model, "--data", data, "--partial", "--json", "--out", out],
                           capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Check("certify", -1, f"after {timeout:.0f} s")
    if p.returncode not in (0, 1):
        return Check("certify", p.returncode, _first_line(p.stderr))
    return Check("certify", p.returncode, certify_detail(p.stdout, p.stderr))


def certify_detail(stdout: str, stderr: str) -> str:
    """The certificate kinds written (with counts) and the first "not certified" line, from certify's output."""
    try:
        files = json.loads(stdout).get("files", [])
    except ValueError:
        return _first_line(stderr)
    kinds: dict[str, int] = {}
    for f in files:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    made = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(kinds.items()))
    skipped = [ln[len("not certified: "):] for ln in stderr.splitlines() if ln.startswith("not certified: ")]
    return made + (f"; not certified: {skipped[0][:160]}" if skipped else "")


def _mid(v: object) -> float:
    """The midpoint of one value of a tlcheck JSON tensor: a number, a rational string or an interval."""
    if isinstance(v, dict):
        return (_mid(v["lo"]) + _mid(v["hi"])) / 2
    if isinstance(v, str):
        s = v.replace("Inf", "inf")
        return float(Fraction(s)) if "/" in s else float(s)
    return float(v)  # type: ignore[arg-type]


def tensor(doc: dict) -> np.ndarray:
    """A tlcheck JSON tensor ({"shape", "values"}) as float64 midpoints."""
    return np.array([_mid(v) for v in doc["values"]], dtype=np.float64).reshape(doc["shape"])


def torch_grads(model: nn.Module, inputs: Sequence[torch.Tensor]) -> dict[str, np.ndarray]:
    """PyTorch's gradients of the sum of the outputs: ``input`` (a floating first input) and every parameter by name."""
    xs = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    model.zero_grad(set_to_none=True)
    with torch.enable_grad():
        y = model(*xs)
        ys = y if isinstance(y, (tuple, list)) else (y,)
        sum(t.sum() for t in ys).backward()  # type: ignore[union-attr]
    got = {n: p.grad.detach().double().numpy() for n, p in model.named_parameters() if p.grad is not None}
    if xs and xs[0].grad is not None:
        got["input"] = xs[0].grad.detach().double().numpy()
    return got


@dataclass(frozen=True)
class Agreement:
    """grad's tensors beside PyTorch's: matched by name and shape, within tol, and the worst one."""

    matched: int
    within: int
    worst: str
    worst_rel: float

    def __str__(self) -> str:
        if not self.matched:
            return "none matched PyTorch's names"
        s = f"{self.within} of {self.matched} beside PyTorch's agree"
        return s if self.within == self.matched else f"{s}; worst {self.worst}: {self.worst_rel:.2g}"


def agreement(doc: dict, ours: dict[str, np.ndarray], tol: float) -> Agreement:
    """grad's gradients beside PyTorch's, each tensor's difference relative to its largest |PyTorch| element.

    A tensor agrees when max |tlcheck − PyTorch| ≤ tol · max |PyTorch|. A
    tied weight disagrees by construction where the exporter wrote a second
    (transposed, constant-folded) copy under another name: tlcheck's gradient
    of the named one is then only that use's share."""
    theirs = dict(doc["grad"]["params"])
    if doc["grad"].get("input") is not None:
        theirs["input"] = doc["grad"]["input"]
    n, within, worst, worst_rel = 0, 0, "", 0.0
    for name, t in theirs.items():
        g = ours.get(name)
        if g is None or list(g.shape) != list(t["shape"]):
            continue
        n += 1
        diff = float(np.max(np.abs(tensor(t) - g), initial=0.0))
        scale = float(np.max(np.abs(g), initial=0.0))
        rel = diff / scale if scale else diff
        within += rel <= tol
        if rel >= worst_rel:
            worst, worst_rel = name, rel
    return Agreement(n, within, worst, worst_rel)


def run_grad(tlcheck: str, model: str, data: str, ours: dict[str, np.ndarray] | None, timeout: float,
             tol: float = 1e-4) -> Check:
    """tlcheck grad --json on one model and data set; detail: the tensors set beside PyTorch's and the difference."""
    try:
        p = subprocess.run([tlcheck, "grad", "--onnx", model, "--data", data, "--json"],
                           capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Check("grad", -1, f"after {timeout:.0f} s")
    if p.returncode not in (0, 1):
        return Check("grad", p.returncode, _first_line(p.stderr))
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        return Check("grad", p.returncode, "no JSON document: " + _first_line(p.stderr))
    k = len(doc["grad"]["params"]) + (doc["grad"].get("input") is not None)
    detail = f"{doc.get('scalar', '?')}, {k} gradients"
    if ours:
        detail += f"; {agreement(doc, ours, tol)}"
    return Check("grad", p.returncode, detail)


def remove(path: str) -> None:
    """Removes a certificate directory (they are not kept)."""
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
