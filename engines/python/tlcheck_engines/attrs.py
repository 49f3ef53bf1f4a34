"""Reading a node's registry attributes (the wire's snake_case names, exact rationals)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .protocol import Unsupported


def rat(a: dict[str, Any], key: str, default: Fraction | None = None) -> Fraction:
    if key not in a:
        if default is None:
            raise Unsupported(f"attribute {key} missing")
        return default
    return Fraction(a[key])


def num(a: dict[str, Any], key: str, default: float | None = None) -> float:
    return float(rat(a, key, None if default is None else Fraction(default)))


def window(a: dict[str, Any]) -> dict[str, Any]:
    w = dict(a.get("window") or {})
    r = len(w.get("kernel", []))
    if r == 0:
        raise Unsupported("window without kernel")
    w.setdefault("pads", [0] * (2 * r))
    w.setdefault("dilation", [1] * r)
    w.setdefault("output_padding", [0] * r)
    w.setdefault("groups", 1)
    w.setdefault("ceil_mode", False)
    w.setdefault("count_include_pad", False)
    return w


def symmetric_pads(w: dict[str, Any]) -> list[int]:
    r = len(w["kernel"])
    p = w["pads"]
    if list(p[:r]) != list(p[r:]):
        raise Unsupported(f"asymmetric pads {p}")
    return list(p[:r])


DEFAULT_NORM_EPS = Fraction(1, 100000)
