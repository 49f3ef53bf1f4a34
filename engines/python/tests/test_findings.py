"""The standing findings of adapters/FINDINGS.md ("PyTorch, JAX and ONNX Runtime"), pinned:
each asserts that the harness still reports it, through the built tlcheck-adapters
($TLCHECK_ADAPTERS_BIN; ci/stage-engines.sh builds it and sets it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import need

ROOT = Path(__file__).resolve().parents[1]


def run(engine: str, cases: str, random: int = 0) -> dict[str, Any]:
    binary = os.environ.get("TLCHECK_ADAPTERS_BIN")
    if not binary:
        if os.environ.get("TLCHECK_REQUIRE_ENGINES") == "1":
            raise AssertionError("TLCHECK_ADAPTERS_BIN is not set (ci/stage-engines.sh sets it)")
        pytest.skip("TLCHECK_ADAPTERS_BIN is not set: build adapters/cmd/tlcheck-adapters and point it there")
    need({"torch": "torch", "jax": "jax", "onnxruntime": "onnxruntime"}[engine])
    env = dict(os.environ, TLCHECK_PYTHON=sys.executable, TLCHECK_ENGINES_DIR=str(ROOT))
    args = [binary, "run", "--engine", engine, "--case", cases, "--json"]
    if random:
        args += ["--random", str(random)]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1200)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["engines"][0]


def verdicts(doc: dict[str, Any], case: str, obligation: str) -> set[str]:
    return {r["verdict"] for r in doc["rows"] if r["case"] == case and r["obligation"] == obligation}


@pytest.mark.parametrize("engine", ["torch", "jax"])
def test_nan_gradient_of_composed_l2_norm_at_zero(engine: str) -> None:
    """sqrt(Σx²) and x/(sqrt(Σx²)+ε) at a zero row, composed of primitives: sqrt′(0) = +∞ times
    0 is NaN in both engines' reverse and forward mode, where 0 is a valid subgradient (the
    norm) and where the function is differentiable (the normalisation, exact gradient 3)."""
    doc = run(engine, "dag_l2norm_zero,dag_l2normalize_eps_zero")
    assert verdicts(doc, "dag_l2norm_zero", "path_sum") == {"fails"}
    assert verdicts(doc, "dag_l2normalize_eps_zero", "path_sum") == {"fails"}
    assert verdicts(doc, "dag_l2normalize_eps_zero", "jvp") == {"fails"}
    details = [r["detail"] for r in doc["rows"] if r["case"] == "dag_l2normalize_eps_zero" and r["obligation"] == "path_sum"]
    assert all("= NaN (engine), exact 3" in d for d in details), details


def test_jax_conventions_not_findings() -> None:
    """JAX's abs′(0) = 1 and clamp′ = 1/2 at the bounds are declared conventions, max pooling's
    first-maximum rule too: reported as convention, never as findings."""
    doc = run("jax", "abs,max_pool_tie")
    assert verdicts(doc, "abs", "vjp") == {"convention"}
    assert verdicts(doc, "abs", "subgradient") == {"holds"}
    assert verdicts(doc, "max_pool_tie", "vjp") == {"convention"}


def test_onnxruntime_sigmoid_suspect() -> None:
    """ONNX Runtime's float32 Sigmoid (MLAS's approximation) is outside the registry formula's
    binary32 bound on sigmoid(log_softmax(x)) but within 1024 times it: suspect, not a finding."""
    doc = run("onnxruntime", "none", random=139)
    assert verdicts(doc, "rand-1-138", "forward") == {"suspect"}
    assert doc["fails"] == 0
