"""tlcheck engines: PyTorch, JAX and ONNX Runtime behind the tlcheck.engine.v1 protocol.

Each engine reads one JSON request per line on stdin and answers one JSON object per line
on stdout (docs/engines.md, schemas/engine.v1.json). ``python -m tlcheck_engines NAME``
starts engine NAME (torch, jax, onnxruntime).
"""

ENGINES = ("torch", "jax", "onnxruntime")
