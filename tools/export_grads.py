#!/usr/bin/env python3
"""Export models from real runtimes with their float32 gradients, for `tlcheck compare-grad`.

Run in CI by ci/stage-engines.sh (engines/python/tests/test_export_grads.py): with the
pinned torch, onnxscript and jax of requirements.lock it builds every model below with
SEEDED random weights (nothing is downloaded), exports it to ONNX, dumps its float32
gradients from the runtime's own autodiff, and `tlcheck compare-grad` must hold on every
one, while a dumped value moved to the first float32 outside its element's bound fails on
exactly that element (docs/engines.md, "Gradients from real runtimes"). The JSON layout
(tlcheck.grads.v1) is also tested from Go (cmd/tlcheck/dump_grad_test.go, TestGradsLayout).

Usage:

    python3 tools/export_grads.py OUTDIR [MODEL ...]     # default: every model
    tlcheck compare-grad --onnx OUTDIR/MODEL/model.onnx --input OUTDIR/MODEL/input_0.pb \\
        --grads OUTDIR/MODEL/grads.json

Models (MODELS): PyTorch modules exported with torch.onnx.export and differentiated with
torch.autograd.grad —
  * mlp        Linear → ReLU → Linear
  * conv_bn    Conv2d → BatchNorm2d (eval) → ReLU → MaxPool2d
  * ln_gelu    Linear → LayerNorm → GELU (erf) → Linear
  * attention  one-head self-attention: softmax(QKᵀ/√d)·V, then an output Linear
  * conv1d_prelu  Conv1d → Softsign → AvgPool1d → PReLU → Flatten → Linear → LogSoftmax
  * convt_dw   ConvTranspose2d → Tanh → ZeroPad2d → LeakyReLU → depthwise Conv2d → SELU →
               Sigmoid → Flatten → Linear → Softmax
  * elu_softplus  Linear → ELU(0.7) → Linear → Softplus(β = 2, threshold = 1/2) (the exporter
               writes the threshold as Where(Greater(β·x, threshold), x, Softplus(β·x)/β); the
               threshold 1/2 puts 3 of its 12 elements on the x side)
  (the last three chain modules the pytorch-converted ONNX tests in ../shared/onnx come from)
and a JAX function differentiated with jax.grad —
  * jax_mlp    dense → relu → dense → tanh → dense, in float32. JAX has no ONNX exporter in
               the lock, so its ONNX model is translated here from the function's own jaxpr
               (jax.make_jaxpr, primitive by primitive: jaxpr_to_onnx), with the parameters
               as initializers named as in the parameter dict: the graph tlcheck reads is the
               graph JAX differentiated, not a copy written by hand.
  * jax_mlp_jit  the same function and weights, its gradients computed under jax.jit (one XLA
               computation, fused and reordered as XLA chooses)
and the real models of tools/models (tlcheck_models.zoo, seed 0, nothing downloaded), whose
dumps are judged with inconclusive elements allowed and counted —
  * zoo_mlp, zoo_resnet, zoo_bert (transformers' BertModel; token ids, an int64 input without
               gradient), zoo_vit (transformers' ViTModel)

Each MODEL directory holds
  * model.onnx  -- the model, initializers kept (do_constant_folding=False for torch, so
                   parameter names survive);
  * input_0.pb  -- the input as an ONNX TensorProto;
  * grads.json  -- {"format": "tlcheck.grads.v1",
                    "cotangent": {OUTPUT_NAME: {"shape": [...], "values": [...]}},
                    "grads": {NAME: {"shape": [...], "values": [...]}, ...}}
    with the gradient of <cotangent, model(x)> (a seeded random float32 cotangent) w.r.t.
    the input (named as the ONNX graph input) and every parameter (named as its
    initializer). Values are row-major float32s written as Python floats (the float64 repr
    of the float32, which compare-grad reads back exactly); NaN and infinities as the
    strings "NaN", "+Inf", "-Inf" (the spelling of every tlcheck JSON document).
"""
from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Callable

import numpy as np

