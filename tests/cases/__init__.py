"""The per-family case generators, merged: `CASES` maps every covered primitive name to its case.

Every public module of this package (not starting with "_") must define `CASES` (see README.md).
A primitive may have its case in one module only.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from ._special import Special

CASES: dict[str, Callable] = {}
OWNER: dict[str, str] = {}  # primitive name -> the module that defines its case
SPECIAL: dict[str, Special] = {}  # primitive name -> where it is defined at special points (_special.py)


def _collect() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases = getattr(module, "CASES", None)
        if not isinstance(cases, dict):
            raise ImportError(f"tests/cases/{info.name}.py must define CASES: dict[str, Callable] "
                              "(see tests/cases/README.md)")
        for name, case in cases.items():
            if name in CASES:
                raise ValueError(f"primitive {name!r} has cases in two modules: tests/cases/{OWNER[name]}.py "
                                 f"and tests/cases/{info.name}.py; keep one")
            CASES[name] = case
            OWNER[name] = info.name
        for name, spec in getattr(module, "SPECIAL", {}).items():
            if name not in cases:
                raise ValueError(f"tests/cases/{info.name}.py declares SPECIAL[{name!r}] without its case")
            SPECIAL[name] = spec


_collect()

__all__ = ["CASES", "OWNER", "SPECIAL", "Special"]
