"""Seeded random-weight models exported to ONNX and checked with tlcheck compare."""
