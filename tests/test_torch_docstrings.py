"""Every public name of the torch face has a docstring of its own (help(nn.Linear) must not show Module's text).

Walks funcgrad's torch names: the top-level functions and classes of funcgrad._torch, Tensor's methods and
properties, nn (modules and functions), nn.functional, optim (and lr_scheduler), utils.data, autograd and the other
torch packages programs call (linalg, fft, special, amp, cuda, nn.init, func, distributed, jit, ...). A class's
docstring must differ from each base class's (an inherited __doc__ is not its own); a function's must be non-empty.
"""
import inspect
import types

import pytest

import funcgrad
import funcgrad._torch as T
import funcgrad.autograd
import funcgrad.nn
import funcgrad.nn.functional
import funcgrad.optim
import funcgrad.optim.lr_scheduler
import funcgrad.utils.checkpoint
import funcgrad.utils.data
import funcgrad.utils.dlpack

NAMESPACES = {"torch": T, "torch.nn": funcgrad.nn, "torch.nn.functional": funcgrad.nn.functional,
              "torch.optim": funcgrad.optim, "torch.optim.lr_scheduler": funcgrad.optim.lr_scheduler,
              "torch.utils.data": funcgrad.utils.data, "torch.autograd": funcgrad.autograd,
              "torch.linalg": funcgrad.linalg, "torch.fft": funcgrad.fft, "torch.special": funcgrad.special,
              "torch.amp": funcgrad.amp, "torch.cuda": funcgrad.cuda, "torch.nn.init": funcgrad.nn.init,
              "torch.func": funcgrad.func, "torch.distributed": funcgrad.distributed,
              "torch.jit": funcgrad._torch._jit, "torch.hub": funcgrad.hub, "torch.sparse": funcgrad.sparse,
              "torch.signal.windows": funcgrad.signal.windows, "torch.utils.checkpoint": funcgrad.utils.checkpoint,
              "torch.utils.dlpack": funcgrad.utils.dlpack, "torch.nn.utils": funcgrad.nn.utils,
              "torch.nn.utils.parametrize": funcgrad.nn.utils.parametrize,
              "torch.autograd.functional": funcgrad.autograd.functional,
              "torch.distributions.constraints": funcgrad.distributions.constraints,
              "torch.overrides": funcgrad.overrides}

# names exempt as an alias of another public name (empty: an alias bound to the same object shares its docstring)
ALIASES: dict = {}


def _own_doc(obj) -> bool:
    doc = inspect.getdoc(obj) if not isinstance(obj, type) else obj.__dict__.get("__doc__")
    if not doc or not doc.strip():
        return False
    if isinstance(obj, type):
        return all(getattr(b, "__doc__", None) != obj.__doc__ for b in obj.__mro__[1:])
    return True


def _public(ns):
    names = getattr(ns, "__all__", None) or dir(ns)
    for name in sorted(set(names)):
        if name.startswith("_"):
            continue
        obj = getattr(ns, name, None)
        if obj is None or isinstance(obj, types.ModuleType):
            continue
        if isinstance(obj, type) or inspect.isroutine(obj) or isinstance(obj, (types.FunctionType, types.MethodType)):
            if getattr(obj, "__module__", "").startswith(("funcgrad", "numpy")) or isinstance(obj, type):
                yield name, obj


def _undocumented():
    missing = []
    for label, ns in NAMESPACES.items():
        for name, obj in _public(ns):
            if isinstance(obj, type) and not obj.__module__.startswith("funcgrad"):
                continue  # (a builtin/NumPy type re-exported)
            if f"{label}.{name}" not in ALIASES and not _own_doc(obj):
                missing.append(f"{label}.{name}")
    for name in dir(funcgrad.Tensor):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(funcgrad.Tensor, name)
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if isinstance(attr, property) or callable(attr):
            if not (attr.__doc__ or "").strip():
                missing.append(f"torch.Tensor.{name}")
    return missing


def test_every_public_torch_name_has_its_own_docstring():
    missing = _undocumented()
    assert not missing, f"{len(missing)} public torch-face names without a docstring of their own: {missing}"


@pytest.mark.parametrize("obj, base", [(funcgrad.nn.Linear, funcgrad.nn.Module),
                                       (funcgrad.optim.Adam, funcgrad.optim.Optimizer),
                                       (funcgrad.nn.CrossEntropyLoss, funcgrad.nn.Module)])
def test_help_shows_the_class_own_text(obj, base):
    assert obj.__doc__ and obj.__doc__ != base.__doc__
    assert obj.__doc__.splitlines()[0] != (base.__doc__ or "").splitlines()[0]


def test_named_functions_have_docstrings():
    """The ones the issue names: Tensor.backward, torch.randn, Tensor.view (each with an example)."""
    for obj in (funcgrad.Tensor.backward, funcgrad.randn, funcgrad.Tensor.view):
        assert ">>> " in (obj.__doc__ or ""), obj


def test_in_place_and_alias_lines():
    assert funcgrad.Tensor.add_.__doc__ == "In-place version of add()."
    assert funcgrad.arccos.__doc__ == funcgrad.acos.__doc__ and "inverse cosine" in funcgrad.acos.__doc__
    assert funcgrad.Tensor.abs is funcgrad.abs or funcgrad.Tensor.abs.__doc__
