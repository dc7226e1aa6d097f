"""Every public name of the JAX face has a docstring of its own (help(jnp.sin) must not show NumPy's text).

Walks the JAX face's namespaces: funcgrad's JAX top-level names (funcgrad/_jax/top.py), funcgrad.numpy (and
its linalg and fft), lax, random, scipy.special, scipy.stats (and each distribution module), scipy.linalg,
jax.nn's functions and initializers, tree_util, flatten_util and checkpoint_policies. A function's docstring
must be non-empty and, where NumPy has the name, differ from NumPy's (a wrapped NumPy function that kept its
__doc__ documents NumPy, not funcgrad). A class's (or a callable instance's, such as jnp.float32's) must differ
from each base class's (an inherited __doc__ is not its own). Names that share one object share its text.
"""
import importlib
import inspect
import types

import numpy as np
import pytest

import funcgrad
import funcgrad._jax.nn as _jax_nn
import funcgrad._jax.top as _top
import funcgrad.scipy.stats as _stats

MODULES = ["funcgrad.numpy", "funcgrad.numpy.linalg", "funcgrad.numpy.fft", "funcgrad.lax", "funcgrad.random",
           "funcgrad.scipy.special", "funcgrad.scipy.stats", "funcgrad.scipy.linalg", "funcgrad.nn.initializers",
           "funcgrad.tree_util", "funcgrad.flatten_util", "funcgrad.checkpoint_policies"]
MODULES += sorted(m.__name__ for m in vars(_stats).values()
                  if isinstance(m, types.ModuleType) and m.__name__.startswith("funcgrad.scipy.stats.")
                  and not m.__name__.rsplit(".", 1)[1].startswith("_"))

NUMPY_OF = {"funcgrad.numpy": np, "funcgrad.numpy.linalg": np.linalg, "funcgrad.numpy.fft": np.fft}

# Exempt, each for a stated reason. Only true aliases belong here: objects that are someone else's, unchanged.
ALIASES = {
    # NumPy's own print/error-state/formatting functions, re-exported as the same objects (as jax.numpy's
    # printoptions are NumPy's): they act on NumPy's settings, which is what funcgrad prints with.
    "funcgrad.numpy.get_printoptions", "funcgrad.numpy.set_printoptions", "funcgrad.numpy.printoptions",
    "funcgrad.numpy.geterr", "funcgrad.numpy.seterr", "funcgrad.numpy.base_repr", "funcgrad.numpy.binary_repr",
    # typing aliases (as JAX's): a type expression, documented on the API page by the names they combine
    "funcgrad.lax.DotDimensionNumbers", "funcgrad.lax.ConvGeneralDilatedDimensionNumbers",
}


def _public(ns, names=None):
    names = names if names is not None else (getattr(ns, "__all__", None) or dir(ns))
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        obj = getattr(ns, name, None)
        if obj is None or isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if isinstance(obj, type) and not obj.__module__.startswith("funcgrad"):
            continue  # (a builtin or NumPy type re-exported)
        yield name, obj


def _own_doc(obj, numpy_twin) -> bool:
    if isinstance(obj, type):
        doc = obj.__dict__.get("__doc__")
        bases = obj.__mro__[1:]
    else:
        doc = getattr(obj, "__doc__", None)
        bases = () if inspect.isroutine(obj) else type(obj).__mro__  # (a callable instance)
    if not isinstance(doc, str) or not doc.strip():
        return False
    if any(getattr(b, "__doc__", None) == doc for b in bases):
        return False
    return numpy_twin is None or getattr(numpy_twin, "__doc__", None) != doc


def _namespaces():
    yield "funcgrad", funcgrad, _top.__all__
    yield "funcgrad.nn", funcgrad.nn, _jax_nn.__all__  # jax.nn's functions (the modules are the torch face's)
    for mod in MODULES:
        yield mod, importlib.import_module(mod), None


def _undocumented():
    missing = []
    for label, ns, names in _namespaces():
        twin = NUMPY_OF.get(label)
        for name, obj in _public(ns, names):
            qual = f"{label}.{name}"
            if qual not in ALIASES and not _own_doc(obj, getattr(twin, name, None) if twin else None):
                missing.append(qual)
    return missing


def test_every_public_jax_name_has_its_own_docstring():
    missing = _undocumented()
    assert not missing, f"{len(missing)} public JAX-face names without a docstring of their own: {missing}"


def test_the_walk_covers_the_namespaces():
    """The walk sees the names it should (so an emptied namespace cannot pass the test above)."""
    seen = {f"{label}.{name}" for label, ns, names in _namespaces() for name, _ in _public(ns, names)}
    for qual in ("funcgrad.grad", "funcgrad.enable_x64", "funcgrad.numpy.sin", "funcgrad.numpy.float32",
                 "funcgrad.numpy.linalg.solve", "funcgrad.numpy.fft.rfft", "funcgrad.lax.add",
                 "funcgrad.lax.broadcast_in_dim", "funcgrad.random.normal", "funcgrad.scipy.special.erf",
                 "funcgrad.scipy.stats.norm.logpdf", "funcgrad.scipy.linalg.inv", "funcgrad.nn.relu",
                 "funcgrad.nn.initializers.glorot_normal", "funcgrad.tree_util.tree_map",
                 "funcgrad.flatten_util.ravel_pytree", "funcgrad.checkpoint_policies.dots_saveable"):
        assert qual in seen, qual
    assert len(seen) > 1000


def test_aliases_are_what_they_say():
    """The exempt NumPy names are NumPy's own objects; the exempt lax names are typing aliases."""
    for qual in ALIASES:
        mod, name = qual.rsplit(".", 1)
        obj = getattr(importlib.import_module(mod), name)
        if mod == "funcgrad.numpy":
            assert obj is getattr(np, name), qual
        else:
            assert not isinstance(obj, type) or obj is tuple, qual


def test_factory_made_names_say_what_they_compute():
    """Names built by one factory get their own line, not the factory's shared text."""
    import funcgrad.lax as lax
    import funcgrad.numpy as jnp
    assert "sine" in lax.sin.__doc__ and "cosine" in lax.cos.__doc__
    assert lax.add.__doc__ != lax.sub.__doc__ and "+" in lax.add.__doc__
    assert jnp.float32.__doc__ != jnp.int32.__doc__ and "float32" in jnp.float32.__doc__
    assert "x64" in funcgrad.enable_x64.__doc__
    assert funcgrad.scipy.stats.norm.logpdf.__doc__ != funcgrad.scipy.stats.t.logpdf.__doc__
