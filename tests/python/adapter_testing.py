"""Imports a framework for an adapter test: the installed one, else its recorded interface
(recorded/README.md). Says which on stderr, so a run shows what it checked against."""

from __future__ import annotations

import importlib
import sys

from kernelrl_testing import SOURCE_DIR


def framework(module: str) -> str:
    """'installed' or 'recorded' after making `module` importable."""
    try:
        imported = importlib.import_module(module)
    except ImportError:
        sys.path.insert(0, str(SOURCE_DIR / "tests" / "python" / "recorded"))
        imported = importlib.import_module(module)
    kind = "recorded" if getattr(imported, "RECORDED", False) else "installed"
    print(f"{module}: testing against the {kind} interface", file=sys.stderr)
    return kind
