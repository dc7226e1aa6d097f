"""The bridge from Modules to the functional transforms: functional_call (torch.func's) and an MLX-style
value_and_grad(model, fn).

functional_call runs a module with some of its parameters and buffers replaced by the given values for the
duration of one call. The values may be Tensors (the PyTorch face) or funcgrad Arrays / tracers (the
functional face: inside funcgrad.grad, vmap or jit); in the latter case the result comes back as Arrays, so

    loss = lambda p, x, y: jnp.mean((functional_call(model, p, (x,)) - y) ** 2)
    grads = jit(grad(loss))(params, x, y)           # params: {name: Array}
"""
from __future__ import annotations

import contextlib

from ..._src.core.array import ArrayBase
from ...tree_util import tree_leaves, tree_map
from ..._torch._tensor import Tensor

__all__ = ["functional_call", "value_and_grad", "parameter_arrays"]


def _T():
    from ..._torch import _tensor
    return _tensor


def _to_tensor(x):
    if isinstance(x, ArrayBase):
        return _T()._traced(x)
    return x


def _to_array(x):
    if isinstance(x, Tensor):
        return x._a if x._v is None else x._arr()
    return x


def _tied_groups(module) -> dict:
    """name -> all names (parameters and buffers) under which the same tensor is registered."""
    by_id: dict = {}
    for name, t in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    for name, t in module.named_buffers(remove_duplicate=False):
        by_id.setdefault(id(t), []).append(name)
    return {n: names for names in by_id.values() if len(names) > 1 for n in names}


def _owner(module, name: str):
    path, _, leaf = name.rpartition(".")
    return module.get_submodule(path), leaf


@contextlib.contextmanager
def _reparametrized(module, values: dict, tie_weights: bool = True, strict: bool = False):
    """Swap the named parameters/buffers of module for `values` (restored on exit)."""
    values = dict(values)
    if tie_weights:
        tied = _tied_groups(module)
        for name in list(values):
            group = tied.get(name, ())
            given = [n for n in group if n in values]
            if len(given) > 1 and any(values[n] is not values[given[0]] for n in given):
                raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, which are tied. "
                                 "Consider using tie_weights=False")
            for n in group:
                values.setdefault(n, values[name])
    if strict:
        known = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
            [n for n, _ in module.named_buffers(remove_duplicate=False)]
        unexpected = [k for k in values if k not in known]
        missing = [k for k in known if k not in values]
        if unexpected or missing:
            msg = f"Error(s) in reparametrizing for {module._get_name()}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(repr(k) for k in missing) + "."
            raise RuntimeError(msg)
    saved = []
    try:
        for name, value in values.items():
            owner, leaf = _owner(module, name)
            if leaf in owner._parameters:
                store = owner._parameters
            elif leaf in owner._buffers:
                store = owner._buffers
            else:
                store = owner.__dict__  # a plain attribute (torch allows replacing those too)
            saved.append((store, leaf, store.get(leaf, _MISSING)))
            store[leaf] = value
        yield
    finally:
        for store, leaf, old in reversed(saved):
            if old is _MISSING:
                store.pop(leaf, None)
            else:
                store[leaf] = old


_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given ones, as
    torch.func.functional_call. Arrays (or tracers) in, Arrays out; Tensors in, Tensors out."""
    dicts = parameter_and_buffer_dicts
    if not isinstance(dicts, (tuple, list)):
        dicts = (dicts,)
    merged: dict = {}
    for d in dicts:
        dup = [k for k in d if k in merged]
        if dup:
            raise ValueError(f"{dup} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    functional = any(isinstance(x, ArrayBase) for x in tree_leaves((merged, args, kwargs)))
    merged = {k: _to_tensor(v) for k, v in merged.items()}
    if functional:
        args, kwargs = tree_map(_to_tensor, (args, kwargs))
    with _reparametrized(module, merged, tie_weights, strict):
        out = module(*args, **kwargs)
    return tree_map(_to_array, out) if functional else out


def parameter_arrays(module, *, trainable_only: bool = False) -> dict:
    """{name: Array} of the module's parameters (copies: later in-place updates of the module do not
    change them), the usual input of functional_call under funcgrad.jit / grad / vmap."""
    from ..._src.core.array import Array
    return {n: Array(p.detach().numpy().copy()) for n, p in module.named_parameters()
            if p.requires_grad or not trainable_only}


def value_and_grad(model, fn):
    """MLX-style: a function that calls fn(*args, **kwargs) (which uses `model`) and returns
    (value, grads) with grads a {name: gradient} dict over the model's trainable parameters.
    Tensors in give Tensors out; it also works on Arrays inside funcgrad.jit / vmap / grad."""
    from ..._src import interpreters as _tr

    def wrapped(*args, **kwargs):
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        functional = any(isinstance(x, ArrayBase) for x in tree_leaves((args, kwargs)))

        def f(params):
            with _reparametrized(model, {k: _to_tensor(v) for k, v in params.items()}):
                out = fn(*tree_map(_to_tensor, args), **tree_map(_to_tensor, kwargs))
            return tree_map(_to_array, out)
        value, grads = _tr.value_and_grad(f)({n: _to_array(p.detach()) for n, p in named})
        grads = {n: grads[n] for n, _ in named}  # the model's order, not the pytree's sorted one
        if functional:
            return value, grads
        wrap = _T()._wrap
        return wrap(value), {n: wrap(g) for n, g in grads.items()}
    return wrapped
