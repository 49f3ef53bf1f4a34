#!/usr/bin/env bash
# CI stage: the ONNX backend node tests and the real-model zoo
# (tools/models) through tlcheck compare.
#
# Installs the pinned lock file (requirements.lock) into the Python stages'
# virtual environment, writes every node test of onnx.backend.test.loader.
# load_model_tests(kind="node") out as model.onnx + .pb files, builds tlcheck
# and runs `tlcheck compare` on each; prints the counts, the pass rate on the
# tests of the ops issue 22 names, and every case that does not hold with its
# reason. Fails (exit 1) on any FAILS that is not a known hand-rounded
# reference output (tools/onnx_node_tests/onnx_node_tests/run.py).
#
# Time: about 5 minutes unloaded (189 s for pip install, export of ≈ 1870
# cases and one tlcheck compare per case, plus about 115 s for the model
# zoo); 575 s measured on the 2-core machine while seven builds shared it.
# Needs PyPI.
set -euo pipefail
start=$(date +%s)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The one virtual environment of the Python stages (ci/stage-engines.sh makes
# the same one): requirements.lock pins onnx, numpy and pytest; a second
# install of an installed lock is a no-op.
venv=${TLCHECK_ENGINES_VENV:-"$HOME/.cache/tlcheck-engines-venv"}
export PIP_CACHE_DIR=${PIP_CACHE_DIR:-"$HOME/.cache/pip"}
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q -r "$root/requirements.lock"
(cd "$root/tools/onnx_node_tests" && "$venv/bin/python" -m pytest -q)
(cd "$root" && go build -o "$work/tlcheck" ./cmd/tlcheck)
(cd "$root/tools/onnx_node_tests" && "$venv/bin/python" -m onnx_node_tests.export "$work/node" 2>"$work/export.err")
status=0
(cd "$root/tools/onnx_node_tests" && "$venv/bin/python" -m onnx_node_tests.run --tlcheck "$work/tlcheck" "$work/node") || status=$?
echo "not written (not tensors): $(grep -c 'not written' "$work/export.err" || true)"
# The real-model step (tools/models, about 3 minutes): seeded random-weight
# models — plain torch.nn (ResNet blocks, GPT-2-style decoders, MLP, a
# GroupNorm/Resize UNet) and the ones people ship (transformers' BERT, Llama,
# ViT) — exported to ONNX (TorchScript exporter; Llama with the dynamo one),
# ONNX Runtime's and PyTorch's own float32 outputs compared, a planted 1e-3
# error. Fails on a FAILS of a correct output, a planted fault missed on a
# decided element, or a regression of the models that held before; a
# refusal or undecided elements are findings, printed as the table of
# docs/models.md. The torchvision models take minutes each: TLCHECK_ZOO_ALL=1
# adds them; both exporters by hand: --exporters torchscript,dynamo.
# tlcheck grad and certify run on every model (certify not on resnet in CI:
# its exact composition takes minutes); the newest opset (both exporters)
# and float64 run on the mlp only in CI. TLCHECK_ZOO_MATRIX=1 runs the full
# matrix (both exporters × opset 17/18 and newest × float32/float64).
(cd "$root/tools/models" && "$venv/bin/python" -m pytest -q)
(cd "$root/tools/models" && "$venv/bin/python" -m tlcheck_models.run --tlcheck "$work/tlcheck" --table "$work/models.md" "$work/models" 2>"$work/models.err") || status=1
cat "$work/models.md" 2>/dev/null || true
echo "stage-onnx-node-tests: $(( $(date +%s) - start )) s"
exit $status
