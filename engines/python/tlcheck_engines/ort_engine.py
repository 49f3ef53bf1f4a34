"""ONNX Runtime under the tlcheck.engine.v1 protocol: the forward of every case, float32.

Each case's graph is exported node by node as an ONNX model (opset 20, built with
``onnx.helper``, checked by ``onnx.checker``) whose inputs are the case's inputs, and run on
the CPU execution provider: machine ``cpu.f32`` with ONNX Runtime's default graph
optimisations (fusions), machine ``noopt.f32`` with every optimisation off. ONNX Runtime
has no reverse mode of its own here, so the machines declare the transform ``forward``
only and the harness judges the forward obligation.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from .attrs import DEFAULT_NORM_EPS, num, rat, window
from .protocol import Case, EngineInfo, Result, Tensor, Unsupported

OPSET = 20


class Builder:
    """Collects the ONNX nodes and constants of one graph."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names = (f"t{i}" for i in itertools.count())
        self.shapes: dict[str, tuple[int, ...]] = {}

    def fresh(self) -> str:
        return next(self.names)

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        name = self.fresh()
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op: str, ins: list[str], **attrs: Any) -> str:
        out = self.fresh()
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out


Op = Callable[..., str]


def _ints(v: Any) -> list[int]:
    return [int(x) for x in v]


def _axis(a: dict[str, Any], rank: int, key: str = "axis") -> int:
    ax = int(a.get(key, 0))
    return ax + rank if ax < 0 else ax


