"""funcgrad.func: torch.func's composable transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call) over funcgrad's functional transforms, taking and returning Tensors.

    from funcgrad.func import grad, vmap
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)

Inside the transformed function tensors hold tracers, and views and in-place ops behave as torch.func's
functionalisation makes them (see funcgrad.tensor._functional): a view stays linked to its base, a write through
either is seen by both. In-place ops on the function's inputs follow torch.func too: on an input that grad,
grad_and_value, vjp, jacrev or hessian differentiates they raise RuntimeError; on any other input (vmap's and jvp's,
say) they write the final value back into the caller's tensor when the transform returns.
"""
from __future__ import annotations

from .core.array import Array, ArrayBase
from .core.trace import Tracer, _state as _trace_state
from .tree_util import broadcast_prefix, tree_flatten, tree_leaves, tree_map, tree_unflatten
from .transforms import ad as _ad
from . import transforms as _tr


def _T():
    from .tensor import _tensor
    return _tensor


def _to_arrays(tree):
    T = _T()
    return tree_map(lambda x: x._arr() if isinstance(x, T.Tensor) else x, tree)


def _out_tensors(tree):
    """Results of a transform (concrete Arrays) become ordinary tensors."""
    T = _T()

    def f(x):
        if isinstance(x, Array):
            return T._wrap(x)
        if isinstance(x, ArrayBase):
            return T._traced(x)
        return x
    return tree_map(f, tree)


def _unwrap_out(tree):
    T = _T()

    def f(x):
        if isinstance(x, T.Tensor):
            return x._arr()
        return x
    return tree_map(f, tree)


def _wrap_fn(func, frozen=(), box=None, return_muts=False):
    """func over tensors as a function over arrays. The tensors made from args[i], i in `frozen`, refuse in-place
    ops (the transform differentiates them). With `box`, the final values of the inputs written in place (None
    for the others, one entry per leaf of (args, kwargs)) are appended to it, and returned as a second output
    when `return_muts`."""
    def g(*args, **kwargs):
        T = _T()
        leaves, tree = tree_flatten((args, kwargs))
        tleaves = [T._traced(x) if isinstance(x, ArrayBase) else x for x in leaves]
        targs, tkw = tree_unflatten(tree, tleaves)
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
    for t, m in zip(tree_leaves((args, kwargs)), muts):
        if m is None or not isinstance(t, T):
            continue
        if depth is not None:
            m = _lower(m, depth)
            if m is None:
                continue
        t.copy_(_out_tensors(m))


def _argnums(argnums) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _depth() -> int:
    return len(_trace_state.stack)


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued func with respect to args[argnums], as torch.func.grad."""
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        g = _tr.grad(_wrap_fn(func, frozen, box), argnums=argnums, has_aux=has_aux)
        res = g(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) (value is (output, aux) with has_aux), as torch.func.grad_and_value."""
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        vg = _tr.value_and_grad(_wrap_fn(func, frozen, box), argnums=argnums, has_aux=has_aux)
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
    frozen = _argnums(argnums)

    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        j = _tr.jacrev(_wrap_fn(func, frozen, box), argnums=argnums, has_aux=has_aux)
        res = j(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    def wrapper(*args, **kwargs):
        box, depth = [], _depth()
        j = _tr.jacfwd(_wrap_fn(func, (), box), argnums=argnums, has_aux=has_aux)
        res = j(*_to_arrays(args), **_to_arrays(kwargs))
        _write_back(args, kwargs, box[-1] if box else None, depth)
        return _out_tensors(res)
    return wrapper


def hessian(func, argnums=0):
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
    get their final values back (batched along their in_dims)."""
    def wrapper(*args, **kwargs):
        arrs, kw = _to_arrays(args), _to_arrays(kwargs)
        spec = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        try:
            axes = broadcast_prefix(spec, arrs, "vmap in_dims") + [0] * len(tree_leaves(kw))
        except (ValueError, TypeError):  # let vmap report the mismatch
            return _out_tensors(_tr.vmap(_wrap_fn(func), in_axes=in_dims, out_axes=out_dims)(*arrs, **kw))
        box = []
        v = _tr.vmap(_wrap_fn(func, (), box, return_muts=True), in_axes=in_dims, out_axes=(out_dims, axes))
        out, muts = v(*arrs, **kw)
        _write_back(args, kwargs, muts)
        return _out_tensors(out)
    return wrapper


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given tensors, as
    torch.func.functional_call (see funcgrad.nn.utils.stateless)."""
    from .nn.utils.stateless import functional_call as call
    return call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call"]


from ._func_more import linearize, stack_module_state  # noqa: E402
__all__ += ["linearize", "stack_module_state"]