TORCH_MODELS = ("mlp", "conv_bn", "ln_gelu", "attention", "conv1d_prelu", "convt_dw", "elu_softplus")
JAX_MODELS = ("jax_mlp", "jax_mlp_jit")
# The real models of tools/models (tlcheck_models.zoo, seed 0, nothing downloaded): "zoo_" + the
# zoo's name. Their dumps are judged with inconclusive elements allowed and counted.
# Not here: GPT-2 (without constant folding its causal-mask slice stays an Equal on data,
# which the import refuses; with it the exporter folds the weights' transposes, so the
# parameters are no longer initializers) and Llama (with the dynamo exporter's optimiser off
# a Cast FLOAT → BOOL in the library's mask code is refused; with it on the weights are folded).
ZOO_MODELS = ("zoo_mlp", "zoo_resnet", "zoo_bert", "zoo_vit")
MODELS = TORCH_MODELS + JAX_MODELS + ZOO_MODELS


def values(a: np.ndarray) -> list[Any]:
    out: list[Any] = []
    for v in np.asarray(a, dtype=np.float32).reshape(-1).tolist():
        if math.isnan(v):
            out.append("NaN")
        elif math.isinf(v):
            out.append("+Inf" if v > 0 else "-Inf")
        else:
            out.append(v)
    return out


def tensor(a: np.ndarray) -> dict[str, Any]:
    return {"shape": list(np.shape(a)), "values": values(a)}


def write_dump(outdir: str, x_name: str, x: np.ndarray, out_name: str, cot: np.ndarray,
               grads: dict[str, np.ndarray]) -> None:
    from onnx import numpy_helper

    x = np.asarray(x)
    if x.dtype.kind == "f":
        x = x.astype(np.float32)
    with open(os.path.join(outdir, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, x_name).SerializeToString())
    doc = {"format": "tlcheck.grads.v1", "cotangent": {out_name: tensor(cot)},
           "grads": {name: tensor(g) for name, g in grads.items()}}
    with open(os.path.join(outdir, "grads.json"), "w") as f:
        json.dump(doc, f, allow_nan=False)


# ---------------------------------------------------------------- PyTorch


def torch_model(name: str) -> tuple[Any, Any]:
    """The module (float32, eval mode) and its input, from seed 0."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    if name == "mlp":
        return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).eval(), torch.randn(5, 4)
    if name == "conv_bn":
        m = nn.Sequential(nn.Conv2d(2, 3, kernel_size=3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2))
        bn = m[1]
        with torch.no_grad():  # non-trivial running statistics and affine parameters
            bn.running_mean.copy_(torch.randn(3) * 0.1)
            bn.running_var.copy_(torch.rand(3) + 0.5)
            bn.weight.copy_(torch.rand(3) + 0.5)
            bn.bias.copy_(torch.randn(3) * 0.1)
        return m.eval(), torch.randn(1, 2, 4, 4)
    if name == "ln_gelu":
        return nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3)).eval(), torch.randn(4, 6)
    if name == "attention":

        class Attention(nn.Module):
            """One-head self-attention: out(softmax(q kᵀ / √d) v), q, k, v = Linear(x)."""

            def __init__(self, d: int) -> None:
                super().__init__()
                self.q, self.k, self.v, self.out = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
                self.scale = 1.0 / math.sqrt(d)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                s = torch.matmul(self.q(x), self.k(x).transpose(-2, -1)) * self.scale
                return self.out(torch.matmul(torch.softmax(s, dim=-1), self.v(x)))

        # A 2-D input (sequence × features), so that torch exports each Linear as a Gemm,
        # whose weight and bias tlcheck keeps as parameters (a 3-D batch gives
        # MatMul + Add, whose initializers tlcheck reads as constants: not checked).
        return Attention(8).eval(), torch.randn(5, 8)
    if name == "conv1d_prelu":
        return nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.Softsign(), nn.AvgPool1d(2), nn.PReLU(4),
                             nn.Flatten(), nn.Linear(12, 5), nn.LogSoftmax(dim=1)).eval(), torch.randn(2, 2, 6)
    if name == "convt_dw":
        return nn.Sequential(nn.ConvTranspose2d(2, 3, 2, stride=2), nn.Tanh(), nn.ZeroPad2d(1), nn.LeakyReLU(0.1),
                             nn.Conv2d(3, 3, 3, groups=3), nn.SELU(), nn.Sigmoid(), nn.Flatten(), nn.Linear(48, 4),
                             nn.Softmax(dim=1)).eval(), torch.randn(1, 2, 2, 2)
    if name == "elu_softplus":
        return nn.Sequential(nn.Linear(5, 6), nn.ELU(0.7), nn.Linear(6, 4),
                             nn.Softplus(beta=2.0, threshold=0.5)).eval(), torch.randn(3, 5)
    raise SystemExit(f"export_grads: unknown torch model {name!r} (models: {', '.join(MODELS)})")


def zoo_model(name: str) -> tuple[Any, Any, dict[str, Any]]:
    """The tools/models zoo's model name[4:] (seed 0, eval mode), its one input and its export
    options: the dynamo exporter as for the models above, except for the ResNet, whose
    bias-free convolutions the dynamo exporter gives a computed zero bias (which tlcheck's Conv
    import refuses), exported with TorchScript (dynamo=False, opset 17). export_torch checks
    that every parameter is still an initializer."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
    from tlcheck_models import zoo

    spec = {s.name: s for s in zoo.ZOO}[name[len("zoo_"):]]
    model, inputs = zoo.build(spec, 0)
    if name == "zoo_resnet":
        return model, inputs[0], {"dynamo": False, "opset_version": 17}
    if name == "zoo_bert":
        # nn.Embedding's padding_idx (BertConfig.pad_token_id = 0) is a gradient convention, not a
        # function: the forward reads row 0 like any other, but autograd zeroes that row's
        # gradient. The exported ONNX graph is a Gather, whose exact gradient at row 0 is not zero
        # when token 0 is in the input (seed 0 draws it), so compare-grad FAILS that row -- a true
        # statement about PyTorch's convention (docs/engines.md). The dump judges the gradient of
        # the function itself: padding_idx off, which changes neither the weights nor the forward.
        model.model.embeddings.word_embeddings.padding_idx = None
    return model, inputs[0], {}


