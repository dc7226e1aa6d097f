"""Helpers the op families share: torch's type promotion over tensors and Python scalars, broadcasting
with torch's errors, the binary-op driver `_binop`, dim normalisation, `out=` writes, operand conversion and
torch's index and integer-value checks."""
from __future__ import annotations

import builtins
import functools
import warnings

import numpy as np

from ..._src.core.array import Array
from ..._src.prims import elementwise as ew
from ..._src.prims.shape import broadcast_in_dim as _broadcast_in_dim
from .. import _dtype as D, _dispatch as _DP
from ...autograd.grad_mode import state as _gs
from .._argcheck import dtype_error as _dtype_error
from .._tensor import Tensor, _dim, _wrap
from .._dispatch import _apply, _apply1, _apply_nograd, _apply_prim2, _apply_prim_scalar, _req
from .._errors import _legacy


_bool = builtins.bool
_int = builtins.int
_float = builtins.float
_min = builtins.min
_max = builtins.max
_sum = builtins.sum
_abs = builtins.abs
_any = builtins.any
_all = builtins.all
_range = builtins.range
_NPB = np.dtype(np.bool_)
_NPI64 = np.dtype(np.int64)


def _one_float_dtype(*ts) -> bool:
    """Whether ts are concrete tensors of one float or complex dtype of at least 32 bits: where a fused op
    (addmm, addcmul, lerp, ...) is recorded as one node of its binds, as torch's one kernel. (Other dtypes keep
    their op-by-op path, with torch's promotions, integer rules and float16 roundings.)"""
    dt = None
    for t in ts:
        if not isinstance(t, Tensor):
            return False
        v = t._v
        if v is None:
            return False
        if dt is None:
            dt = v.dtype
            if dt.kind not in "fc" or dt.itemsize < 4:
                return False
        elif v.dtype != dt:
            return False
    return True


def _is_scalar(x) -> bool:
    return isinstance(x, (_bool, _int, _float, complex, np.generic)) and not isinstance(x, Tensor)


def _as_tensor(x, dtype=None):
    if isinstance(x, Tensor):
        return x
    from .._creation import tensor
    return tensor(x, dtype=dtype)


def _cast(a, dt):
    return a if a.dtype == dt else ew.convert_element_type(a, dt)


def _scalar_arr(s, dt):
    if isinstance(s, Tensor):
        s = s.item()
    try:
        b = np.array(s, dt)
    except (OverflowError, ValueError):
        b = np.array(s).astype(dt)
    return Array(b)


def _bshape(sa, sb):
    """Broadcast shape of two shapes, with torch's error message."""
    na, nb = len(sa), len(sb)
    n = _max(na, nb)
    out = []
    for i in _range(n):
        a = sa[i - n + na] if i - n + na >= 0 else 1
        b = sb[i - n + nb] if i - n + nb >= 0 else 1
        if a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                               f"non-singleton dimension {i}")
        out.append(b if a == 1 else a)
    return tuple(out)


def _bid(x, shape):
    n = len(shape)
    return _broadcast_in_dim(x, shape, tuple(_range(n - x.ndim, n)))


def _bc(prim):
    """An elementwise binary primitive with broadcasting. NumPy broadcasts concrete operands itself; so it
    does a concrete 0-d constant against an operand being recorded on a tape over concrete values (its
    cotangent is never needed); otherwise operands are broadcast explicitly."""
    def f(p, q):
        sp, sq = p.shape, q.shape
        if sp != sq:
            pa, qa = p.__class__ is Array, q.__class__ is Array
            if pa and qa:
                return prim(p, q)
            if qa and not sq and getattr(p, "val", None).__class__ is Array:
                return prim(p, q)
            if pa and not sp and getattr(q, "val", None).__class__ is Array:
                return prim(p, q)
            shape = _bshape(sp, sq)
            if sp != shape:
                p = _bid(p, shape)
            if sq != shape:
                q = _bid(q, shape)
        return prim(p, q)
    return f


def _promote(x, y):
    """torch.result_type of two operands (tensors or Python scalars)."""
    return _result_type_many((x, y))


