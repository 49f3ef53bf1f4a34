"""The tlcheck.engine.v1 protocol: requests, answers and the serve loop.

A request is one JSON object per line: ``{"type": "hello", "protocol": ...}`` or a case
``{"type": "case", "id": N, "machine": M, "format": "float64"|"float32", "transforms": [...],
"graph": {...}, "inputs": [...], "cotangent": {...}, "tangents": [...], "limits": {...}}``.
Tensor values travel as exact rationals "p/q" (dyadics); answers carry floats as their
shortest round-trip decimal strings, "nan", "inf" or "-inf".
"""

from __future__ import annotations

import json
import math
import sys
import traceback
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Iterable, Sequence, TextIO

PROTOCOL = "tlcheck.engine.v1"


class Unsupported(Exception):
    """The engine cannot express this case at these shapes or attributes: a skip."""


@dataclass(frozen=True)
class Node:
    op: str
    attrs: dict[str, Any]
    args: tuple[int, ...]


@dataclass(frozen=True)
class Graph:
    inputs: int
    nodes: tuple[Node, ...]


@dataclass
class Tensor:
    """A row-major tensor of Python floats (exact binary64 values)."""

    shape: tuple[int, ...]
    data: list[float]


@dataclass
class Case:
    id: int
    machine: str
    format: str
    transforms: tuple[str, ...]
    graph: Graph
    inputs: list[Tensor]
    cotangent: Tensor | None
    tangents: list[Tensor] | None
    graph_key: str = ""


@dataclass
class Result:
    y: Tensor
    grads: list[Tensor] | None = None
    jvp: Tensor | None = None


@dataclass
class Convention:
    op: str
    doc: str
    source: str
    graph: dict[str, Any] | None = None
    builtin: str | None = None

    def wire(self) -> dict[str, Any]:
        d: dict[str, Any] = {"op": self.op, "doc": self.doc, "source": self.source}
        if self.graph is not None:
            d["graph"] = self.graph
        if self.builtin is not None:
            d["builtin"] = self.builtin
        return d


@dataclass
class EngineInfo:
    name: str
    version: str
    machines: list[tuple[str, str]]
    ops: list[str]
    conventions: list[Convention] = field(default_factory=list)
    transforms: list[str] = field(default_factory=lambda: ["forward", "vjp", "jvp"])


def rat(s: str) -> Fraction:
    """An exact rational attribute or value "p/q" or "p"."""
    return Fraction(s)


def parse_tensor(w: dict[str, Any], what: str) -> Tensor:
    shape = tuple(int(d) for d in w["shape"])
    n = math.prod(shape)
    data = [float(Fraction(s)) for s in w["data"]]
    if len(data) != n:
        raise ValueError(f"{what}: shape {list(shape)} holds {n} elements, data has {len(data)}")
    return Tensor(shape, data)


def fmt_float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(float(v))


def wire_tensor(shape: Sequence[int], data: Iterable[float]) -> dict[str, Any]:
    return {"shape": [int(d) for d in shape], "data": [fmt_float(float(v)) for v in data]}


def parse_case(req: dict[str, Any]) -> Case:
    g = req["graph"]
    nodes = tuple(Node(n["op"], dict(n.get("attrs") or {}), tuple(n["args"])) for n in g["nodes"])
    cot = parse_tensor(req["cotangent"], "cotangent") if req.get("cotangent") is not None else None
    tans = [parse_tensor(t, f"tangents[{i}]") for i, t in enumerate(req.get("tangents") or [])] or None
    return Case(
        id=int(req["id"]),
        machine=req["machine"],
        format=req["format"],
        transforms=tuple(req["transforms"]),
        graph=Graph(int(g["inputs"]), nodes),
        inputs=[parse_tensor(t, f"inputs[{i}]") for i, t in enumerate(req["inputs"])],
        cotangent=cot,
        tangents=tans,
        graph_key=json.dumps(g, sort_keys=True),
    )


def hello(info: EngineInfo) -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL,
        "engine": info.name,
        "version": info.version,
        "machines": [{"name": m, "format": f, "transforms": list(info.transforms)} for m, f in info.machines],
        "ops": sorted(info.ops),
        "conventions": [c.wire() for c in info.conventions],
    }


def answer(case_id: int, r: Result) -> dict[str, Any]:
    a: dict[str, Any] = {"type": "result", "id": case_id, "y": wire_tensor(r.y.shape, r.y.data)}
    if r.grads is not None:
        a["grads"] = [wire_tensor(g.shape, g.data) for g in r.grads]
    if r.jvp is not None:
        a["jvp"] = wire_tensor(r.jvp.shape, r.jvp.data)
    return a


def refusal(case_id: int, kind: str, reason: str) -> dict[str, Any]:
    return {"type": "refusal", "id": case_id, "kind": kind, "reason": " ".join(reason.split())[:600]}


def handle(info: EngineInfo, run: Callable[[Case], Result], req: dict[str, Any]) -> dict[str, Any]:
    """One request's answer. Errors inside the engine become refusals of kind "error"."""
    if req.get("type") == "hello":
        if req.get("protocol") != PROTOCOL:
            raise SystemExit(f"{info.name}: the harness speaks {req.get('protocol')!r}, this engine {PROTOCOL!r}")
        return hello(info)
    if req.get("type") != "case":
        raise SystemExit(f"{info.name}: unknown request type {req.get('type')!r}")
    case = parse_case(req)
    known = dict(info.machines)
    if case.machine not in known or known[case.machine] != case.format:
        return refusal(case.id, "error", f"machine {case.machine!r} with format {case.format!r} is not this engine's")
    for op in {n.op for n in case.graph.nodes}:
        if op not in info.ops:
            return refusal(case.id, "unsupported", f"{op} is not mapped")
    try:
        return answer(case.id, run(case))
    except Unsupported as e:
        return refusal(case.id, "unsupported", str(e))
    except Exception as e:  # the engine's own failure: a run finding
        tb = traceback.extract_tb(e.__traceback__)
        where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
        return refusal(case.id, "error", f"{type(e).__name__}: {e}{where}")


def serve(info: EngineInfo, run: Callable[[Case], Result], stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
    """Answer requests line by line until stdin ends."""
    for line in stdin:
        if not line.strip():
            continue
        out = handle(info, run, json.loads(line))
        stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
        stdout.flush()
