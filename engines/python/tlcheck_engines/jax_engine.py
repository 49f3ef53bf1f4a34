"""JAX under the tlcheck.engine.v1 protocol.

Machines, each in float64 (x64 mode) and float32: ``eager`` (``jax.vjp`` / ``jax.jvp`` with
JAX's op-by-op dispatch) and ``jit`` (the same function under ``jax.jit``, compiled by XLA for the CPU; one
compilation per graph and format, reused for the zero cotangent). Every registry
primitive is mapped to the jax.numpy / jax.nn / jax.lax operation that implements it.

Where the time goes (measured, docs/engines.md "CI"): XLA compilations. Eager dispatch
compiles every primitive at every new shape, dtype and attribute set, and each jit machine
compiles each graph per format and transform: about 28 compilations per random case (558
for 20 cases, 46 of their 63 s in ``backend_compile_and_load``; tracing and lowering most of
the rest; the process starts once per run). With ``TLCHECK_JAX_CACHE`` set to a directory,
JAX's persistent compilation cache keeps every executable there (no size or compile-time
threshold), so a second run of the same cases — CI's seeded ones — loads them instead of
compiling; the executables are XLA's own, so the values are the same bit for bit
(tests/test_jax_cache.py).
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any, Callable

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
if os.environ.get("TLCHECK_JAX_CACHE"):
    jax.config.update("jax_compilation_cache_dir", os.environ["TLCHECK_JAX_CACHE"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from .attrs import DEFAULT_NORM_EPS, num, rat, symmetric_pads, window  # noqa: E402
from .protocol import Case, Convention, EngineInfo, Result, Tensor, Unsupported  # noqa: E402

Op = Callable[..., Any]


def _axis(a: dict[str, Any], x: Any, key: str = "axis") -> int:
    ax = int(a.get(key, 0))
    return ax + x.ndim if ax < 0 else ax


def _conv(a: dict[str, Any], x: Any, w: Any, b: Any = None) -> Any:
    win = window(a)
    r = len(win["kernel"])
    lead = x.shape[: x.ndim - r - 1]
    xs = x.reshape((-1,) + x.shape[x.ndim - r - 1 :])
    pads = win["pads"]
    y = lax.conv_general_dilated(xs, w, window_strides=win["stride"], padding=[(pads[d], pads[r + d]) for d in range(r)],
                                 rhs_dilation=win["dilation"], feature_group_count=win["groups"])
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * r)
    return y.reshape(lead + y.shape[1:])


def _pool(kind: str, nd: bool) -> Op:
    def f(a: dict[str, Any], x: Any) -> Any:
        win = window(a)
        r = len(win["kernel"])
        if win["ceil_mode"]:
            raise Unsupported("ceil_mode")
        pads = win["pads"]
        lead = x.ndim - r
        dims = (1,) * lead + tuple(win["kernel"])
        strides = (1,) * lead + tuple(win["stride"])
        dil = (1,) * lead + tuple(win["dilation"])
        padding = [(0, 0)] * lead + [(pads[d], pads[r + d]) for d in range(r)]
        if kind == "max":
            # Python scalars as init values: JAX then recognises the max
            # and add reductions and uses their differentiable primitives
            # (a traced array init is a generic, undifferentiable reduction).
            return lax.reduce_window(x, -np.inf, lax.max, dims, strides, padding, window_dilation=dil)
        if any(d != 1 for d in win["dilation"]):
            raise Unsupported("dilated average pooling")
        s = lax.reduce_window(x, 0.0, lax.add, dims, strides, padding)
        if nd and not win["count_include_pad"] and any(pads):
            ones = jnp.ones(x.shape, x.dtype)
            cnt = lax.reduce_window(ones, 0.0, lax.add, dims, strides, padding)
            return s / cnt
        k = 1
        for d in win["kernel"]:
            k *= d
        return s / k

    return f


def _layer_norm(a: dict[str, Any], x: Any, g: Any = None, b: Any = None) -> Any:
    ax = _axis(a, x)
    eps = num(a, "eps", DEFAULT_NORM_EPS)
    mu = jnp.mean(x, axis=ax, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), axis=ax, keepdims=True)
    y = (x - mu) * lax.rsqrt(var + eps)
    shape = [1] * x.ndim
    shape[ax] = x.shape[ax]
    if g is not None:
        y = y * g.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y


def _gather(a: dict[str, Any], x: Any) -> Any:
    ax = _axis(a, x)
    idx = np.asarray(a.get("indices", []), dtype=np.int64).reshape(tuple(a.get("indices_shape", [])))
    return jnp.take(x, idx, axis=ax)


def _pad(a: dict[str, Any], x: Any) -> Any:
    w = a.get("widths", [])
    r = x.ndim
    pw = [(w[d], w[r + d]) for d in range(r)]
    mode = a.get("mode", "constant")
    if mode == "constant":
        return jnp.pad(x, pw, mode="constant", constant_values=num(a, "value", 0))
    jm = {"reflect": "reflect", "edge": "edge"}.get(mode)
    if jm is None:
        raise Unsupported(f"pad mode {mode}")
    return jnp.pad(x, pw, mode=jm)


def _shrink(a: dict[str, Any], x: Any) -> Any:
    lam = float(rat(a, "lambd", Fraction(1, 2)))
    bias = float(rat(a, "bias", Fraction(0)))
    return jnp.where(x > lam, x - bias, jnp.where(x < -lam, x + bias, jnp.zeros_like(x)))


def ops() -> dict[str, Op]:
    """The registry primitive → JAX operation table."""
    return {
        "add": lambda a, x, y: x + y,
        "sub": lambda a, x, y: x - y,
        "mul": lambda a, x, y: x * y,
        "div": lambda a, x, y: x / y,
        "scale": lambda a, x: x * num(a, "c"),
        "neg": lambda a, x: -x,
        "square": lambda a, x: jnp.square(x),
        "abs": lambda a, x: jnp.abs(x),
        "sqrt": lambda a, x: jnp.sqrt(x),
        "clamp": lambda a, x: jnp.clip(x, num(a, "lo"), num(a, "hi")),
        "max": lambda a, x, y: jnp.maximum(x, y),
        "min": lambda a, x, y: jnp.minimum(x, y),
        "relu": lambda a, x: jax.nn.relu(x),
        "sigmoid": lambda a, x: jax.nn.sigmoid(x),
        "tanh": lambda a, x: jnp.tanh(x),
        "gelu": lambda a, x: jax.nn.gelu(x, approximate=True),
        "softplus": lambda a, x: jax.nn.softplus(x),
        "exp": lambda a, x: jnp.exp(x),
        "log": lambda a, x: jnp.log(x),
        "safe_log": lambda a, x: jnp.log(jax.nn.softplus(x) + num(a, "eps")),
        "inv": lambda a, x: jnp.reciprocal(x),
        "sin": lambda a, x: jnp.sin(x),
        "cos": lambda a, x: jnp.cos(x),
        "sign": lambda a, x: jnp.sign(x),
        "sum": lambda a, x: jnp.sum(x),
        "reduce_sum": lambda a, x: jnp.sum(x, axis=_axis(a, x)),
        "reduce_mean": lambda a, x: jnp.mean(x, axis=_axis(a, x)),
        "mse_loss": lambda a, x, y: jnp.mean(jnp.square(x - y)),
        "matmul": lambda a, x, y: jnp.matmul(x, y),
        "linear": lambda a, x, w, b: jnp.matmul(x, w.T) + b,
        "softmax": lambda a, x: jax.nn.softmax(x, axis=_axis(a, x)),
        "log_softmax": lambda a, x: jax.nn.log_softmax(x, axis=_axis(a, x)),
        "layer_norm": _layer_norm,
        "reshape": lambda a, x: jnp.reshape(x, tuple(a.get("shape", []))),
        "flatten": lambda a, x: jnp.reshape(x, tuple(x.shape[: _axis(a, x)]) + (-1,)),
        "permute": lambda a, x: jnp.transpose(x, tuple(a.get("perm", []))),
        "transpose": lambda a, x: jnp.swapaxes(x, _axis(a, x), _axis(a, x, "axis2")),
        "broadcast_to": lambda a, x: jnp.broadcast_to(x, tuple(a.get("shape", []))),
        "slice": lambda a, x: lax.slice_in_dim(x, int(a.get("start", 0)), int(a.get("end", 0)), axis=_axis(a, x)),
        "concat": lambda a, *xs: jnp.concatenate(xs, axis=_axis(a, xs[0])),
        "detach": lambda a, x: lax.stop_gradient(x),
        "gather": _gather,
        "pad": _pad,
        "shrink": _shrink,
        "conv": _conv,
        "max_pool": _pool("max", False),
        "max_pool_nd": _pool("max", True),
        "avg_pool": _pool("avg", False),
        "avg_pool_nd": _pool("avg", True),
    }


TABLE = ops()
OPS = sorted(TABLE)


def conventions() -> list[Convention]:
    """JAX's derivative conventions where they differ from the registry's."""
    first = "lax.reduce_window max, transposed by select_and_scatter_add with select ge: the first maximum"
    return [
        Convention(op="abs", doc="abs′(0) = 1", source="observed; jax/_src/lax/lax.py, abs's JVP select(x >= 0, g, -g)",
                   graph={"inputs": 1, "nodes": [{"op": "neg", "args": [0]}, {"op": "relu", "args": [1]},
                                                 {"op": "scale", "attrs": {"c": "2"}, "args": [2]}, {"op": "add", "args": [0, 3]}]}),
        Convention(op="clamp", doc="clamp′ = 1/2 at the bounds (jnp.clip is minimum(maximum(x, lo), hi))",
                   source="jax/_src/numpy/lax_numpy.py clip; lax.max/min JVP split ties evenly", builtin="clamp_half"),
        Convention(op="max_pool", doc="max_pool′ at a tie: the whole cotangent to the window's first maximum", source=first,
                   builtin="max_pool_first"),
        Convention(op="max_pool_nd", doc="max_pool′ at a tie: the whole cotangent to the window's first maximum", source=first,
                   builtin="max_pool_first"),
    ]


def graph_fn(case: Case) -> Callable[..., Any]:
    g = case.graph

    def f(*xs: Any) -> Any:
        vals = list(xs)
        for n in g.nodes:
            vals.append(TABLE[n.op](n.attrs, *[vals[k] for k in n.args]))
        return vals[-1]

    return f


def _array(t: Tensor, dtype: Any) -> Any:
    return jnp.asarray(np.asarray(t.data, dtype=np.float64).astype(dtype).reshape(t.shape))


def _out(x: Any) -> Tensor:
    a = np.asarray(x, dtype=np.float64)
    return Tensor(tuple(a.shape), a.reshape(-1).tolist())


class Engine:
    """JAX's machines (module doc)."""

    def __init__(self) -> None:
        machines = [("eager.f64", "float64"), ("eager.f32", "float32"), ("jit.f64", "float64"), ("jit.f32", "float32")]
        self.info = EngineInfo(name="jax", version=f"{jax.__version__} (jaxlib {jax.lib.__version__ if hasattr(jax.lib, '__version__') else jax.__version__})",
                               machines=machines, ops=OPS, conventions=conventions())
        self.cache: dict[tuple[str, str, str], Callable[..., Any]] = {}

    def _fn(self, case: Case, transform: str) -> Callable[..., Any]:
        f = graph_fn(case)
        if transform == "vjp":
            def vjp(xs: tuple[Any, ...], cot: Any) -> Any:
                y, pull = jax.vjp(f, *xs)
                return y, pull(cot)
            h = vjp
        else:
            def jvp(xs: tuple[Any, ...], ts: tuple[Any, ...]) -> Any:
                return jax.jvp(f, xs, ts)
            h = jvp
        if case.machine.startswith("jit"):
            key = (case.graph_key, case.format, transform)
            if key not in self.cache:
                if len(self.cache) >= 256:
                    self.cache.clear()  # bounded memory over thousands of graphs
                    jax.clear_caches()
                self.cache[key] = jax.jit(h)
            return self.cache[key]
        return h

    def run(self, case: Case) -> Result:
        dtype = np.float64 if case.format == "float64" else np.float32
        xs = tuple(_array(t, dtype) for t in case.inputs)
        if "vjp" in case.transforms:
            assert case.cotangent is not None
            cot = _array(case.cotangent, dtype)
            h = self._fn(case, "vjp")
            y, grads = h(xs, cot)
            return Result(_out(y), grads=[_out(g) for g in grads])
        assert case.tangents is not None
        ts = tuple(_array(t, dtype) for t in case.tangents)
        h = self._fn(case, "jvp")
        y, jv = h(xs, ts)
        return Result(_out(y), jvp=_out(jv))