def _result_type_many(xs):
    """torch's promotion over operands: dimensioned tensors, then 0-d tensors, then Python scalars."""
    dims, zeros, scal = [], [], []
    for v in xs:
        if isinstance(v, Tensor):
            (dims if v.ndim else zeros).append(v._np_dtype())
        else:
            scal.append(D.scalar_dtype(v))
    return D.result_type(dims, zeros, scal)


def _norm_scalar(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return _as_tensor(v)
    return v


_ARITH, _TRUEDIV, _CMP = 0, 1, 2


def _same_pair(name, prim, afn, x, y, kinds="fciu"):
    """add/sub/mul's first test: two plain concrete tensors of one numeric dtype (of `kinds`) and one shape take
    prim's direct path (_apply_prim2), as _binop would, without its generality; None for anything else."""
    if x.__class__ is Tensor and y.__class__ is Tensor:
        xv = x._v
        yv = y._v
        if xv is not None and yv is not None:
            dt = xv.dtype
            if dt is yv.dtype and dt.kind in kinds and xv.shape == yv.shape:
                return _apply_prim2(name, prim, afn, x, y)
    return None


def _binop(name, afn, x, y, kind=_ARITH, cdt=None, prim=None):
    """x op y with torch promotion; afn works on Arrays of one dtype (broadcasting via _bc). prim: the
    primitive afn binds (alone) on operands of one numeric dtype, which then take the direct path."""
    if isinstance(x, Tensor):
        xv = x._v
        if isinstance(y, Tensor):
            yv = y._v
            # the hot path: two concrete tensors of one dtype
            if xv is not None and yv is not None and (xv.dtype is yv.dtype or xv.dtype == yv.dtype) and \
                    cdt is None and (kind != _TRUEDIV or D.kind(xv.dtype) in "fc"):
                if xv.shape != yv.shape:
                    _bshape(xv.shape, yv.shape)
                if prim is not None and (xv.dtype.kind in "fciu" or D.kind(xv.dtype) == "f"):  # (bfloat16: "V")
                    return _apply_prim2(name, prim, afn, x, y)
                if not (_gs.enabled and (x._rg or y._rg or x._base is not None and _req(x)
                                         or y._base is not None and _req(y))) and not _DP._fw_on:
                    return _wrap(afn(x._arr(), y._arr()))
        elif prim is not None and xv is not None and (y.__class__ is _float or y.__class__ is _int) and \
                D.kind(xv.dtype) == "f":  # a float tensor and a Python number: the tensor's dtype
            return _apply_prim_scalar(name, prim, afn, x, y, False)
    elif prim is not None and (x.__class__ is _float or x.__class__ is _int) and isinstance(y, Tensor) and \
            y._v is not None and D.kind(y._v.dtype) == "f":
        return _apply_prim_scalar(name, prim, afn, y, x, True)
    y = _norm_scalar(y)
    x = _norm_scalar(x)
    xt = isinstance(x, Tensor)
    yt = isinstance(y, Tensor)
    if xt and yt:
        dx, dy = x._np_dtype(), y._np_dtype()
        dt = dx if dx == dy else _promote(x, y)
    elif xt or yt:  # a tensor t and a scalar s (a Python number on a float tensor keeps its dtype)
        t, s, arg = (x, y, "other") if xt else (y, x, "input")
        if not _is_scalar(s):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor or Number, not {type(s).__name__}")
        dt = t._np_dtype()
        if D.kind(dt) != "f" or (s.__class__ is not _float and s.__class__ is not _int):
            dt = _promote(x, y)
    else:
        raise TypeError(f"{name}(): expected a Tensor operand")
    if kind == _TRUEDIV and dt.kind in "biu":
        dt = D.default_float()
    if cdt is not None:
        dt = cdt(dt)
    if xt and yt:
        sx = x._v.shape if x._v is not None else x._a.shape
        sy = y._v.shape if y._v is not None else y._a.shape
        if sx != sy:
            _bshape(sx, sy)

        def fn(p, q):
            return afn(_cast(p, dt), _cast(q, dt))
        if kind == _CMP:
            return _apply_nograd(fn, (x, y))
        return _apply(name, fn, (x, y))
    s = _scalar_arr(s, dt)
    if xt:
        def fn(p):
            return afn(_cast(p, dt), s)
    else:
        def fn(q):
            return afn(s, _cast(q, dt))
    if kind == _CMP:
        return _apply_nograd(fn, (t,))
    return _apply1(name, fn, t)


def _dims(dim, ndim, dup_ok=False):
    """A dim argument (int, tuple/list, or None) as a sorted tuple of axes (None: all; a 0-d tensor's dim 0
    or -1 reduces nothing, ())."""
    if dim is None:
        return None
    if ndim == 0:
        for i, d in enumerate(dim if isinstance(dim, (list, tuple)) else (dim,)):
            _dim(d, 0)
            if i and not dup_ok:  # (0 and -1 both name a 0-d tensor's dim 0)
                raise RuntimeError("dim 0 appears multiple times in the list of dims")
        return None if isinstance(dim, (list, tuple)) and len(dim) == 0 else ()
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        ds = [_dim(d, ndim) for d in dim]
        for i, d in enumerate(ds):
            if d in ds[:i] and not dup_ok:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(sorted(set(ds)))
    return (_dim(dim, ndim),)


def _np(dt):
    return None if dt is None else D.to_np(dt)


def _out(r, out, exact=False):
    """r written into out= as torch's kernels do: out keeps its dtype, and r's dtype must cast to it
    (same_kind: float -> int raises) or, for the kernels that compute in their input's dtype (`exact`: neg,
    floor, clamp, where, amax, sort, matmul, index_select, ...), equal it; a tuple out takes a tuple result."""
    if out is None:
        return r
    if exact is None:
        return _out_cast(r, out)
    if isinstance(out, (tuple, list)):
        if not isinstance(r, tuple) or len(out) != len(r):
            raise TypeError(f"out= must be a tuple of {len(r) if isinstance(r, tuple) else 1} tensors")
        outs = tuple(_out(a, o, True) for a, o in zip(r, out))
        return type(r)(outs) if type(r) is tuple else type(r)(*outs)
    if isinstance(r, Tensor) and r._np_dtype() != out._np_dtype():
        if exact:
            raise _dtype_error("Found dtype {1} but expected {0}", r, out)
        if not D.can_cast(r._np_dtype(), out._np_dtype()):
            raise _dtype_error("result type {0} can't be cast to the desired output type {1}", r, out)
    return _out_cast(r, out)


def _out_cast(r, out):
    """r written into out=, cast to its dtype whatever it is (torch.sum computes in out's dtype). An out of
    another shape is resized first (keeping its dtype), with torch's deprecation warning when it had elements."""
    if out is None:
        return r
    if out.shape != r.shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(r.shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(tuple(r.shape))
    out.copy_(r)
    return out


def _with_out(exact=True):
    """Decorator: give a function torch's `out=` keyword, written by `_out` (exact dtype by default; False:
    same_kind casts; None: the kernels with a dtype= argument, which compute in out's dtype)."""
    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, out=None, **kwargs):
            if out is not None and exact is None and kwargs.get("dtype") is None:
                kwargs["dtype"] = out.dtype  # (the kernel computes in out's dtype)
            r = fn(*args, **kwargs)
            return r if out is None else _out(r, out, exact)
        return op
    return wrap


def _not_impl(kernel, kinds="b"):
    """A dtype check raising torch's NotImplementedError for a kernel without a bool (or integer) version."""
    def check(dt):
        dt = np.dtype(dt)
        if D.kind(dt) in kinds:  # (bfloat16 is of the float kind)
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_legacy_name(dt)}'")
        return dt
    return check


def _tensor_arg(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")


def _legacy_name(dt):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(np.dtype(dt).name, str(dt))


def _t(x, dtype=None) -> Tensor:
    return _as_tensor(x, dtype)


def _host_int(t, name: str) -> np.ndarray:
    v = t._host()
    if v.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected a Long tensor for the indices, but got {_legacy(v.dtype)}")
    return v.astype(np.int64)


def _check_int_value(name, value, *ts):
    if isinstance(value, _float) and all(t._np_dtype().kind in "biu" for t in ts if isinstance(t, Tensor)):
        raise RuntimeError(f"{name}: For integral input tensors, argument value must not be a floating point "
                           "number.")
