"""Gradients from real runtimes (issue 23 point 4): tools/export_grads.py builds PyTorch modules
and a JAX function with seeded weights, exports them to ONNX and dumps their float32 gradients
(torch.autograd.grad; jax.vjp, eager and under jax.jit); `tlcheck compare-grad` must hold on every one. The planted edit
is one float32 step past the bound: the element whose bound is tightest is moved to the first
float32 outside [exact.lo − bound, exact.hi + bound], and compare-grad must fail on exactly that
element — while the float32 just below it (inside) does not fail.
Needs the built tlcheck ($TLCHECK_BIN; ci/stage-engines.sh builds it and sets it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from conftest import need

TOOL = Path(__file__).resolve().parents[3] / "tools" / "export_grads.py"
MODELS = ("mlp", "conv_bn", "ln_gelu", "attention", "conv1d_prelu", "convt_dw", "elu_softplus", "jax_mlp",
          "jax_mlp_jit")
# Gradients compare-grad does not check, and why: BatchNorm's running statistics are buffers
# (PyTorch gives them no gradient, so the dump has none: "not_given"), as are the jaxpr's
# literals (relu's 0.0, const_*). Every parameter is checked, initializers read as data
# (LayerNormalization's scale and bias, PRelu's slope) included.
NOT_CHECKED = {
    "conv_bn": {"1.running_mean": "not_given", "1.running_var": "not_given"},
}
# At least this many parameter tensors (besides the input x) are checked per model.
MIN_PARAMS = {"mlp": 4, "conv_bn": 4, "ln_gelu": 6, "attention": 8, "conv1d_prelu": 5, "convt_dw": 6,
              "elu_softplus": 4, "jax_mlp": 6, "jax_mlp_jit": 6}
# The real models of tools/models (export_grads.ZOO_MODELS): inconclusive elements are allowed
# and counted (fpbound's bound through a transformer's attention can be +inf); no element may
# fail, and where some element is decided the planted edit must fail on a decided one. ViT's
# dump had no decided element until vitgrad38 (sign floors: 32 of 26976 decided, the final
# LayerNorm's beta), so every model now carries the planted edit; a model that decides nothing
# again would be listed here.
ZOO = ("zoo_mlp", "zoo_resnet", "zoo_bert", "zoo_vit")
NONE_DECIDED: set[str] = set()
# Parameters read as data by the ONNX import (a const node made a parameter): each gets a
# planted edit of its own, besides the tightest element of the model.
DATA_PARAMS = (("ln_gelu", "1.weight"), ("ln_gelu", "1.bias"), ("conv1d_prelu", "3.weight"))


def tlcheck() -> str:
    binary = os.environ.get("TLCHECK_BIN")
    if not binary:
        if os.environ.get("TLCHECK_REQUIRE_ENGINES") == "1":
            raise AssertionError("TLCHECK_BIN is not set (ci/stage-engines.sh sets it)")
        pytest.skip("TLCHECK_BIN is not set: build cmd/tlcheck and point it there")
    return binary


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tlcheck()
    need("torch")
    need("onnxscript")
    need("jax")
    out = tmp_path_factory.mktemp("export")
    need("transformers")
    p = subprocess.run([sys.executable, str(TOOL), str(out), *MODELS, *ZOO], capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-4000:]
    return out


def compare(d: Path, grads: Path | None = None) -> tuple[int, dict[str, Any]]:
    p = subprocess.run([tlcheck(), "compare-grad", "--json", "--elements", "--onnx", str(d / "model.onnx"),
                        "--input", str(d / "input_0.pb"), "--grads", str(grads or d / "grads.json")],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def f32(v: float) -> Any:
    import numpy as np

    return np.float32(v)


def step(v: Any, up: bool) -> Any:
    import numpy as np

    return np.nextafter(v, np.float32(np.inf if up else -np.inf), dtype=np.float32)


def first_above(limit: Fraction) -> Any:
    """The least float32 whose value exceeds limit (exactly)."""
    v = f32(float(limit))
    while Fraction(float(v)) <= limit:
        v = step(v, True)
    while Fraction(float(step(v, False))) > limit:
        v = step(v, False)
    return v


@pytest.mark.parametrize("model", MODELS)
def test_compare_grad_holds(exported: Path, model: str) -> None:
    code, doc = compare(exported / model)
    assert code == 0 and doc["verdict"] == "holds" and doc["fails"] == 0 and doc["inconclusive"] == 0, doc
    checked = [g for g in doc["grads"] if g["status"] == "checked"]
    for g in doc["grads"]:
        if g["status"] == "checked":
            assert g["holds"] == len(g["elements"]) > 0, g["name"]
        elif not g["name"].startswith("const_"):  # jaxpr literals (0.0 of relu): not in the dump
            assert NOT_CHECKED.get(model, {}).get(g["name"]) == g["status"], (g["name"], g["status"])
    names = {g["name"] for g in checked}
    assert "x" in names
    assert len(names - {"x"}) >= MIN_PARAMS[model], names


@pytest.mark.parametrize("model", MODELS)
def test_one_ulp_past_the_bound_fails(exported: Path, model: str, tmp_path: Path) -> None:
    plant(exported / model, tmp_path, None)


@pytest.mark.parametrize("model,param", DATA_PARAMS)
def test_one_ulp_past_the_bound_fails_on_data_params(exported: Path, model: str, param: str, tmp_path: Path) -> None:
    plant(exported / model, tmp_path, param)


def plant(d: Path, tmp_path: Path, only: str | None) -> None:
    """Moves the tightest element (of gradient only, when given) one float32 past its bound
    and asserts compare-grad fails on exactly it; one float32 back it does not fail."""
    _, doc = compare(d)
    # The tightest element: the smallest positive bound (an element with bound 0 is exact,
    # and any change of it fails, which tests less).
    best = None
    for g in doc["grads"]:
        if only is not None and g["name"] != only:
            continue
        for el in g.get("elements", []):
            b = el.get("bound")
            if el["verdict"] == "holds" and isinstance(b, float) and b > 0 and (best is None or b < best[2]["bound"]):
                best = (g["name"], el["index"], el)
    assert best is not None
    name, index, el = best
    limit = Fraction(el["exact"]["hi"]) + Fraction(el["bound"])
    out = first_above(limit)  # the first float32 past exact.hi + bound
    inside = step(out, False)  # one float32 step back: within the bound
    assert Fraction(float(inside)) <= limit < Fraction(float(out))
    dump = json.loads((d / "grads.json").read_text())
    for value, want_fail in ((out, True), (inside, False)):
        dump["grads"][name]["values"][index] = float(value)
        edited = tmp_path / "grads.json"
        edited.write_text(json.dumps(dump))
        code, res = compare(d, edited)
        failing = [(g["name"], e["index"]) for g in res["grads"] for e in g.get("elements", []) if e["verdict"] == "fails"]
        if want_fail:
            assert code == 1 and res["fails"] == 1 and failing == [(name, index)], (name, index, failing)
        else:
            assert code == 0 or failing == [], (name, index, failing)
            assert failing == [], (name, index, float(value), failing)


@pytest.mark.parametrize("model", ZOO)
def test_zoo_compare_grad(exported: Path, model: str, tmp_path: Path) -> None:
    d = exported / model
    code, doc = compare(d)
    checked = [g for g in doc["grads"] if g["status"] == "checked"]
    total = sum(len(g["elements"]) for g in checked)
    holds = sum(g["holds"] for g in checked)
    inconclusive = sum(g["inconclusive"] for g in checked)
    print(f"{model}: {len(checked)} gradients, {total} elements: {holds} hold, {inconclusive} inconclusive")
    assert code == 0 and doc["fails"] == 0, doc["fails"]
    assert holds + inconclusive == total > 0
    for g in doc["grads"]:
        if g["status"] != "checked":  # BatchNorm's running statistics: buffers, no gradient
            assert g["status"] == "not_given" and g["name"].endswith(("running_mean", "running_var")), g["name"]
    if model in NONE_DECIDED:
        assert holds == 0, "decided now: plant an edit on it (remove it from NONE_DECIDED)"
        return
    assert holds > 0
    plant(d, tmp_path, None)
