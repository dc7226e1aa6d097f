"""An import shim under which unchanged JAX programs run on funcgrad.

While installed, `import jax` gives `funcgrad`, and `jax.X.Y` gives the module `funcgrad.X.Y` (one module
object, two names). A few names JAX programs import that live elsewhere in funcgrad are aliased:
`jax.example_libraries.*` and the older `jax.experimental.stax` / `jax.experimental.optimizers` give
funcgrad.example_libraries' modules, and the long-gone `jax.api` gives `funcgrad` itself.

Use as a context manager (`with jax_is_funcgrad(): exec(program)`), or call `install()` once in a script
that runs example programs (python -c 'import jax_shim; jax_shim.install(); ...').
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys

ALIASES = {
    "jax.api": "funcgrad",
    "jax.experimental.stax": "funcgrad.example_libraries.stax",
    "jax.experimental.optimizers": "funcgrad.example_libraries.optimizers",
}


def _target(name: str) -> str | None:
    if name in ALIASES:
        return ALIASES[name]
    if name == "jax" or name.startswith("jax."):
        return "funcgrad" + name[len("jax"):]
    return None


class JaxAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `jax.X.Y` to the module `funcgrad.X.Y` (or to its alias in ALIASES)."""

    def find_spec(self, name, path=None, target=None):
        real = _target(name)
        if real is None:
            return None
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except ModuleNotFoundError:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        module = importlib.import_module(_target(spec.name))
        parent_name, _, child = spec.name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None:  # the import system will set parent.child = module next: note what is there
            _overwritten.append((parent, child, getattr(parent, child, _MISSING)))
        return module

    def exec_module(self, module):
        pass


def _jax_modules():
    return {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}


_finder = JaxAlias()
_MISSING = object()
# (module, name, old value) for each attribute the import system set on a parent (`jax` is funcgrad, so
# `import jax.config` would leave funcgrad.config the module of that name): restored when the block ends.
_overwritten: list = []


def install() -> None:
    """Make `jax` resolve to funcgrad for the rest of the process."""
    for k in _jax_modules():
        del sys.modules[k]
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


@contextlib.contextmanager
def jax_is_funcgrad():
    """While the block runs, `import jax` (and jax.numpy, jax.lax, ...) gives funcgrad."""
    saved = _jax_modules()
    mark = len(_overwritten)
    install()
    try:
        yield
    finally:
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        while len(_overwritten) > mark:
            parent, name, old = _overwritten.pop()
            if old is _MISSING:
                parent.__dict__.pop(name, None)
            else:
                setattr(parent, name, old)
        for k in _jax_modules():
            del sys.modules[k]
        sys.modules.update(saved)


def run_program(src: str, name: str = "__main__") -> dict:
    """Runs program text (dedented) under the shim; returns its globals."""
    import textwrap
    ns: dict = {"__name__": name}
    with jax_is_funcgrad():
        exec(compile(textwrap.dedent(src), "<jax-program>", "exec"), ns)  # noqa: S102 - the program under test
    return ns
