"""Elementwise selection: clamp (number bounds as one clamp_bounds card, tensor bounds with torch's
derivatives at ties), clamp_min/clamp_max, where, masked_fill and masked_select."""
from __future__ import annotations

import numpy as np

from .. import _jnp as jnp, _dtype as D
from ..._src.core.array import Array
from ..._src.core.dtypes import is_float as _is_float
from ..._src.prims import elementwise as ew
from .._tensor import Tensor
from .._dispatch import _apply, _apply_prim, _apply_prim1
from .._errors import _legacy
from .._argcheck import DtypeName
from ._common import (_as_tensor, _bshape, _cast, _not_impl, _NPB, _out, _promote, _result_type_many, _scalar_arr,
                      _with_out)
from .indexing import nonzero


def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__ for v in (input, min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                        " * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    return _clamp(input, min, max, out, "Clamp1")


def _clamp(input, lo, hi, out, name):
    """clamp; `name`: the recorded node's with number bounds (torch's clamp: ClampBackward1; clamp_min /
    clamp_max with a number: ClampMinBackward0 / ClampMaxBackward0), ClampBackward0 with a Tensor bound."""
    v = input._v
    if v is not None and v.dtype.kind == "f" and input.__class__ is Tensor and out is None and \
            (lo is None or lo.__class__ is float or lo.__class__ is int) and \
            (hi is None or hi.__class__ is float or hi.__class__ is int):
        # the common case, a concrete float tensor between Python numbers: the result has the tensor's dtype
        # (torch's promotion, without working it out)
        dt = v.dtype
        params = {"lo": None if lo is None else _scalar_arr(lo, dt)._buf[()],
                  "hi": None if hi is None else _scalar_arr(hi, dt)._buf[()]}
        return _apply_prim1(name, ew.clamp_bounds_p, lambda a: ew.clamp_bounds_p.bind(a, **params), input, params)
    dt = _result_type_many([input] + [v for v in (lo, hi) if v is not None])
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor):
        _not_impl("clamp_min_scalar_cpu" if hi is None else "clamp_max_scalar_cpu" if lo is None
                  else "clamp_scalar_cpu")(dt)
    if not isinstance(lo, Tensor) and not isinstance(hi, Tensor) and D.kind(dt) in "iuf":
        # number bounds: one clamp_bounds primitive (one recorded node, one or two passes)
        params = {"lo": None if lo is None else _scalar_arr(lo, dt)._buf[()],
                  "hi": None if hi is None else _scalar_arr(hi, dt)._buf[()]}
        if input._np_dtype() == dt:
            f = (lambda a: ew.clamp_bounds_p.bind(a, **params))
            r = _apply_prim1(name, ew.clamp_bounds_p, f, input, params) if input._v is not None else \
                _apply_prim(name, ew.clamp_bounds_p, f, (input,), params)
        else:
            r = _apply(name, lambda a: ew.clamp_bounds_p.bind(_cast(a, dt), **params), (input,))
        return _out(r, out, True)  # (number bounds: the kernel's out must have the result's dtype)
    ts = [input] + [v for v in (lo, hi) if isinstance(v, Tensor)]
    has_lo_t, has_hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    if D.kind(dt) == "c":  # (a complex input is refused before; a complex bound: clamp_min/max's kernel refuses it)
        raise NotImplementedError(f"\"{'maximum' if lo is not None else 'minimum'}_cpu\" not implemented for "
                                  f"'{_legacy(dt)}'")
    if has_lo_t and has_hi_t:
        _not_impl("clamp_cpu")(dt)
    lo_s = None if lo is None or has_lo_t else _scalar_arr(lo, dt)
    hi_s = None if hi is None or has_hi_t else _scalar_arr(hi, dt)

    def fn(a, *bs):
        it = iter(bs)
        ops = [_cast(a, dt)] + [(_cast(next(it), dt) if is_t else s) for b, is_t, s in
                                ((lo, has_lo_t, lo_s), (hi, has_hi_t, hi_s)) if b is not None]
        shape = ops[0].shape
        for o in ops[1:]:
            if o.shape != shape:
                shape = _bshape(shape, o.shape)
        ops = [o if o.shape == shape else jnp.broadcast_to(o, shape) for o in ops]
        return _clamp_tensor_bounds(ops[0], ops[1] if lo is not None else None, ops[-1] if hi is not None else None)
    r = _apply("Clamp", fn, tuple(ts))
    if r._gfn is not None and (lo is None or hi is None):  # (torch's clamp.Tensor: an entry for the absent bound)
        r._gfn.absent_slots = (1,) if lo is None else (2,)
    return _out(r, out)


def _clamp_tensor_bounds(a, lo, hi):
    """torch.clamp with a Tensor bound, on operands of one shape and dtype: a NaN operand gives NaN. Its
    derivatives are torch's (the cards' kink="torch" rules: forward and backward formulas differ at ties)."""
    if _is_float(a.dtype):
        if lo is not None and hi is not None:
            return ew.clamp_p.bind(lo, a, hi, kink="torch")
        return ew.max_p.bind(a, lo, kink="torch") if hi is None else ew.min_p.bind(a, hi, kink="torch")
    if lo is not None:  # integers and bool: values only
        a = ew.select(ew.lt(a, lo), lo, a)
    if hi is not None:
        a = ew.select(ew.gt(a, hi), hi, a)
    return a


