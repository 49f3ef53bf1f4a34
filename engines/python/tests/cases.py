"""Requests built by hand, with expected values derived independently (exact rationals)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def tensor(shape: list[int], vals: list[Fraction | int]) -> dict[str, Any]:
    return {"shape": shape, "data": [str(Fraction(v)) for v in vals]}


def case(machine: str, fmt: str, nodes: list[dict[str, Any]], inputs: list[dict[str, Any]], cot: dict[str, Any] | None = None,
         tangents: list[dict[str, Any]] | None = None, transforms: list[str] | None = None, n_inputs: int | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {
        "type": "case", "id": 7, "machine": machine, "format": fmt,
        "transforms": transforms or (["forward", "vjp"] if cot is not None else ["forward", "jvp"]),
        "graph": {"inputs": n_inputs or len(inputs), "nodes": nodes}, "inputs": inputs,
        "limits": {"seconds": 60, "memory_bytes": 1 << 32},
    }
    if cot is not None:
        req["cotangent"] = cot
    if tangents is not None:
        req["tangents"] = tangents
    return req


def floats(t: dict[str, Any]) -> list[float]:
    return [float(s) for s in t["data"]]


# y = relu(x0 ⊙ x1) + x0 at x0 = [1/2, -3/4, 0, 2], x1 = [3, 1, 5, -1/4], cot c = [1, -2, 1/4, 3].
X0 = [Fraction(1, 2), Fraction(-3, 4), Fraction(0), Fraction(2)]
X1 = [Fraction(3), Fraction(1), Fraction(5), Fraction(-1, 4)]
C = [Fraction(1), Fraction(-2), Fraction(1, 4), Fraction(3)]
NODES = [{"op": "mul", "args": [0, 1]}, {"op": "relu", "args": [2]}, {"op": "add", "args": [3, 0]}]


def expected() -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """y, ∂/∂x0 and ∂/∂x1 of Σ c ⊙ y, with relu′(0) = 0 (the product is 0 only at index 2)."""
    p = [a * b for a, b in zip(X0, X1)]
    y = [max(v, Fraction(0)) + a for v, a in zip(p, X0)]
    d = [Fraction(1) if v > 0 else Fraction(0) for v in p]
    g0 = [c * (dd * b + 1) for c, dd, b in zip(C, d, X1)]
    g1 = [c * dd * a for c, dd, a in zip(C, d, X0)]
    return y, g0, g1
