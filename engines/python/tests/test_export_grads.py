"""tools/export_grads.py for real: PyTorch exports a module and dumps its float32 gradients with
autograd, and `tlcheck compare-grad` holds on every one; an edited gradient fails.
Needs the built tlcheck ($TLCHECK_BIN; ci/stage-engines.sh builds it and sets it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need

TOOL = Path(__file__).resolve().parents[3] / "tools" / "export_grads.py"


def compare(binary: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary, "compare-grad", "--onnx", str(out / "model.onnx"), "--input", str(out / "input_0.pb"),
                           "--grads", str(out / "grads.json")], capture_output=True, text=True, timeout=600)


def test_export_grads_compare_grad(tmp_path: Path) -> None:
    binary = os.environ.get("TLCHECK_BIN")
    if not binary:
        if os.environ.get("TLCHECK_REQUIRE_ENGINES") == "1":
            raise AssertionError("TLCHECK_BIN is not set (ci/stage-engines.sh sets it)")
        pytest.skip("TLCHECK_BIN is not set: build cmd/tlcheck and point it there")
    need("torch")
    need("onnxscript")
    p = subprocess.run([sys.executable, str(TOOL), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    held = compare(binary, tmp_path)
    assert held.returncode == 0, held.stdout + held.stderr
    assert " 0 fails" in held.stdout and "holds" in held.stdout
    # An edit far beyond the bound (one weight gradient scaled by 1 + 2^-10) fails.
    doc = json.loads((tmp_path / "grads.json").read_text())
    name = next(k for k in doc["grads"] if k.endswith("weight"))
    v = doc["grads"][name]["values"]
    v[0] = float(v[0]) * (1 + 2.0**-10) if float(v[0]) != 0 else 2.0**-10
    (tmp_path / "grads.json").write_text(json.dumps(doc))
    failed = compare(binary, tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
