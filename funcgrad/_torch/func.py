"""funcgrad.func: torch.func's composable transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call) over funcgrad's functional transforms, taking and returning Tensors.

    from funcgrad.func import grad, vmap
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)

Inside the transformed function tensors hold tracers, and views and in-place ops behave as torch.func's
functionalisation makes them (see funcgrad._torch._functional): a view stays linked to its base, a write through
either is seen by both. In-place ops on the function's inputs follow torch.func too: on an input that grad,
grad_and_value, vjp, jacrev or hessian differentiates they raise RuntimeError; on any other input (vmap's and jvp's,
say) they write the final value back into the caller's tensor when the transform returns.
"""
from __future__ import annotations

from .._src.core.array import Array, ArrayBase
from .._src.core.trace import Tracer, _state as _trace_state
from .._src.core.tree_util import (broadcast_prefix, register_pytree_node, tree_flatten, tree_leaves, tree_map,
                             tree_unflatten)
from . import _creation, _tensor
from . import stack as _stack
from .._src.interpreters import ad as _ad
from .._src import interpreters as _tr
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.utils.stateless import functional_call as _stateless_call


def _T():
    return _tensor


class _InOrder(dict):
    """A dict on its way through a transform. torch.func's pytrees keep a dict's insertion order (JAX's sort its
    keys), so the transforms here see each plain dict as this node, which flattens in insertion order, and the
    results turn back into plain dicts with the caller's key order."""


register_pytree_node(_InOrder, lambda d: (list(d.values()), tuple(d.keys())),
                     lambda keys, children: _InOrder(zip(keys, children)))


def _redict(x, dicts: tuple, make):
    """x with every dict of a type in `dicts` (at any depth in lists, tuples, namedtuples and dicts) rebuilt by
    make(its items), its values converted the same way."""
    t = type(x)
    if t in dicts:
        return make((k, _redict(v, dicts, make)) for k, v in x.items())
    if t is list:
        return [_redict(v, dicts, make) for v in x]
    if t is tuple:
        return tuple(_redict(v, dicts, make) for v in x)
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return t(*(_redict(v, dicts, make) for v in x))
    if isinstance(x, dict) and t.__module__ == "collections":  # OrderedDict / defaultdict: their own order
        y = x.copy()
        for k, v in x.items():
            y[k] = _redict(v, dicts, make)
        return y
    return x


def _keep_order(x):
    """x with every plain dict made an _InOrder (see _redict)."""
    return _redict(x, (dict, _InOrder), _InOrder)


def _plain(x):
    """The inverse of _keep_order: every _InOrder back to a plain dict."""
    return _redict(x, (_InOrder,), dict)


def _to_arrays(tree):
    T = _T()
    return tree_map(lambda x: x._arr() if isinstance(x, T.Tensor) else x, _keep_order(tree))


def _out_tensors(tree):
    """Results of a transform (concrete Arrays) become ordinary tensors."""
    T = _T()

    def f(x):
        if isinstance(x, Array):
            return T._wrap(x)
        if isinstance(x, ArrayBase):
            return T._traced(x)
        return x
    return _plain(tree_map(f, tree))


def _unwrap_out(tree):
    T = _T()

    def f(x):
        if isinstance(x, T.Tensor):
            return x._arr()
        return x
    return tree_map(f, _keep_order(tree))


def _wrap_fn(func, frozen=(), box=None, return_muts=False):
    """func over tensors as a function over arrays. The tensors made from args[i], i in `frozen`, refuse in-place
    ops (the transform differentiates them). With `box`, the final values of the inputs written in place (None
    for the others, one entry per leaf of (args, kwargs)) are appended to it, and returned as a second output
    when `return_muts`."""
    def g(*args, **kwargs):
        T = _T()
        leaves, tree = tree_flatten((args, kwargs))
        tleaves = [T._traced(x) if isinstance(x, ArrayBase) else x for x in leaves]
        targs, tkw = _plain(tree_unflatten(tree, tleaves))
        if frozen:
            for i in frozen:
                if i < len(targs):
                    for t in tree_leaves(targs[i]):
                        if isinstance(t, T.Tensor):
                            t._frz = True
        if box is None:
            return _unwrap_out(func(*targs, **tkw))
        ins = [(t, t._a) if isinstance(t, T.Tensor) else None for t in tleaves]
        out = _unwrap_out(func(*targs, **tkw))
        muts = [None if e is None or e[0]._a is e[1] else e[0]._arr() for e in ins]
        box.append(muts)
        return (out, muts) if return_muts else out
    g.__name__ = getattr(func, "__name__", "func")
    return g


def _lower(x, depth: int):
    """x's value at trace depth `depth` (below the traces of a value-carrying transform that has returned)."""
    while isinstance(x, Tracer) and x._trace.level > depth:
        x = x.val
    return x


