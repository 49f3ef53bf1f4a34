"""The protocol layer alone, with a fake engine (no third-party package)."""

from __future__ import annotations

import io
import json

import pytest

from tlcheck_engines.protocol import PROTOCOL, Case, EngineInfo, Result, Tensor, Unsupported, fmt_float, handle, serve

from cases import case, tensor

INFO = EngineInfo(name="fake", version="0", machines=[("m", "float64")], ops=["neg"])


def neg(c: Case) -> Result:
    x = c.inputs[0]
    if x.shape == (3,):
        raise Unsupported("three is too many")
    if x.shape == (2,):
        raise RuntimeError("engine bug")
    return Result(Tensor(x.shape, [-v for v in x.data]), grads=[Tensor(x.shape, [-v for v in c.cotangent.data])])


def test_hello_and_version_mismatch() -> None:
    h = handle(INFO, neg, {"type": "hello", "protocol": PROTOCOL})
    assert h["protocol"] == PROTOCOL and h["engine"] == "fake" and h["ops"] == ["neg"]
    assert h["machines"] == [{"name": "m", "format": "float64", "transforms": ["forward", "vjp", "jvp"]}]
    with pytest.raises(SystemExit, match="tlcheck.engine.v0"):
        handle(INFO, neg, {"type": "hello", "protocol": "tlcheck.engine.v0"})


@pytest.mark.parametrize(
    "shape, want",
    [([1], ("result", None)), ([3], ("refusal", "unsupported")), ([2], ("refusal", "error"))],
)
def test_answers_and_refusals(shape: list[int], want: tuple[str, str | None]) -> None:
    n = shape[0]
    req = case("m", "float64", [{"op": "neg", "args": [0]}], [tensor(shape, [1] * n)], cot=tensor(shape, ["1/4"] * n))
    a = handle(INFO, neg, req)
    assert (a["type"], a.get("kind")) == want
    assert a["id"] == 7
    if a["type"] == "result":
        assert a["y"]["data"] == ["-1.0"] and a["grads"][0]["data"] == ["-0.25"]
    if a.get("kind") == "error":
        assert "RuntimeError: engine bug" in a["reason"]


def test_unmapped_op_and_unknown_machine() -> None:
    req = case("m", "float64", [{"op": "exp", "args": [0]}], [tensor([1], [1])], cot=tensor([1], [1]))
    assert handle(INFO, neg, req)["kind"] == "unsupported"
    req = case("m", "float32", [{"op": "neg", "args": [0]}], [tensor([1], [1])], cot=tensor([1], [1]))
    assert handle(INFO, neg, req)["kind"] == "error"


def test_serve_lines() -> None:
    stdin = io.StringIO(json.dumps({"type": "hello", "protocol": PROTOCOL}) + "\n\n" +
                        json.dumps(case("m", "float64", [{"op": "neg", "args": [0]}], [tensor([1], ["3/8"])], cot=tensor([1], [2]))) + "\n")
    out = io.StringIO()
    serve(INFO, neg, stdin, out)
    lines = [json.loads(s) for s in out.getvalue().splitlines()]
    assert [x["type"] for x in lines] == ["hello", "result"]
    assert lines[1]["y"]["data"] == ["-0.375"]


@pytest.mark.parametrize("v, s", [(0.1, "0.1"), (-0.0, "-0.0"), (float("nan"), "nan"), (float("-inf"), "-inf"), (2.0**-1074, "5e-324")])
def test_float_literals_round_trip(v: float, s: str) -> None:
    assert fmt_float(v) == s
