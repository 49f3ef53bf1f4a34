#!/usr/bin/env python3
"""Export a PyTorch model and its gradients for `tlcheck compare-grad`.

Run in CI by ci/stage-engines.sh (engines/python/tests/test_export_grads.py):
with the pinned torch and onnxscript of requirements.lock it exports the
model below, dumps its float32 gradients with autograd, and `tlcheck
compare-grad` must hold on every one, while an edited gradient fails. The
JSON layout (tlcheck.grads.v1) is also tested from Go
(cmd/tlcheck/dump_grad_test.go, TestGradsLayout).

Usage (edit build() for your model and input):

    python3 tools/export_grads.py OUTDIR
    tlcheck compare-grad --onnx OUTDIR/model.onnx --input OUTDIR/input_0.pb \
        --grads OUTDIR/grads.json

It writes
  * model.onnx   -- torch.onnx.export of the model, initializers kept
                    (do_constant_folding=False, so parameter names survive);
  * input_0.pb   -- the input as an ONNX TensorProto;
  * grads.json   -- {"format": "tlcheck.grads.v1",
                     "cotangent": {OUTPUT_NAME: {"shape": [...], "values": [...]}},
                     "grads": {NAME: {"shape": [...], "values": [...]}, ...}}
    with the gradient of <cotangent, model(x)> w.r.t. the input (named as
    the ONNX graph input) and every parameter (named as its initializer).
    Values are row-major float32s written as Python floats (the float64
    repr of the float32, which compare-grad reads back exactly); NaN and
    infinities as the strings "NaN", "+Inf", "-Inf" (the spelling of every tlcheck JSON document).
"""
import json
import math
import os
import sys

import torch
import onnx
from onnx import numpy_helper


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = torch.randn(5, 4)
    return model.float().eval(), x.float()


def values(t):
    out = []
    for v in t.detach().to(torch.float32).reshape(-1).tolist():
        if math.isnan(v):
            out.append("NaN")
        elif math.isinf(v):
            out.append("+Inf" if v > 0 else "-Inf")
        else:
            out.append(v)
    return out


def tensor(t):
    return {"shape": list(t.shape), "values": values(t)}


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    model, x = build()
    path = os.path.join(outdir, "model.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                      do_constant_folding=False, export_params=True)
    with open(os.path.join(outdir, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "x").SerializeToString())

    # torch.onnx.export names initializers after the parameters
    # ("0.weight", …); map them through the exported graph to be sure.
    graph = onnx.load(path).graph
    inits = {i.name for i in graph.initializer}
    xg = x.clone().requires_grad_(True)
    y = model(xg)
    cot = torch.ones_like(y)  # the gradient of sum(y); any cotangent works
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(y, [xg] + list(params.values()), grad_outputs=cot)
    doc = {"format": "tlcheck.grads.v1", "cotangent": {"y": tensor(cot)}, "grads": {"x": tensor(grads[0])}}
    for (name, _), g in zip(params.items(), grads[1:]):
        if name not in inits:
            sys.exit(f"parameter {name} is not an initializer of the exported graph (constant folding?)")
        doc["grads"][name] = tensor(g)
    with open(os.path.join(outdir, "grads.json"), "w") as f:
        json.dump(doc, f, allow_nan=False)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "export")
