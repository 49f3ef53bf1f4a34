"""python -m tlcheck_engines NAME: serve engine NAME over the tlcheck.engine.v1 protocol."""

from __future__ import annotations

import sys

from . import ENGINES


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ENGINES:
        print(f"usage: python -m tlcheck_engines {{{'|'.join(ENGINES)}}}", file=sys.stderr)
        return 2
    name = argv[0]
    if name == "torch":
        from . import torch_engine as mod
    elif name == "jax":
        from . import jax_engine as mod
    else:
        from . import ort_engine as mod
    from .protocol import serve

    engine = mod.Engine()
    serve(engine.info, engine.run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
