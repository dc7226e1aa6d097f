"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp of functions of tensors."""
from __future__ import annotations


def _T():
    from . import graph
    return graph._TENSOR


def _tup(x):
    T = _T()
    return (x,) if isinstance(x, T.Tensor) else tuple(x)


def _prep(inputs, create_graph):
    return tuple(x.detach().requires_grad_(True) if not create_graph or not x._rg else x
                 for x in _tup(inputs))


def _check_strict(outs, strict) -> None:
    """strict=True: every output must require grad (be computed differentiably from the inputs), as torch's."""
    if strict:
        for i, o in enumerate(outs):
            if not o.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                                   "must be computed in a differentiable manner from the input when running in strict "
                                   "mode.")


def _check_v_none_inputs(ins) -> None:
    if len(ins) != 1 or ins[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of func at inputs (v may be omitted for a scalar output)."""
    from . import grad
    T = _T()
    single = isinstance(inputs, T.Tensor)
    ins = _prep(inputs, create_graph)
    outs = func(*ins)
    outs_t = _tup(outs)
    _check_strict(outs_t, strict)
    if v is None and (len(outs_t) != 1 or outs_t[0].numel() != 1):
        raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor with "
                           "a single element.")
    vs = [None] * len(outs_t) if v is None else list(_tup(v))
    gs = grad(list(outs_t), list(ins), vs, create_graph=create_graph, allow_unused=True, materialize_grads=True)
    out = outs if create_graph else (outs.detach() if isinstance(outs, T.Tensor) else tuple(o.detach() for o in outs))
    return out, (gs[0] if single else gs)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: for one input and one output, a tensor of shape out.shape + in.shape."""
    import numpy as np
    from . import grad
    from .._torch.ops import join_split
    T = _T()
    single_in = isinstance(inputs, T.Tensor)
    ins = _prep(inputs, create_graph)
    outs = func(*ins)
    single_out = isinstance(outs, T.Tensor)
    outs_t = _tup(outs)
    _check_strict(outs_t, strict)
    result = []
    for o in outs_t:
        rows = [[] for _ in ins]
        for k in range(o.numel()):
            g = np.zeros(o.shape, o._np_dtype())
            g.reshape(-1)[k] = 1
            gs = grad([o], list(ins), [T._make(g)], retain_graph=True, create_graph=create_graph,
                      allow_unused=True, materialize_grads=True) if o._rg else \
                [T._make(np.zeros(x.shape, x._np_dtype())) for x in ins]
            for j, gj in enumerate(gs):
                rows[j].append(gj)
        per_in = []
        for j, x in enumerate(ins):
            if rows[j]:
                per_in.append(join_split.stack(rows[j]).reshape(tuple(o.shape) + tuple(x.shape)))
            else:
                per_in.append(T._make(np.zeros(tuple(o.shape) + tuple(x.shape), x._np_dtype())))
        result.append(per_in[0] if single_in else tuple(per_in))
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of scalar-valued func at inputs (a tuple of tuples of blocks for several inputs)."""
    T = _T()
    single = isinstance(inputs, T.Tensor)

    def jac(*xs):
        return jacobian(func, xs[0] if single else xs, create_graph=True)
    return jacobian(jac, inputs, create_graph=create_graph)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode product via the double-vjp trick."""
    import numpy as np
    from . import grad
    T = _T()
    ins = _prep(inputs, True)
    if v is None:
        _check_v_none_inputs(ins)
    outs = func(*ins)
    outs_t = _tup(outs)
    _check_strict(outs_t, strict)
    us = [T._make(np.zeros(o.shape, o._np_dtype())).requires_grad_() for o in outs_t]
    gs = grad(list(outs_t), list(ins), us, create_graph=True, allow_unused=True, materialize_grads=True)
    vs = list(_tup(v)) if v is not None else [T._make(np.ones(x.shape, x._np_dtype())) for x in ins]
    res = grad(list(gs), us, vs, create_graph=create_graph, allow_unused=True, materialize_grads=True)
    out = outs.detach() if isinstance(outs, T.Tensor) else tuple(o.detach() for o in outs)
    return out, (res[0] if isinstance(outs, T.Tensor) else res)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of scalar-valued func at inputs; vhp (v^T H) is the same for a symmetric Hessian."""
    import numpy as np
    from . import grad
    T = _T()
    single = isinstance(inputs, T.Tensor)
    ins = _prep(inputs, True)
    if v is None:
        _check_v_none_inputs(ins)
    out = func(*ins)
    if not isinstance(out, T.Tensor) or out.numel() != 1:
        raise RuntimeError("The Tensor returned by the function given to hvp should contain a single element")
    _check_strict([out], strict)
    gs = grad([out], list(ins), create_graph=True, allow_unused=True, materialize_grads=True)
    vs = list(_tup(v)) if v is not None else [T._make(np.ones(x.shape, x._np_dtype())) for x in ins]
    res = grad(list(gs), list(ins), vs, create_graph=create_graph, allow_unused=True, materialize_grads=True)
    return out.detach(), (res[0] if single else res)


vhp = hvp