clip = clamp


def _clamp_one(name, card):
    """clamp_min / clamp_max: with a Tensor bound, torch's clamp_min.Tensor / clamp_max.Tensor, whose forward
    formula gives a tie to the input (torch.clamp's gives it to the bound); elsewhere clamp's derivatives."""
    def fn(input, bound):
        node = "ClampMin" if name == "clamp_min" else "ClampMax"
        lohi = (bound, None) if name == "clamp_min" else (None, bound)
        if not isinstance(bound, Tensor):
            _not_impl(f"{name}_scalar_cpu")(_promote(input, bound))
            if bound is None:  # (as before: torch.clamp's error)
                return clamp(input, **{name[-3:]: bound})
            return _clamp(input, *lohi, None, node)  # (torch's ClampMinBackward0 / ClampMaxBackward0)
        dt = _result_type_many([input, bound])
        if not _is_float(dt):
            return _clamp(input, *lohi, None, node)

        def f(a, b):
            a, b = _cast(a, dt), _cast(b, dt)
            if a.shape != b.shape:
                a, b = jnp.broadcast_arrays(a, b)
            return ew.select(ew.eq(a, b), a, card.bind(a, b, kink="torch"))
        return _apply(node + "1", f, (input, bound))  # (torch's clamp_min.Tensor: ClampMinBackward1)
    fn.__name__ = fn.__qualname__ = name
    return fn


clamp_min = _with_out()(_clamp_one("clamp_min", ew.max_p))
clamp_max = _with_out()(_clamp_one("clamp_max", ew.min_p))


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = _as_tensor(condition)
    if cond._np_dtype() != _NPB:
        if cond._np_dtype() != np.uint8:  # (uint8 is accepted, deprecated, as torch)
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_legacy(cond._np_dtype())}")
        cond = cond.bool()
    dt = _result_type_many([v for v in (input, other)])
    if isinstance(input, Tensor) and isinstance(other, Tensor) and out is None:
        cv, av, bv = cond._v, input._v, other._v
        if cv is not None and av is not None and bv is not None and av.dtype is dt and bv.dtype is dt and \
                cv.shape == av.shape == bv.shape:  # one bind of select: one recorded node from a cached plan
            return _apply_prim("Where", ew.select_p, ew.select, (cond, input, other))
    xs = []
    consts = []
    for v in (input, other):
        if isinstance(v, Tensor):
            xs.append(v)
            consts.append(None)
        else:
            consts.append(_scalar_arr(v, dt))

    def fn(c, *ts):
        it = iter(ts)
        a = _cast(next(it), dt) if consts[0] is None else consts[0]
        b = _cast(next(it), dt) if consts[1] is None else consts[1]
        shape = _bshape(_bshape(c.shape, a.shape), b.shape)
        if c.shape != shape:
            c = jnp.broadcast_to(c, shape)
        if a.shape != shape:
            a = jnp.broadcast_to(a, shape)
        if b.shape != shape:
            b = jnp.broadcast_to(b, shape)
        return ew.select(c, a, b)
    return _out(_apply("Where", fn, (cond,) + tuple(xs)), out, True)


def masked_fill(input, mask, value):
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    _check_mask(mask, input)
    dt = input._np_dtype()
    if isinstance(value, Tensor):
        def fn(a, m, v):
            shape = _bshape(a.shape, m.shape)
            return ew.select(jnp.broadcast_to(m, shape), jnp.broadcast_to(_cast(v, dt), shape),
                             jnp.broadcast_to(a, shape))
        return _apply("MaskedFill", fn, (input, mask, value))
    s = Array(np.asarray(D.checked_scalar(value, dt)))  # (c10's checked_convert: torch's overflow errors)

    def fn1(a, m):
        shape = _bshape(a.shape, m.shape)
        return ew.select(jnp.broadcast_to(m, shape), jnp.broadcast_to(s, shape), jnp.broadcast_to(a, shape))
    return _apply("MaskedFill", fn1, (input, mask))


def _check_mask(mask, input=None):
    """masked_fill's mask: it broadcasts with input (torch's first check), and is bool."""
    if isinstance(mask, Tensor) and input is not None:
        _bshape(tuple(mask.shape), tuple(input.shape))
    if not isinstance(mask, Tensor) or mask._np_dtype() != _NPB:
        got = f"{DtypeName(mask._np_dtype()):c}" if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}")


@_with_out()
def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask._np_dtype() != _NPB:
        raise RuntimeError("masked_select: expected BoolTensor for mask")

    def fn(a, m):
        shape = _bshape(a.shape, m.shape)
        return jnp.broadcast_to(a, shape)[np.asarray(jnp.broadcast_to(m, shape))]
    return _apply("MaskedSelect", fn, (input, mask))


# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods
METHODS = ("clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "masked_select")
INPLACE = ("clamp", "clip", "clamp_min", "clamp_max", "masked_fill", "where")

__all__ = ["clamp", "clamp_max", "clamp_min", "clip", "masked_fill", "masked_select", "where"]