def _write_back(args, kwargs, muts, depth=None) -> None:
    """Copy the final values of inputs written in place into the caller's tensors (as torch.func does)."""
    if not muts or all(m is None for m in muts):
        return
    T = _T().Tensor
    for t, m in zip(tree_leaves(_keep_order((args, kwargs))), muts):
        if m is None or not isinstance(t, T):
            continue
        if depth is not None:
            m = _lower(m, depth)
            if m is None:
                continue
        t.copy_(_out_tensors(m))


def _argnums(argnums) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _check_float_args(args, argnums) -> None:
    """torch.func.grad's differentiated arguments must be float or complex tensors (torch's requires_grad_ error)."""
    for i in argnums:
        if i < len(args):
            for leaf in tree_leaves(args[i]):
                if isinstance(leaf, _tensor.Tensor) and leaf._np_dtype().kind not in "fcV":
                    raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _depth() -> int:
    return len(_trace_state.stack)


def _scalar_checked(func, has_aux: bool, what: str):
    """func, whose (first) output must be a 0-dim tensor: torch.func's RuntimeError otherwise."""
    def f(*args, **kwargs):
        res = func(*args, **kwargs)
        out = res[0] if has_aux and isinstance(res, tuple) else res
        if isinstance(out, _T().Tensor) and out.ndim != 0:
            raise RuntimeError(f"{what}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                               f"{out.ndim} dims (shape {list(out.shape)}). Maybe you wanted to use the vjp or "
                               f"jacrev APIs instead?")
        return res
    f.__name__ = getattr(func, "__name__", "func")
    return f


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued func with respect to args[argnums], as torch.func.grad."""
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        _check_float_args(args, frozen)
        box, depth = [], _depth()
        g = _tr.grad(_wrap_fn(_scalar_checked(func, has_aux, "grad"), frozen, box), argnums=argnums,
                     has_aux=has_aux)
        res = g(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) (value is (output, aux) with has_aux), as torch.func.grad_and_value."""
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        _check_float_args(args, frozen)
        box, depth = [], _depth()
        vg = _tr.value_and_grad(_wrap_fn(_scalar_checked(func, has_aux, "grad_and_value"), frozen, box),
                                argnums=argnums, has_aux=has_aux)
        value, gr = vg(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(gr), _out_tensors(value)
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) returns a tuple with one entry per primal."""
    res = _ad.vjp(_wrap_fn(func, range(len(primals))), *_to_arrays(primals), has_aux=has_aux)
    out, pull = res[0], res[1]

    def vjp_fn(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        return tuple(_out_tensors(pull(_to_arrays(ct))))
    if has_aux:
        return _out_tensors(out), vjp_fn, _out_tensors(res[2])
    return _out_tensors(out), vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J·tangents), as torch.func.jvp."""
    box, depth = [], _depth()
    res = _ad.jvp(_wrap_fn(func, (), box), tuple(_to_arrays(tuple(primals))), tuple(_to_arrays(tuple(tangents))),
                  has_aux=has_aux)
    _write_back(tuple(primals), {}, box[-1] if box else None, depth)
    return tuple(_out_tensors(r) for r in res)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func with respect to the argnums argument(s), by reverse mode (one vjp per output element, vmapped).

    Examples:
        >>> import funcgrad as torch
        >>> torch.func.jacrev(torch.sin)(torch.tensor([0.0, 1.0]))  # diag(cos(x))
        tensor([[1.0000, 0.0000],
                [0.0000, 0.5403]])
    """
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        j = _tr.jacrev(_wrap_fn(func, frozen, box), argnums=argnums, has_aux=has_aux)
        res = j(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of func with respect to the argnums argument(s), by forward mode (one jvp per input element, vmapped)."""
    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        j = _tr.jacfwd(_wrap_fn(func, (), box), argnums=argnums, has_aux=has_aux)
        res = j(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of scalar-valued func with respect to the argnums argument(s): jacfwd(jacrev(func))."""
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        h = _tr.hessian(_wrap_fn(func, frozen, box), argnums=argnums)
        res = h(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its tensor arguments, as torch.func.vmap. Inputs written in place
    get their final values back (batched along their in_dims). randomness: 'error' (a random operation inside
    raises RuntimeError), 'same' (one draw shared by the whole batch) or 'different' (independent draws per
    batch element: func then runs once per element, and the results are stacked)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                           f"Got {randomness}")
    def wrapper(*args, **kwargs):
        if randomness == "different":
            return _vmap_by_loop(func, in_dims, out_dims, args, kwargs)
        _creation._vmap_randomness.append(randomness)
        try:
            return mapped(*args, **kwargs)
        finally:
            _creation._vmap_randomness.pop()

    def mapped(*args, **kwargs):
        arrs, kw = _to_arrays(args), _to_arrays(kwargs)
        spec = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        try:
            axes = broadcast_prefix(spec, arrs, "vmap in_dims") + [0] * len(tree_leaves(kw))
        except (ValueError, TypeError) as e:
            raise ValueError(f"vmap({getattr(func, '__name__', 'func')}, in_dims={in_dims!r}, ...)(<inputs>): "
                             f"in_dims is not compatible with the structure of the {len(args)} positional "
                             f"inputs: {e}") from None
        box = []
        v = _tr.vmap(_wrap_fn(func, (), box, return_muts=True), in_axes=in_dims, out_axes=(out_dims, axes))
        out, muts = v(*arrs, **kw)
        _write_back(args, kwargs, muts)
        return _out_tensors(out)
    return wrapper


def _vmap_by_loop(func, in_dims, out_dims, args, kwargs):
    """vmap as its definition: func on each batch element (random draws independent per element), the results
    stacked along out_dims."""
    T = _T().Tensor
    spec = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    leaves, tree = tree_flatten(_keep_order((args, kwargs)))
    n_arg_leaves = len(tree_leaves(_keep_order(args)))
    dims = broadcast_prefix(spec, _keep_order(args), "vmap in_dims") + [0] * (len(leaves) - n_arg_leaves)
    sizes = {x.shape[d] for x, d in zip(leaves, dims) if d is not None and isinstance(x, T)}
    if len(sizes) != 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sorted(sizes)} for the mapped dimension" if sizes else
                         "vmap: at least one input must be a Tensor mapped over a dimension (in_dims not None)")
    size = sizes.pop()
    outs = []
    for b in range(size):
        sl = [x.select(d, b) if d is not None and isinstance(x, T) else x for x, d in zip(leaves, dims)]
        a, kw = _plain(tree_unflatten(tree, sl))
        outs.append(_keep_order(func(*a, **kw)))
    o_leaves = [tree_leaves(o) for o in outs]
    o_tree = tree_flatten(outs[0])[1]
    o_dims = broadcast_prefix(out_dims, outs[0], "vmap out_dims")
    stacked = [_stack([o[i] for o in o_leaves], dim=d) if d is not None else o_leaves[0][i]
               for i, d in enumerate(o_dims)]
    return _plain(tree_unflatten(o_tree, stacked))


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given tensors, as
    torch.func.functional_call (see funcgrad.nn.utils.stateless)."""
    return _stateless_call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]



