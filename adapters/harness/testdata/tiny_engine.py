#!/usr/bin/env python3
"""A third-party engine in a few lines: tlcheck.engine.v1 with the standard library only.

It maps neg, exp, mul, add and relu on tensors of any shape, in float64, and runs reverse
mode by hand. PLANT (argv[1]) plants one fault for the harness's tests: vjp-scale (exp's
VJP times 1 + 1e-3), nan-kink (relu' = NaN at 0), tie (declares relu'(0) = 1, returns 1/2),
hang (never answers a case), crash (exits on a case), version (speaks another protocol).
"""
import json, math, sys
from fractions import Fraction

plant = sys.argv[1] if len(sys.argv) > 1 else ""
FWD = {"neg": lambda x: -x, "exp": math.exp, "relu": lambda x: max(x, 0.0)}
DER = {"neg": lambda x: -1.0, "exp": lambda x: math.exp(x) * (1 + 1e-3 if plant == "vjp-scale" else 1),
       "relu": lambda x: 1.0 if x > 0 else (math.nan if plant == "nan-kink" else 0.5 if plant == "tie" else 0.0)}
conv = [{"op": "relu", "doc": "relu'(0) = 1", "source": "tiny", "graph": {"inputs": 1, "nodes": [
    {"op": "neg", "args": [0]}, {"op": "relu", "args": [1]}, {"op": "add", "args": [0, 2]}]}}] if plant == "tie" else []

def run(req):
    vals = [[float(Fraction(s)) for s in t["data"]] for t in req["inputs"]]
    nodes = req["graph"]["nodes"]
    for n in nodes:
        a = [vals[k] for k in n["args"]]
        vals.append([FWD[n["op"]](x) for x in a[0]] if n["op"] in FWD else
                    [x * y if n["op"] == "mul" else x + y for x, y in zip(*a)])
    bar = [[0.0] * len(v) for v in vals]
    bar[-1] = [float(Fraction(s)) for s in req["cotangent"]["data"]]
    for j in reversed(range(len(nodes))):
        n, out, args = nodes[j], bar[req["graph"]["inputs"] + j], nodes[j]["args"]
        for i, k in enumerate(args):
            for e, c in enumerate(out):
                if n["op"] in DER:
                    bar[k][e] += c * DER[n["op"]](vals[k][e])
                else:
                    bar[k][e] += c * (vals[args[1 - i]][e] if n["op"] == "mul" else 1.0)
    shape = req["cotangent"]["shape"]
    t = lambda d, sh: {"shape": sh, "data": [repr(x) if math.isfinite(x) else "nan" for x in d]}
    return {"type": "result", "id": req["id"], "y": t(vals[-1], shape),
            "grads": [t(bar[i], req["inputs"][i]["shape"]) for i in range(req["graph"]["inputs"])]}

for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "hello":
        out = {"type": "hello", "protocol": "tlcheck.engine.v0" if plant == "version" else req["protocol"],
               "engine": "tiny", "version": "1", "machines": [{"name": "py", "format": "float64", "transforms": ["forward", "vjp"]}],
               "ops": ["add", "exp", "mul", "neg", "relu"], "conventions": conv}
    elif plant == "hang":
        sys.stdin.read()
    elif plant == "crash":
        sys.exit(3)
    else:
        out = run(req)
    print(json.dumps(out), flush=True)