def export_torch(name: str, outdir: str) -> None:
    import onnx
    import torch

    opts: dict[str, Any] = {"optimize": False, "external_data": False}
    if name in ZOO_MODELS:
        model, x, zopts = zoo_model(name)
        opts = {**opts, **zopts}
        if opts.get("dynamo") is False:
            del opts["optimize"], opts["external_data"]
    else:
        model, x = torch_model(name)
    model = model.float()
    if x.is_floating_point():
        x = x.float()
    path = os.path.join(outdir, "model.onnx")
    opts.setdefault("do_constant_folding", False)
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], export_params=True, **opts)
    inits = {i.name for i in onnx.load(path).graph.initializer}
    xf = x.is_floating_point()  # token ids (an Embedding's indices) have no gradient
    xg = x.clone().requires_grad_(True) if xf else x
    y = model(xg)
    torch.manual_seed(1)
    cot = torch.randn(y.shape, dtype=torch.float32)
    params = dict(model.named_parameters())
    gs = torch.autograd.grad(y, ([xg] if xf else []) + list(params.values()), grad_outputs=cot, allow_unused=True)
    grads = {"x": gs[0].detach().numpy()} if xf else {}
    for pname, g in zip(params, gs[1:] if xf else gs):
        if g is None:
            g = torch.zeros_like(params[pname])  # unused by this forward: its gradient is 0
        if pname not in inits:
            sys.exit(f"export_grads: {name}: parameter {pname} is not an initializer of the exported graph (constant folding?)")
        grads[pname] = g.detach().numpy()
    write_dump(outdir, "x", x.numpy(), "y", cot.numpy(), grads)


# ---------------------------------------------------------------- JAX


def jax_mlp() -> tuple[Callable[..., Any], dict[str, np.ndarray], np.ndarray]:
    """The function f(params, x), its float32 parameters and input, from seed 0."""
    import jax
    import jax.numpy as jnp

    def f(p: dict[str, Any], x: Any) -> Any:  # weights [out, in], as torch.nn.Linear and ONNX Gemm(transB=1)
        h = jax.nn.relu(x @ p["w1"].T + p["b1"])
        h = jnp.tanh(h @ p["w2"].T + p["b2"])
        return h @ p["w3"].T + p["b3"]

    rng = np.random.default_rng(0)
    shapes = {"w1": (6, 4), "b1": (6,), "w2": (5, 6), "b2": (5,), "w3": (2, 5), "b3": (2,)}
    params = {k: rng.standard_normal(s).astype(np.float32) * np.float32(0.5) for k, s in shapes.items()}
    return f, params, rng.standard_normal((3, 4)).astype(np.float32)


