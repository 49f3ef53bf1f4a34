"""Shared helpers: engines whose package is absent skip with a clear message, except in CI
(TLCHECK_REQUIRE_ENGINES=1, set by ci/stage-engines.sh), where an absent package fails."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def need(module: str) -> ModuleType:
    if os.environ.get("TLCHECK_REQUIRE_ENGINES") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed here (pip install -r requirements.lock)")
