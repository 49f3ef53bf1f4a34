"""PyTorch under the tlcheck.engine.v1 protocol.

Machines, each in float64 and float32:

* ``eager``: the graph run eagerly, reverse mode by ``torch.autograd.grad``, forward mode by
  ``torch.autograd.forward_ad`` dual tensors;
* ``func``: ``torch.func.vjp`` and ``torch.func.jvp`` over the same graph function;
* ``compile`` (only with TLCHECK_TORCH_COMPILE=1): the graph function under
  ``torch.compile`` (inductor on CPU), differentiated by autograd. Each new graph compiles,
  about 24 s per graph and format on the 2-core CPU machine (measured, docs/engines.md), so
  it is off by default.

Every registry primitive is mapped to the PyTorch operation that implements it; a
primitive PyTorch lacks is not listed. PyTorch's own tie conventions are declared as
registry graphs (conventions()).
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any, Callable, Sequence

import torch
import torch.nn.functional as F

from .attrs import DEFAULT_NORM_EPS, num, rat, symmetric_pads, window
from .protocol import Case, Convention, EngineInfo, Result, Tensor, Unsupported

Op = Callable[..., torch.Tensor]


def _axis(a: dict[str, Any], x: torch.Tensor, key: str = "axis") -> int:
    ax = int(a.get(key, 0))
    return ax + x.dim() if ax < 0 else ax


def _lead(x: torch.Tensor, keep: int) -> tuple[torch.Tensor, tuple[int, ...]]:
    """x with its leading axes (all but the last keep) flattened into one."""
    lead = tuple(x.shape[: x.dim() - keep])
    return x.reshape((-1,) + tuple(x.shape[x.dim() - keep :])), lead


def _conv(a: dict[str, Any], x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    win = window(a)
    r = len(win["kernel"])
    if r not in (1, 2, 3):
        raise Unsupported(f"conv of rank {r}")
    xs, lead = _lead(x, r + 1)
    pads = win["pads"]
    if list(pads[:r]) != list(pads[r:]):
        # F.pad takes (last axis begin, end, …); zero padding as the registry's.
        fp: list[int] = []
        for d in reversed(range(r)):
            fp += [pads[d], pads[r + d]]
        xs, pad = F.pad(xs, fp), [0] * r
    else:
        pad = list(pads[:r])
    conv = (F.conv1d, F.conv2d, F.conv3d)[r - 1]
    y = conv(xs, w, b, stride=win["stride"], padding=pad, dilation=win["dilation"], groups=win["groups"])
    return y.reshape(lead + tuple(y.shape[1:]))


def _conv_transpose(a: dict[str, Any], x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    win = window(a)
    r = len(win["kernel"])
    if r not in (1, 2, 3):
        raise Unsupported(f"conv_transpose of rank {r}")
    xs, lead = _lead(x, r + 1)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[r - 1]
    y = conv(xs, w, b, stride=win["stride"], padding=symmetric_pads(win), output_padding=win["output_padding"],
             groups=win["groups"], dilation=win["dilation"])
    return y.reshape(lead + tuple(y.shape[1:]))


def _pool(kind: str, nd: bool) -> Op:
    def f(a: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
        win = window(a)
        r = len(win["kernel"])
        if r not in (1, 2, 3):
            raise Unsupported(f"pool of rank {r}")
        pad = symmetric_pads(win)
        if any(2 * p > k for p, k in zip(pad, win["kernel"])):
            raise Unsupported("padding over half the kernel")
        xs, lead = _lead(x, r)
        xs = xs.unsqueeze(1)  # [B, 1, spatial…]
        if kind == "max":
            pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[r - 1]
            y = pool(xs, win["kernel"], win["stride"], pad, dilation=win["dilation"], ceil_mode=win["ceil_mode"])
        else:
            if any(d != 1 for d in win["dilation"]):
                raise Unsupported("dilated average pooling")
            cip = win["count_include_pad"] if nd else True
            pool = (F.avg_pool1d, F.avg_pool2d, F.avg_pool3d)[r - 1]
            y = pool(xs, win["kernel"], win["stride"], pad, ceil_mode=win["ceil_mode"], count_include_pad=cip)
        y = y.squeeze(1)
        return y.reshape(lead + tuple(y.shape[1:]))

    return f


def _layer_norm(a: dict[str, Any], x: torch.Tensor, g: torch.Tensor | None = None, b: torch.Tensor | None = None) -> torch.Tensor:
    ax = _axis(a, x)
    xm = x.movedim(ax, -1)
    y = F.layer_norm(xm, (xm.shape[-1],), g, b, eps=num(a, "eps", DEFAULT_NORM_EPS))
    return y.movedim(-1, ax)


def _gather(a: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
    ax = _axis(a, x)
    idx = torch.tensor(a.get("indices", []), dtype=torch.long)
    ishape = tuple(a.get("indices_shape", []))
    y = torch.index_select(x, ax, idx)
    return y.reshape(tuple(x.shape[:ax]) + ishape + tuple(x.shape[ax + 1 :]))


def _pad(a: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
    w = a.get("widths", [])
    r = x.dim()
    fp: list[int] = []
    for d in reversed(range(r)):
        fp += [w[d], w[r + d]]
    mode = a.get("mode", "constant")
    if mode == "constant":
        return F.pad(x, fp, value=num(a, "value", 0))
    tm = {"reflect": "reflect", "edge": "replicate"}.get(mode)
    if tm is None:
        raise Unsupported(f"pad mode {mode}")
    # torch pads the trailing axes of a batched tensor in these modes.
    lead = 0
    while lead < r and w[lead] == 0 and w[r + lead] == 0:
        lead += 1
    k = r - lead
    if k == 0:
        return x
    if k > 3:
        raise Unsupported(f"{mode} padding of {k} axes")
    xs = x.reshape((1, -1) + tuple(x.shape[lead:])) if lead else x.reshape((1, 1) + tuple(x.shape))
    y = F.pad(xs, fp[: 2 * k], mode=tm)
    return y.reshape(tuple(x.shape[:lead]) + tuple(y.shape[2:]))


def _shrink(a: dict[str, Any], x: torch.Tensor) -> torch.Tensor:
    lam = rat(a, "lambd", Fraction(1, 2))
    bias = rat(a, "bias", Fraction(0))
    if bias == 0:
        return F.hardshrink(x, float(lam))
    if bias == lam:
        return F.softshrink(x, float(lam))
    raise Unsupported("shrink with a bias other than 0 or λ")


def _const(a: dict[str, Any], like: torch.dtype) -> torch.Tensor:
    vals = [float(rat({"v": v}, "v")) for v in a.get("values", [])]
    return torch.tensor(vals, dtype=like).reshape(tuple(a.get("shape", [])))


def ops(dtype: torch.dtype) -> dict[str, Op]:
    """The registry primitive → PyTorch operation table."""
    def scal(a: dict[str, Any], key: str) -> float:
        return num(a, key)

    return {
        "add": lambda a, x, y: torch.add(x, y),
        "sub": lambda a, x, y: torch.sub(x, y),
        "mul": lambda a, x, y: torch.mul(x, y),
        "div": lambda a, x, y: torch.div(x, y),
        "scale": lambda a, x: torch.mul(x, scal(a, "c")),
        "neg": lambda a, x: torch.neg(x),
        "square": lambda a, x: torch.square(x),
        "abs": lambda a, x: torch.abs(x),
        "sqrt": lambda a, x: torch.sqrt(x),
        "clamp": lambda a, x: torch.clamp(x, scal(a, "lo"), scal(a, "hi")),
        "max": lambda a, x, y: torch.maximum(x, y),
        "min": lambda a, x, y: torch.minimum(x, y),
        "relu": lambda a, x: torch.relu(x),
        "sigmoid": lambda a, x: torch.sigmoid(x),
        "tanh": lambda a, x: torch.tanh(x),
        "gelu": lambda a, x: F.gelu(x, approximate="tanh"),
        "softplus": lambda a, x: F.softplus(x),
        "exp": lambda a, x: torch.exp(x),
        "log": lambda a, x: torch.log(x),
        "safe_log": lambda a, x: torch.log(F.softplus(x) + scal(a, "eps")),
        "inv": lambda a, x: torch.reciprocal(x),
        "sin": lambda a, x: torch.sin(x),
        "cos": lambda a, x: torch.cos(x),
        "sign": lambda a, x: torch.sign(x),
        "sum": lambda a, x: torch.sum(x),
        "reduce_sum": lambda a, x: torch.sum(x, dim=_axis(a, x)),
        "reduce_mean": lambda a, x: torch.mean(x, dim=_axis(a, x)),
        "mse_loss": lambda a, x, y: F.mse_loss(x, y),
        "matmul": lambda a, x, y: torch.matmul(x, y),
        "linear": lambda a, x, w, b: F.linear(x, w, b),
        "softmax": lambda a, x: torch.softmax(x, dim=_axis(a, x)),
        "log_softmax": lambda a, x: torch.log_softmax(x, dim=_axis(a, x)),
        "layer_norm": _layer_norm,
        "instance_norm": lambda a, x, g, b: F.instance_norm(x, weight=g, bias=b, eps=num(a, "eps", DEFAULT_NORM_EPS)),
        "lrn": lambda a, x: F.local_response_norm(x, int(a["size"]), num(a, "alpha"), num(a, "beta"), num(a, "bias")),
        "reshape": lambda a, x: torch.reshape(x, tuple(a.get("shape", []))),
        "flatten": lambda a, x: torch.reshape(x, tuple(x.shape[: _axis(a, x)]) + (-1,)),
        "permute": lambda a, x: torch.permute(x, tuple(a.get("perm", []))),
        "transpose": lambda a, x: torch.transpose(x, _axis(a, x), _axis(a, x, "axis2")),
        "broadcast_to": lambda a, x: torch.broadcast_to(x, tuple(a.get("shape", []))),
        "slice": lambda a, x: torch.narrow(x, _axis(a, x), int(a.get("start", 0)), int(a.get("end", 0)) - int(a.get("start", 0))),
        "concat": lambda a, *xs: torch.cat(xs, dim=_axis(a, xs[0])),
        "detach": lambda a, x: x.detach(),
        "gather": _gather,
        "pad": _pad,
        "shrink": _shrink,
        "conv": _conv,
        "conv_transpose": _conv_transpose,
        "max_pool": _pool("max", False),
        "max_pool_nd": _pool("max", True),
        "avg_pool": _pool("avg", False),
        "avg_pool_nd": _pool("avg", True),
        "const": lambda a: _const(a, dtype),
    }


OPS = sorted(ops(torch.float64))


def conventions() -> list[Convention]:
    """PyTorch's documented derivative conventions where they differ from the registry's."""
    return [
        Convention(
            op="clamp",
            doc="clamp′ = 1 on the closed interval [lo, hi] (the bounds included)",
            source="tools/autograd/derivatives.yaml, clamp: grad * ((self >= min) & (self <= max))",
            builtin="clamp_inclusive",
        ),
        Convention(op="max_pool", doc="max_pool′ at a tie: the whole cotangent to the window's first maximum",
                   source="aten/src/ATen/native/cpu/MaxPoolKernel.cpp: the index of the first maximum (val > maxval)",
                   builtin="max_pool_first"),
        Convention(op="max_pool_nd", doc="max_pool′ at a tie: the whole cotangent to the window's first maximum",
                   source="aten/src/ATen/native/cpu/MaxPoolKernel.cpp: the index of the first maximum (val > maxval)",
                   builtin="max_pool_first"),
    ]


def graph_fn(case: Case, table: dict[str, Op]) -> Callable[..., torch.Tensor]:
    g = case.graph

    def f(*xs: torch.Tensor) -> torch.Tensor:
        vals = list(xs)
        for n in g.nodes:
            vals.append(table[n.op](n.attrs, *[vals[k] for k in n.args]))
        return vals[-1]

    return f


def _tensor(t: Tensor, dtype: torch.dtype, grad: bool = False) -> torch.Tensor:
    x = torch.tensor(t.data, dtype=dtype).reshape(t.shape)
    return x.requires_grad_(grad)


def _out(x: torch.Tensor) -> Tensor:
    x = x.detach().to(torch.float64).contiguous()
    return Tensor(tuple(x.shape), x.reshape(-1).tolist())


class Engine:
    """PyTorch's machines (module doc)."""

    def __init__(self) -> None:
        torch.use_deterministic_algorithms(True)
        machines = [("eager.f64", "float64"), ("eager.f32", "float32"), ("func.f64", "float64"), ("func.f32", "float32")]
        if os.environ.get("TLCHECK_TORCH_COMPILE") == "1":
            machines += [("compile.f64", "float64"), ("compile.f32", "float32")]
        self.info = EngineInfo(name="torch", version=torch.__version__, machines=machines, ops=OPS,
                               conventions=conventions())
        self.tables = {torch.float64: ops(torch.float64), torch.float32: ops(torch.float32)}
        self.compiled: dict[tuple[str, str], Callable[..., torch.Tensor]] = {}

    def run(self, case: Case) -> Result:
        dtype = torch.float64 if case.format == "float64" else torch.float32
        kind = case.machine.split(".")[0]
        f = graph_fn(case, self.tables[dtype])
        if kind == "compile":
            key = (case.graph_key, case.format)
            if key not in self.compiled:
                self.compiled[key] = torch.compile(f, backend="inductor", dynamic=False)
            f = self.compiled[key]
        if "vjp" in case.transforms:
            assert case.cotangent is not None
            xs = [_tensor(t, dtype, True) for t in case.inputs]
            cot = _tensor(case.cotangent, dtype)
            if kind == "func":
                y, pull = torch.func.vjp(f, *xs)
                grads = list(pull(cot))
            else:
                y = f(*xs)
                if y.shape != cot.shape:
                    raise ValueError(f"output shape {tuple(y.shape)}, cotangent {tuple(cot.shape)}")
                if not y.requires_grad:
                    grads = [torch.zeros_like(x) for x in xs]
                else:
                    grads = list(torch.autograd.grad(y, xs, grad_outputs=cot, allow_unused=True, materialize_grads=True))
            return Result(_out(y), grads=[_out(g) for g in grads])
        assert case.tangents is not None
        xs = [_tensor(t, dtype) for t in case.inputs]
        ts = [_tensor(t, dtype) for t in case.tangents]
        if kind == "func":
            y, jv = torch.func.jvp(f, tuple(xs), tuple(ts))
        else:
            import torch.autograd.forward_ad as fwAD

            with fwAD.dual_level():
                duals = [fwAD.make_dual(x, t) for x, t in zip(xs, ts)]
                out = f(*duals)
                y, jv = fwAD.unpack_dual(out)
                if jv is None:
                    jv = torch.zeros_like(y)
        return Result(_out(y), jvp=_out(jv))
