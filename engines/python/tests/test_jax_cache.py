"""TLCHECK_JAX_CACHE: JAX's persistent compilation cache (jax_engine's module doc). A run with
the cache writes executables there; a second process loads them and answers the same values
bit for bit as a process without the cache; the planted check: an answer computed at the
other format (float32 for a float64 case) differs from the cached one, so the comparison is
not vacuous."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import need

ROOT = Path(__file__).resolve().parents[1]


def serve(cache: Path | None, machine: str, fmt: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "TLCHECK_JAX_CACHE"}
    if cache is not None:
        env["TLCHECK_JAX_CACHE"] = str(cache)
    req = {"type": "case", "id": 1, "machine": machine, "format": fmt, "transforms": ["forward", "vjp"],
           "graph": {"inputs": 2, "nodes": [{"op": "mul", "args": [0, 1]}, {"op": "tanh", "args": [2]},
                                            {"op": "softmax", "attrs": {"axis": 1}, "args": [3]}]},
           "inputs": [{"shape": [2, 2], "data": ["1", "-1/2", "0", "3"]}, {"shape": [2, 2], "data": ["1/4", "1/3", "-3", "2"]}],
           "cotangent": {"shape": [2, 2], "data": ["3/4", "-5/4", "1/2", "2"]}, "limits": {"seconds": 120, "memory_bytes": 8 << 30}}
    lines = json.dumps({"type": "hello", "protocol": "tlcheck.engine.v1"}) + "\n" + json.dumps(req) + "\n"
    p = subprocess.run([sys.executable, "-m", "tlcheck_engines", "jax"], input=lines, capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    answer = json.loads(p.stdout.splitlines()[1])
    assert answer["type"] == "result", answer
    return answer


def test_cache_same_values(tmp_path: Path) -> None:
    need("jax")
    cache = tmp_path / "jax-cache"
    plain = serve(None, "jit.f64", "float64")
    first = serve(cache, "jit.f64", "float64")
    assert any(cache.iterdir()), "no executable written to TLCHECK_JAX_CACHE"
    second = serve(cache, "jit.f64", "float64")
    assert first == plain and second == plain
    # Planted: the same graph at float32 answers other bits; equality above is not vacuous.
    assert serve(cache, "jit.f32", "float32")["grads"] != plain["grads"]