def jaxpr_to_onnx(closed: Any, in_names: list[str], inits: dict[str, np.ndarray], out_name: str) -> Any:
    """An ONNX model (opset 20) computing the closed jaxpr, primitive by primitive.

    in_names name the jaxpr's flattened inputs; those in inits become initializers, the
    others graph inputs. A dense layer, add(dot_general(x, transpose(W)), broadcast_in_dim(b))
    with W and b parameters, becomes one Gemm(x, W, b, transB=1), the form whose W and b
    tlcheck's importer keeps as differentiable parameters (torch exports nn.Linear so).
    Otherwise translated one by one: dot_general (a plain matrix product), add, sub, mul,
    div, max, min, neg, exp, log, tanh, logistic, broadcast_in_dim, reshape, transpose,
    convert_element_type (float32 → float32), and pjit / custom_jvp_call / custom_vjp_call
    by inlining their inner jaxpr. Anything else is refused with the primitive's name.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    consts: list[Any] = []
    counter = [0]

    def fresh(base: str) -> str:
        counter[0] += 1
        return f"{base}_{counter[0]}"

    def const(value: np.ndarray) -> str:
        n = fresh("const")
        consts.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def dense_layers(jaxpr: Any) -> tuple[dict[int, tuple[Any, Any, Any]], set[int]]:
        """Each add eqn that closes a dense layer → (x, W, b) vars; the eqns it absorbs."""
        defs = {id(v): (i, e) for i, e in enumerate(jaxpr.eqns) for v in e.outvars}
        uses: dict[int, int] = {}
        for e in jaxpr.eqns:
            for v in e.invars:
                uses[id(v)] = uses.get(id(v), 0) + 1
        params = {id(v) for v in jaxpr.invars}

        def single(v: Any, prim: str) -> tuple[int, Any] | None:
            d = defs.get(id(v))
            if d is None or d[1].primitive.name != prim or uses.get(id(v)) != 1:
                return None
            return d

        fused: dict[int, tuple[Any, Any, Any]] = {}
        absorbed: set[int] = set()
        for i, e in enumerate(jaxpr.eqns):
            if e.primitive.name != "add":
                continue
            dot, bb = single(e.invars[0], "dot_general"), single(e.invars[1], "broadcast_in_dim")
            if dot is None or bb is None or id(bb[1].invars[0]) not in params:
                continue
            tr = single(dot[1].invars[1], "transpose")
            if tr is None or tuple(tr[1].params["permutation"]) != (1, 0) or id(tr[1].invars[0]) not in params:
                continue
            if dot[1].params["dimension_numbers"] != (((1,), (0,)), ((), ())) or len(dot[1].invars[0].aval.shape) != 2:
                continue
            fused[i] = (dot[1].invars[0], tr[1].invars[0], bb[1].invars[0])
            absorbed |= {dot[0], bb[0], tr[0]}
        return fused, absorbed

    def run(jaxpr: Any, consts_in: list[Any], args: list[str]) -> list[str]:
        env: dict[Any, str] = {}
        fused, absorbed = dense_layers(jaxpr)

        def read(v: Any) -> str:
            if type(v).__name__ == "Literal":
                return const(np.asarray(v.val, dtype=np.float32))
            return env[v]

        for v, c in zip(jaxpr.constvars, consts_in):
            env[v] = const(np.asarray(c, dtype=np.float32))
        for v, a in zip(jaxpr.invars, args):
            env[v] = a
        for i, eqn in enumerate(jaxpr.eqns):
            if i in absorbed:
                continue
            if i in fused:
                out = fresh("gemm")
                nodes.append(helper.make_node("Gemm", [read(v) for v in fused[i]], [out], transB=1))
                env[eqn.outvars[0]] = out
                continue
            prim, ins, ps = eqn.primitive.name, [read(v) for v in eqn.invars], eqn.params
            aval = eqn.outvars[0].aval
            if prim in ("pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"):
                inner = ps.get("jaxpr") or ps.get("call_jaxpr") or ps.get("fun_jaxpr")
                outs = run(inner.jaxpr, list(inner.consts), ins[:len(inner.jaxpr.invars)])
                for v, o in zip(eqn.outvars, outs):
                    env[v] = o
                continue
            if str(aval.dtype) != "float32":
                raise SystemExit(f"export_grads: jaxpr_to_onnx: {prim} yields {aval.dtype}, only float32 is translated")
            out = fresh(prim)
            simple = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max", "min": "Min",
                      "neg": "Neg", "exp": "Exp", "log": "Log", "tanh": "Tanh", "logistic": "Sigmoid"}
            if prim in simple:
                nodes.append(helper.make_node(simple[prim], ins, [out]))
            elif prim == "dot_general":
                (lc, rc), (lb, rb) = ps["dimension_numbers"]
                lhs_rank = len(eqn.invars[0].aval.shape)
                if lb or rb or tuple(lc) != (lhs_rank - 1,) or tuple(rc) != (0,) or len(eqn.invars[1].aval.shape) != 2:
                    raise SystemExit(f"export_grads: jaxpr_to_onnx: dot_general {ps['dimension_numbers']} is not a matrix product")
                nodes.append(helper.make_node("MatMul", ins, [out]))
            elif prim == "broadcast_in_dim":
                shape, dims = list(ps["shape"]), list(ps["broadcast_dimensions"])
                src = eqn.invars[0].aval.shape
                mid = [1] * len(shape)
                for d, s in zip(dims, src):
                    mid[d] = s
                r = fresh("reshape")
                nodes.append(helper.make_node("Reshape", [ins[0], const(np.asarray(mid, dtype=np.int64))], [r]))
                nodes.append(helper.make_node("Expand", [r, const(np.asarray(shape, dtype=np.int64))], [out]))
            elif prim == "reshape":
                nodes.append(helper.make_node("Reshape", [ins[0], const(np.asarray(ps["new_sizes"], dtype=np.int64))], [out]))
            elif prim == "transpose":
                nodes.append(helper.make_node("Transpose", [ins[0]], [out], perm=list(ps["permutation"])))
            elif prim == "convert_element_type":
                nodes.append(helper.make_node("Identity", [ins[0]], [out]))
            else:
                raise SystemExit(f"export_grads: jaxpr_to_onnx: primitive {prim} is not translated")
            env[eqn.outvars[0]] = out
        return [read(v) for v in jaxpr.outvars]

    outs = run(closed.jaxpr, list(closed.consts), in_names)
    nodes.append(helper.make_node("Identity", [outs[0]], [out_name]))
    graph_inputs, initializers = [], []
    for n, v in zip(in_names, closed.jaxpr.invars):
        if n in inits:
            initializers.append(numpy_helper.from_array(inits[n], n))
        else:
            graph_inputs.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.aval.shape)))
    oshape = list(closed.jaxpr.outvars[0].aval.shape)
    graph = helper.make_graph(nodes, "jax", graph_inputs, [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, oshape)],
                              initializer=initializers + consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], producer_name="tlcheck export_grads (jaxpr)")
    onnx.checker.check_model(model)
    return model


def export_jax(name: str, outdir: str) -> None:
    import jax
    import onnx

    if name not in JAX_MODELS:
        raise SystemExit(f"export_grads: unknown jax model {name!r}")
    jax.config.update("jax_enable_x64", False)  # float32 throughout
    f, params, x = jax_mlp()
    keys = sorted(params)
    flat = lambda *a: f(dict(zip(keys, a[:-1])), a[-1])  # noqa: E731 (inputs in a fixed order)
    closed = jax.make_jaxpr(flat)(*[params[k] for k in keys], x)
    model = jaxpr_to_onnx(closed, keys + ["x"], params, "y")
    onnx.save(model, os.path.join(outdir, "model.onnx"))
    cot = np.random.default_rng(1).standard_normal(np.shape(jax.eval_shape(f, params, x))).astype(np.float32)

    def grad_fn(p: dict[str, Any], xv: Any, c: Any) -> Any:
        return jax.vjp(f, p, xv)[1](c)

    gp, gx = (jax.jit(grad_fn) if name == "jax_mlp_jit" else grad_fn)(params, x, cot)
    grads = {"x": np.asarray(gx)}
    grads.update({k: np.asarray(gp[k]) for k in keys})
    write_dump(outdir, "x", x, "y", cot, grads)


def main(argv: list[str]) -> None:
    outdir = argv[0] if argv else "export"
    names = argv[1:] or list(MODELS)
    for name in names:
        if name not in MODELS:
            raise SystemExit(f"export_grads: unknown model {name!r} (models: {', '.join(MODELS)})")
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        (export_jax if name in JAX_MODELS else export_torch)(name, d)


if __name__ == "__main__":
    main(sys.argv[1:])
