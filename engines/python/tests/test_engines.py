"""Each engine on hand-built requests, against values derived exactly with fractions."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

from tlcheck_engines.protocol import PROTOCOL, handle

from cases import C, NODES, X0, X1, case, expected, floats, tensor
from conftest import need

MIN_OPS = 40


def load(name: str) -> Any:
    if name == "torch":
        need("torch")
        from tlcheck_engines import torch_engine as m
    elif name == "jax":
        need("jax")
        from tlcheck_engines import jax_engine as m
    else:
        need("onnxruntime")
        need("onnx")
        from tlcheck_engines import ort_engine as m
    return m.Engine()


@pytest.fixture(scope="module", params=["torch", "jax", "onnxruntime"])
def engine(request: pytest.FixtureRequest) -> Any:
    return load(request.param)


def test_handshake_maps_enough_primitives(engine: Any) -> None:
    h = handle(engine.info, engine.run, {"type": "hello", "protocol": PROTOCOL})
    assert h["protocol"] == PROTOCOL
    assert len(h["ops"]) >= MIN_OPS, f"{h['engine']} maps {len(h['ops'])} primitives: {h['ops']}"
    assert {m["format"] for m in h["machines"]} <= {"float64", "float32"}


def test_dag_exact(engine: Any) -> None:
    y, g0, g1 = expected()
    inputs = [tensor([4], X0), tensor([4], X1)]
    for machine, fmt in engine.info.machines:
        can_vjp = "vjp" in engine.info.transforms
        req = case(machine, fmt, NODES, inputs, cot=tensor([4], C) if can_vjp else None,
                   transforms=None if can_vjp else ["forward"])
        a = handle(engine.info, engine.run, req)
        assert a["type"] == "result", a
        # Every value here is a small dyadic: products and sums are exact in both formats.
        assert floats(a["y"]) == [float(v) for v in y], machine
        if can_vjp:
            assert floats(a["grads"][0]) == [float(v) for v in g0], machine
            assert floats(a["grads"][1]) == [float(v) for v in g1], machine


def test_jvp_exact(engine: Any) -> None:
    if "jvp" not in engine.info.transforms:
        pytest.skip(f"{engine.info.name} runs the forward only")
    v0 = [Fraction(1), Fraction(0), Fraction(-1, 2), Fraction(1, 4)]
    v1 = [Fraction(1, 2), Fraction(2), Fraction(0), Fraction(-1)]
    p = [a * b for a, b in zip(X0, X1)]
    want = [(1 if q > 0 else 0) * (a * t1 + t0 * b) + t0 for q, a, b, t0, t1 in zip(p, X0, X1, v0, v1)]
    for machine, fmt in engine.info.machines:
        req = case(machine, fmt, NODES, [tensor([4], X0), tensor([4], X1)], tangents=[tensor([4], v0), tensor([4], v1)])
        a = handle(engine.info, engine.run, req)
        assert a["type"] == "result", a
        assert floats(a["jvp"]) == [float(w) for w in want], machine


def test_exp_close_and_unsupported(engine: Any) -> None:
    xs = [Fraction(1, 2), Fraction(-3), Fraction(0)]
    for machine, fmt in engine.info.machines:
        cot = tensor([3], [1, 1, 1]) if "vjp" in engine.info.transforms else None
        a = handle(engine.info, engine.run, case(machine, fmt, [{"op": "exp", "args": [0]}], [tensor([3], xs)], cot=cot,
                                                 transforms=None if cot else ["forward"]))
        tol = 2.0**-50 if fmt == "float64" else 2.0**-21
        for got, x in zip(floats(a["y"]), xs):
            assert abs(got - math.exp(float(x))) <= tol * math.exp(float(x)), (machine, x, got)
    # A registry primitive the engine does not map is refused as unsupported.
    a = handle(engine.info, engine.run, case(engine.info.machines[0][0], engine.info.machines[0][1],
                                             [{"op": "rand_uniform", "attrs": {"shape": [1], "seed": "1"}, "args": []}],
                                             [tensor([1], [0])], cot=tensor([1], [1])))
    assert (a["type"], a["kind"]) == ("refusal", "unsupported")


def test_conv_matches_direct_sum(engine: Any) -> None:
    """A 1-D convolution [1, 1, 4] * [1, 1, 2], stride 1: y_i = Σ_k x_{i+k} w_k, exactly."""
    x = [Fraction(1), Fraction(-2), Fraction(1, 2), Fraction(3)]
    w = [Fraction(1, 4), Fraction(-1)]
    want = [x[i] * w[0] + x[i + 1] * w[1] for i in range(3)]
    node = {"op": "conv", "attrs": {"window": {"kernel": [2], "stride": [1]}}, "args": [0, 1]}
    for machine, fmt in engine.info.machines:
        cot = tensor([1, 1, 3], [1, 1, 1]) if "vjp" in engine.info.transforms else None
        a = handle(engine.info, engine.run, case(machine, fmt, [node], [tensor([1, 1, 4], x), tensor([1, 1, 2], w)], cot=cot,
                                                 transforms=None if cot else ["forward"]))
        assert a["type"] == "result", a
        assert floats(a["y"]) == [float(v) for v in want], machine
        if cot:
            # ∂/∂w_k = Σ_i x_{i+k}.
            assert floats(a["grads"][1]) == [float(sum(x[k:k + 3])) for k in range(2)], machine


def test_torch_compile_only_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile's machines (≈ 24 s of inductor compilation per graph and format,
    docs/engines.md) are offered only with TLCHECK_TORCH_COMPILE=1."""
    need("torch")
    from tlcheck_engines import torch_engine

    monkeypatch.delenv("TLCHECK_TORCH_COMPILE", raising=False)
    names = {m for m, _ in torch_engine.Engine().info.machines}
    assert names == {"eager.f64", "eager.f32", "func.f64", "func.f32"}
    monkeypatch.setenv("TLCHECK_TORCH_COMPILE", "1")
    names = {m for m, _ in torch_engine.Engine().info.machines}
    assert {"compile.f64", "compile.f32"} <= names