def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    out, lin = _tr.linearize(_wrap_fn(func), *_to_arrays(primals))

    def jvp_fn(*tangents):
        return _out_tensors(lin(*_to_arrays(tangents)))
    return _out_tensors(out), jvp_fn


def stack_module_state(models):
    """(params, buffers): each a dict of the models' tensors stacked along a new leading dim (for vmap over an
    ensemble with functional_call). The stacked parameters are new leaves that require grad."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = models[0]
    if not all(type(m) is type(first) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stack(named):
        per_model = [dict(named(m)) for m in models]
        return {k: _stack([d[k].detach() for d in per_model]) for k in per_model[0]}
    params = stack(lambda m: m.named_parameters())
    for k, p in first.named_parameters():
        if p.requires_grad:
            params[k].requires_grad_(True)
    buffers = stack(lambda m: m.named_buffers())
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Every batch-norm module under root (root included) stops tracking running statistics, in place: its
    running_mean / running_var / num_batches_tracked become None, so that it normalises with the batch's own
    statistics and can run under vmap (torch.func.replace_all_batch_norm_modules_). Returns root."""
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


__all__ += ["linearize", "stack_module_state", "replace_all_batch_norm_modules_"]


_RANDOMNESS = ("error", "different", "same")


def _top_level_vmap(jax_vmap):
    """funcgrad.vmap, which is both jax.vmap and torch.vmap: called with Tensors (anywhere in the arguments) the
    mapped function runs as torch.func.vmap's does and returns Tensors; otherwise it is jax.vmap. The positional
    parameters agree (in_axes / in_dims, out_axes / out_dims); torch's names are accepted as keywords, and a
    fourth positional argument that names a randomness mode is torch's `randomness`."""
    def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None, *,
             in_dims=None, out_dims=None, randomness=None, chunk_size=None):
        if in_dims is not None:
            in_axes = in_dims
        if out_dims is not None:
            out_axes = out_dims
        torch_style = (in_dims is not None or out_dims is not None or randomness is not None
                       or chunk_size is not None)
        if randomness is None:
            if isinstance(axis_name, str) and axis_name in _RANDOMNESS:
                randomness, axis_name = axis_name, None
            else:
                randomness = "error"
        batched = jax_vmap(fun, in_axes, out_axes, axis_name=axis_name, axis_size=axis_size,
                           spmd_axis_name=spmd_axis_name)
        tensors = None

        def either(*args, **kwargs):
            nonlocal tensors
            T = _T().Tensor
            if torch_style or any(isinstance(x, T) for x in tree_leaves((args, kwargs))):
                if tensors is None:
                    tensors = globals()["vmap"](fun, in_axes, out_axes, randomness, chunk_size=chunk_size)
                return tensors(*args, **kwargs)
            return batched(*args, **kwargs)
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(either, attr, getattr(batched, attr))
            except (AttributeError, TypeError):
                pass
        either.__wrapped__ = fun
        return either
    vmap.__doc__ = jax_vmap.__doc__  # (its "Differences from JAX" section describes the torch behaviour)
    return vmap