def table() -> dict[str, Callable[[Builder, dict[str, Any], list[str], list[tuple[int, ...]]], str]]:
    """The registry primitive → ONNX operator table; each entry gets the builder, attributes,
    argument names and argument shapes, and returns its output's name."""
    def un(op: str, **kw: Any) -> Callable[..., str]:
        return lambda b, a, xs, s: b.node(op, xs, **kw)

    def reduce(op: str) -> Callable[..., str]:
        return lambda b, a, xs, s: b.node(op, [xs[0], b.const([_axis(a, len(s[0]))], np.int64)], keepdims=0)

    def win_attrs(a: dict[str, Any], nd: bool, pool: bool) -> dict[str, Any]:
        w = window(a)
        kw: dict[str, Any] = {"kernel_shape": _ints(w["kernel"]), "strides": _ints(w["stride"]), "pads": _ints(w["pads"])}
        if any(d != 1 for d in w["dilation"]):
            kw["dilations"] = _ints(w["dilation"])
        if pool and w["ceil_mode"]:
            kw["ceil_mode"] = 1
        return kw

    def conv(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        w = window(a)
        if len(s[0]) != len(w["kernel"]) + 2:
            raise Unsupported("conv input without exactly one batch axis")
        return b.node("Conv", xs, group=int(w["groups"]), **win_attrs(a, True, False))

    def conv_t(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        w = window(a)
        if len(s[0]) != len(w["kernel"]) + 2:
            raise Unsupported("conv_transpose input without exactly one batch axis")
        kw = win_attrs(a, True, False)
        if any(w["output_padding"]):
            kw["output_padding"] = _ints(w["output_padding"])
        return b.node("ConvTranspose", xs, group=int(w["groups"]), **kw)

    def pool(kind: str, nd: bool) -> Callable[..., str]:
        def f(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
            w = window(a)
            if len(s[0]) != len(w["kernel"]) + 2:
                raise Unsupported("pool input without exactly batch and channel axes")
            kw = win_attrs(a, nd, True)
            if kind == "max":
                return b.node("MaxPool", xs, **kw)
            if "dilations" in kw:
                raise Unsupported("dilated average pooling")
            cip = int(w["count_include_pad"]) if nd else 1
            return b.node("AveragePool", xs, count_include_pad=cip, **kw)
        return f

    def layer_norm(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        r = len(s[0])
        ax = _axis(a, r)
        if ax != r - 1:
            raise Unsupported("layer_norm along an axis that is not the last")
        n = s[0][ax]
        g = xs[1] if len(xs) > 1 else b.const(np.ones(n))
        ins = [xs[0], g] + ([xs[2]] if len(xs) > 2 else [])
        return b.node("LayerNormalization", ins, axis=ax, epsilon=num(a, "eps", DEFAULT_NORM_EPS))

    def linear(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        wt = b.node("Transpose", [xs[1]], perm=[1, 0])
        return b.node("Add", [b.node("MatMul", [xs[0], wt]), xs[2]])

    def reshape(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("Reshape", [xs[0], b.const(_ints(a.get("shape", [])), np.int64)])

    def flatten(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        ax = _axis(a, len(s[0]))
        return b.node("Reshape", [xs[0], b.const(list(s[0][:ax]) + [-1], np.int64)])

    def transpose(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        r = len(s[0])
        perm = list(range(r))
        i, j = _axis(a, r), _axis(a, r, "axis2")
        perm[i], perm[j] = perm[j], perm[i]
        return b.node("Transpose", xs, perm=perm)

    def slice_(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        ax = _axis(a, len(s[0]))
        return b.node("Slice", [xs[0], b.const([int(a.get("start", 0))], np.int64), b.const([int(a.get("end", 0))], np.int64),
                                b.const([ax], np.int64)])

    def gather(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        idx = np.asarray(a.get("indices", []), dtype=np.int64).reshape(tuple(a.get("indices_shape", [])))
        return b.node("Gather", [xs[0], b.const(idx, np.int64)], axis=_axis(a, len(s[0])))

    def pad(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        mode = a.get("mode", "constant")
        ins = [xs[0], b.const(_ints(a.get("widths", [])), np.int64)]
        if mode == "constant":
            ins.append(b.const(num(a, "value", 0)))
        return b.node("Pad", ins, mode=mode)

    def scale(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("Mul", [xs[0], b.const(num(a, "c"))])

    def clamp(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("Clip", [xs[0], b.const(num(a, "lo")), b.const(num(a, "hi"))])

    def shrink(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("Shrink", xs, lambd=float(rat(a, "lambd", Fraction(1, 2))), bias=float(rat(a, "bias", Fraction(0))))

    def lrn(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("LRN", xs, size=int(a["size"]), alpha=num(a, "alpha"), beta=num(a, "beta"), bias=num(a, "bias"))

    def inorm(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        return b.node("InstanceNormalization", xs, epsilon=num(a, "eps", DEFAULT_NORM_EPS))

    def bnorm(b: Builder, a: dict[str, Any], xs: list[str], s: list[tuple[int, ...]]) -> str:
        if _axis(a, len(s[0])) != 1 or len(xs) != 5:
            raise Unsupported("batch_norm_eval other than channel axis 1 with γ and β")
        x, mu, var, g, be = xs
        return b.node("BatchNormalization", [x, g, be, mu, var], epsilon=num(a, "eps", DEFAULT_NORM_EPS))

    return {
        "add": un("Add"), "sub": un("Sub"), "mul": un("Mul"), "div": un("Div"), "scale": scale,
        "neg": un("Neg"), "square": lambda b, a, xs, s: b.node("Mul", [xs[0], xs[0]]), "abs": un("Abs"),
        "sqrt": un("Sqrt"), "clamp": clamp, "max": un("Max"), "min": un("Min"), "relu": un("Relu"),
        "sigmoid": un("Sigmoid"), "tanh": un("Tanh"), "gelu": un("Gelu", approximate="tanh"),
        "softplus": un("Softplus"), "exp": un("Exp"), "log": un("Log"), "inv": un("Reciprocal"),
        "sin": un("Sin"), "cos": un("Cos"), "sign": un("Sign"),
        "sum": lambda b, a, xs, s: b.node("ReduceSum", [xs[0]], keepdims=0),
        "reduce_sum": reduce("ReduceSum"), "reduce_mean": reduce("ReduceMean"),
        "matmul": un("MatMul"), "linear": linear,
        "softmax": lambda b, a, xs, s: b.node("Softmax", xs, axis=_axis(a, len(s[0]))),
        "log_softmax": lambda b, a, xs, s: b.node("LogSoftmax", xs, axis=_axis(a, len(s[0]))),
        "layer_norm": layer_norm, "instance_norm": inorm, "batch_norm_eval": bnorm, "lrn": lrn,
        "reshape": reshape, "flatten": flatten,
        "permute": lambda b, a, xs, s: b.node("Transpose", xs, perm=_ints(a.get("perm", []))),
        "transpose": transpose,
        "broadcast_to": lambda b, a, xs, s: b.node("Expand", [xs[0], b.const(_ints(a.get("shape", [])), np.int64)]),
        "slice": slice_, "concat": lambda b, a, xs, s: b.node("Concat", xs, axis=_axis(a, len(s[0]))),
        "detach": un("Identity"), "gather": gather, "pad": pad, "shrink": shrink,
        "conv": conv, "conv_transpose": conv_t,
        "max_pool": pool("max", False), "max_pool_nd": pool("max", True),
        "avg_pool": pool("avg", False), "avg_pool_nd": pool("avg", True),
    }


TABLE = table()
OPS = sorted(TABLE)


def export(case: Case) -> onnx.ModelProto:
    """The case's graph as an ONNX model over float32 inputs x0…; output y."""
    b = Builder()
    names = [f"x{i}" for i in range(case.graph.inputs)]
    vals = list(names)
    shapes = [t.shape for t in case.inputs]
    for j, n in enumerate(case.graph.nodes):
        ins = [vals[k] for k in n.args]
        ins_shapes = [shapes[k] for k in n.args]
        out = TABLE[n.op](b, n.attrs, ins, ins_shapes)
        vals.append(out)
        shapes.append(_infer_shape(b, names, case, out))
    b.nodes.append(helper.make_node("Identity", [vals[-1]], ["y"]))
    inputs = [helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(t.shape)) for nm, t in zip(names, case.inputs)]
    graph = helper.make_graph(b.nodes, "case", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shapes[-1]))], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tlcheck_engines")
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def _infer_shape(b: Builder, names: list[str], case: Case, out: str) -> tuple[int, ...]:
    """The shape of value out, from ONNX shape inference over the nodes so far."""
    inputs = [helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(t.shape)) for nm, t in zip(names, case.inputs)]
    g = helper.make_graph(list(b.nodes), "s", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], list(b.inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 9
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        if vi.name == out:
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                return tuple(int(d.dim_value) for d in dims)
    raise Unsupported(f"no static shape for {out}")


class Engine:
    """ONNX Runtime's machines (module doc)."""

    def __init__(self) -> None:
        self.info = EngineInfo(name="onnxruntime", version=f"{ort.__version__} (onnx {onnx.__version__}, opset {OPSET})",
                               machines=[("cpu.f32", "float32"), ("noopt.f32", "float32")], ops=OPS,
                               transforms=["forward"])
        self.sessions: dict[tuple[str, str], ort.InferenceSession] = {}

    def run(self, case: Case) -> Result:
        if case.transforms != ("forward",):
            raise Unsupported("onnxruntime runs the forward only")
        # A session is built for the inputs' shapes: the key holds them.
        key = (case.graph_key + repr([t.shape for t in case.inputs]), case.machine)
        if key not in self.sessions:
            so = ort.SessionOptions()
            so.intra_op_num_threads = 1
            so.inter_op_num_threads = 1
            so.log_severity_level = 3
            if case.machine.startswith("noopt"):
                so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            self.sessions[key] = ort.InferenceSession(export(case).SerializeToString(), so, providers=["CPUExecutionProvider"])
        feeds = {f"x{i}": np.asarray(t.data, dtype=np.float32).reshape(t.shape) for i, t in enumerate(case.inputs)}
        (y,) = self.sessions[key].run(["y"], feeds)
        a = np.asarray(y, dtype=np.float64)
        return Result(Tensor(tuple(a.shape), a.reshape(-1).tolist()))
