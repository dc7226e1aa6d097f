"""funcgrad.func: torch.func's composable transforms (grad, grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap, functional_call) over funcgrad's functional transforms, taking and returning Tensors.

    from funcgrad.func import grad, vmap
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)

Inside the transformed function tensors hold tracers: operations stay functional (in-place ops replace
the held value; views of traced tensors do not alias).
"""
from __future__ import annotations

from .core.array import Array, ArrayBase
from .tree_util import tree_map
from .transforms import ad as _ad
from . import transforms as _tr


def _T():
    from .tensor import _tensor
    return _tensor


def _to_arrays(tree):
    T = _T()
    return tree_map(lambda x: x._arr() if isinstance(x, T.Tensor) else x, tree)


def _to_tensors(tree):
    """Arrays and tracers (as handed to the user's function) become tensors."""
    T = _T()

    def f(x):
        if isinstance(x, ArrayBase):
            return T._traced(x)
        return x
    return tree_map(f, tree)


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
            return x._a if x._v is None else x._arr()
        return x
    return tree_map(f, tree)


def _wrap_fn(func):
    def g(*args, **kwargs):
        out = func(*_to_tensors(args), **_to_tensors(kwargs))
        return _unwrap_out(out)
    g.__name__ = getattr(func, "__name__", "func")
    return g


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued func with respect to args[argnums], as torch.func.grad."""
    g = _tr.grad(_wrap_fn(func), argnums=argnums, has_aux=has_aux)

    def wrapper(*args, **kwargs):
        return _out_tensors(g(*_to_arrays(args), **_to_arrays(kwargs)))
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) (value is (output, aux) with has_aux), as torch.func.grad_and_value."""
    vg = _tr.value_and_grad(_wrap_fn(func), argnums=argnums, has_aux=has_aux)

    def wrapper(*args, **kwargs):
        value, gr = vg(*_to_arrays(args), **_to_arrays(kwargs))
        return _out_tensors(gr), _out_tensors(value)
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) returns a tuple with one entry per primal."""
    res = _ad.vjp(_wrap_fn(func), *_to_arrays(primals), has_aux=has_aux)
    out, pull = res[0], res[1]

    def vjp_fn(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        return tuple(_out_tensors(pull(_to_arrays(ct))))
    if has_aux:
        return _out_tensors(out), vjp_fn, _out_tensors(res[2])
    return _out_tensors(out), vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J·tangents), as torch.func.jvp."""
    res = _ad.jvp(_wrap_fn(func), tuple(_to_arrays(tuple(primals))), tuple(_to_arrays(tuple(tangents))),
                  has_aux=has_aux)
    return tuple(_out_tensors(r) for r in res)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    j = _tr.jacrev(_wrap_fn(func), argnums=argnums, has_aux=has_aux)

    def wrapper(*args, **kwargs):
        return _out_tensors(j(*_to_arrays(args), **_to_arrays(kwargs)))
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    j = _tr.jacfwd(_wrap_fn(func), argnums=argnums, has_aux=has_aux)

    def wrapper(*args, **kwargs):
        return _out_tensors(j(*_to_arrays(args), **_to_arrays(kwargs)))
    return wrapper


def hessian(func, argnums=0):
    h = _tr.hessian(_wrap_fn(func), argnums=argnums)

    def wrapper(*args, **kwargs):
        return _out_tensors(h(*_to_arrays(args), **_to_arrays(kwargs)))
    return wrapper


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its tensor arguments, as torch.func.vmap."""
    v = _tr.vmap(_wrap_fn(func), in_axes=in_dims, out_axes=out_dims)

    def wrapper(*args, **kwargs):
        return _out_tensors(v(*_to_arrays(args), **_to_arrays(kwargs)))
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
