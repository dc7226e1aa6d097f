"""Every registered primitive as `<name>_p` (jax.extend.core.primitives), the same objects the jaxprs
hold, so interpreters can key tables by them (`{primitives.exp_p: ...}`)."""
from __future__ import annotations

import funcgrad as _funcgrad  # noqa: F401  (imports every primitive family, filling the registry)
from ..._src.core.primitive import registry as _registry

_ALIASES = {"jit_p": "pjit", "pjit_p": "pjit", "select_n_p": "select", "checkpoint_p": "remat"}


def __getattr__(name):
    if name.endswith("_p"):
        prim = _registry.get(_ALIASES.get(name, name[:-2]))
        if prim is not None:
            return prim
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([f"{n}_p" for n in _registry] + list(_ALIASES))
