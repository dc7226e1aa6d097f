"""Tensor methods: the torch functions as methods, operators, in-place variants and conversions."""
from __future__ import annotations

import math
import warnings
from types import FunctionType as _FunctionType

import numpy as np

from ..autograd.grad_mode import state as _gs
from .._src.core.array import Array
from .._src.prims import elementwise as ew
from . import _creation as C
from . import _mt19937 as MT
from . import _dtype as D
from . import _complex_reject, _index
from . import _jnp as jnp
from .ops import (activations, arithmetic, comparison, diagonals, extrema, indexing, join_split, products,
                  reductions, selection, sorting, unary, views)
from .ops._common import _bshape, _cast
from . import _dispatch as _DP
from ._tensor import Tensor, _traced, _wrap
from ._dispatch import _apply1, _apply_prim1, _apply_prim2, _apply_prim_scalar, _req
from ._views import _inplace
from ._errors import _INF_INPLACE_MSG
from ._errors import _legacy
from ._legacy import TYPES

# --- the generic in-place variant of an op ------------------------------------------------------------


def _make_inplace(op, name):
    """op_(self, *args): op computed on the Array values, written into self's buffer. `name`: the node's, or a
    function of the tensors among the arguments giving it (where torch's in-place overloads differ)."""
    def method(self, *args, **kwargs):
        tens = tuple(a for a in args if isinstance(a, Tensor)) + tuple(
            v for v in kwargs.values() if isinstance(v, Tensor))
        node = name if name.__class__ is str else name(tens)

        def fn(a, *os):
            it = iter(os)
            new_args = [_traced(next(it)) if isinstance(x, Tensor) else x for x in args]
            new_kw = {k: (_traced(next(it)) if isinstance(v, Tensor) else v) for k, v in kwargs.items()}
            r = op(_traced(a), *new_args, **new_kw)
            return r._a if r._v is None else r._arr()
        out = _inplace(node, self, fn, tens)
        if node in _NUMBER_NODES and not tens and args:  # (x.mul_(2): torch's entry for the wrapped number)
            g = (self._base if self._base is not None else self)._gfn
            if g is not None:
                getattr(g, "op", g).number_operand = True
        return out
    method.__name__ = op.__name__ + "_"
    return method


_NUMBER_NODES = frozenset(("Add", "Sub", "Mul", "Div"))


# torch's in-place nodes named by overload: a number bound (clamp_: ClampBackward1, clamp_min_: ClampMinBackward0)
# or a tensor one (ClampBackward0, ClampMinBackward1)
_INPLACE_NODES = {"clamp": lambda ts: "Clamp" if ts else "Clamp1", "clip": lambda ts: "Clamp" if ts else "Clamp1",
                  "clamp_min": lambda ts: "ClampMin1" if ts else "ClampMin",
                  "clamp_max": lambda ts: "ClampMax1" if ts else "ClampMax",
                  "lerp": lambda ts: "Lerp1" if len(ts) == 2 else "Lerp",  # (LerpBackward1 for a tensor weight)
                  "xlogy": lambda ts: "Xlogy" if ts else "Xlogy2", "square": "Pow"}


def _bc_into(src, dst) -> bool:
    """Whether shape src broadcasts to exactly dst."""
    if len(src) > len(dst):
        return False
    return all(a == 1 or a == b for a, b in zip(src[::-1], dst[::-1]))


def _fast_binary_inplace(np_fn, op, name, scales=False):
    """add_/sub_/mul_/div_: straight to NumPy's out= when nothing is recorded and dtypes agree. `scales`
    (add_/sub_): a complex other is multiplied by alpha, 1 too, as torch's kernel does (see arithmetic._scaled)."""
    generic = _make_inplace(op, name)

    def method(self, other, _other=arithmetic._NO, *, alpha=None):
        if _other is not arithmetic._NO:  # (torch's deprecated add_/sub_(alpha, other): old optimisers' form)
            other, alpha = arithmetic.alpha_first(method.__name__, other, _other, arithmetic.METHOD_FORM)
        v = self._v
        if _DP._fw_on or alpha is not None and isinstance(alpha, (bool, complex, np.bool_, np.complexfloating)):
            v = None  # (forward AD: the tangents are updated by _inplace; a bool/complex alpha: torch's checks)
        if v is not None and not _gs.enabled or (v is not None and not self._rg and not (
                isinstance(other, Tensor) and _req(other)) and (self._base is None or not self._base._rg)):
            if v.flags.writeable and v.dtype.kind in "fc" and not self._inf:
                if isinstance(other, Tensor):
                    ov = other._v
                    if ov is not None and ov.dtype == v.dtype and (ov.shape == v.shape or _bc_into(ov.shape, v.shape)):
                        if scales and v.dtype.kind == "c":  # (torch's kernel: v + (-alpha) * other for sub_)
                            a = 1 if alpha is None else alpha
                            np.add(v, ov * np.asarray(a if np_fn is np.add else -a, v.dtype), out=v)
                            self._bump()
                            return self
                        if alpha is not None and alpha != 1:
                            ov = ov * np.asarray(alpha, v.dtype)
                        np_fn(v, ov, out=v)
                        self._bump()
                        return self
                elif other.__class__ is float or other.__class__ is int:
                    if scales and v.dtype.kind == "c":
                        a = 1 if alpha is None else alpha
                        np.add(v, np.asarray(other, v.dtype) * np.asarray(a if np_fn is np.add else -a, v.dtype), out=v)
                        self._bump()
                        return self
                    if alpha is not None and alpha != 1:
                        other = other * alpha
                    np_fn(v, np.asarray(other, v.dtype), out=v)
                    self._bump()
                    return self
        if alpha is not None:
            return generic(self, other, alpha=alpha)
        return generic(self, other)
    method.__name__ = name.lower() + "_"
    return method


def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return _div_fast(self, other)
    return _make_inplace(arithmetic.div, "Div")(self, other, rounding_mode=rounding_mode)


_div_fast = _fast_binary_inplace(np.true_divide, arithmetic.div, "Div")


def _check_inf(t) -> None:
    """Refuse an in-place write to an inference tensor outside inference mode (before writing)."""
    if t._inf and not _gs.inference:
        raise RuntimeError(_INF_INPLACE_MSG)


def zero_(self):
    return _fill(self, 0, "Zero")


def fill_(self, value):
    return _fill(self, value, "Fill2")


def _fill(self, value, name):
    """fill_ / zero_ (torch's nodes FillBackward2 for a number, FillBackward3 for a tensor, ZeroBackward0)."""
    v = self._v
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        grads = _req(self) or self._base is not None and self._base._rg
        if value._v is None or _gs.enabled and (_req(value) or grads and (
                D.kind(value._np_dtype()) != "c" or D.kind(self._np_dtype()) == "c")):  # (FillBackward3's value entry)
            return _inplace("Fill3", self, lambda a, s: jnp.broadcast_to(_cast(s, a.dtype), a.shape), (value,),
                            reads_self=False)
        value = value.item()
        if isinstance(value, complex) and D.kind(self._np_dtype()) != "c":  # (a complex tensor's value: the real
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            value = value.real  # part, as torch's copy; a Python complex stays an overflow error)
    if isinstance(value, (int, float, complex, np.number)):  # (c10's checked_convert: torch's overflow errors)
        value = D.checked_scalar(value, self._np_dtype())
    if v is not None and v.flags.writeable and not _DP._fw_on and (not _gs.enabled or (
            not self._rg and (self._base is None or not self._base._rg))):
        _check_inf(self)
        v[...] = value
        self._bump()
        return self
    dt = self._np_dtype()
    return _inplace(name, self, lambda a: jnp.full(a.shape, value, dt), reads_self=False)


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        src = C.tensor(src)
    v = self._v
    if v is not None and src._v is not None and v.flags.writeable and not _DP._fw_on and (not _gs.enabled or (
            not self._rg and not _req(src) and (self._base is None or not self._base._rg))):
        _check_inf(self)
        if src._v.shape != v.shape and not _bc_into(src._v.shape, v.shape):
            _raise_bc(v.shape, src._v.shape)
        np.copyto(v, src._v, casting="unsafe")
        self._bump()
        return self

    dshape, sshape = tuple(self.shape), tuple(src.shape)
    if sshape != dshape and not _bc_into(sshape, dshape):
        if len(sshape) > len(dshape) or _bshape(dshape, sshape) != dshape:
            raise RuntimeError(f"output with shape {list(dshape)} doesn't match the broadcast shape "
                               f"{list(_bshape(dshape, sshape))}")

    def fn(a, s):
        s = ew.convert_element_type(s, a.dtype) if s.dtype != a.dtype else s
        return jnp.broadcast_to(s, a.shape) if s.shape != a.shape else s
    return _inplace("Copy", self, fn, (src,), reads_self=False)


def _raise_bc(dst, src):
    """torch's error for a copy_ source that does not broadcast to the destination: the last dimension (counted in
    the broadcast shape) where the two sizes differ and neither is 1, else the broadcast shape's mismatch."""
    n = max(len(dst), len(src))
    a, b = (1,) * (n - len(dst)) + tuple(dst), (1,) * (n - len(src)) + tuple(src)
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                               f"non-singleton dimension {i}")
    raise RuntimeError(f"output with shape {list(dst)} doesn't match the broadcast shape "
                       f"{[max(x, y) for x, y in zip(a, b)]}")


def _sampler_(name, draw):
    def method(self, *args, generator=None, **kwargs):
        sample = draw(self, generator, *args, **kwargs)
        dt = self._np_dtype()
        arr = Array(np.asarray(sample).astype(dt, copy=False))   # (copied into self's buffer below)
        return _inplace(name, self, lambda a: arr, reads_self=False)
    method.__name__ = name
    return method


def _L(dt) -> str:
    return _legacy(dt)


def _order(self):
    """(shape drawn in, axes back to self's shape): ATen fills a tensor in memory order (TensorIterator sorts
    the dimensions by stride), so a strided view draws in its memory layout and is transposed back."""
    shape = tuple(self.shape)
    if len(shape) < 2 or self.is_contiguous():
        return shape, None
    st = self.stride()
    perm = sorted(range(len(shape)), key=lambda d: -st[d])
    return tuple(shape[d] for d in perm), tuple(np.argsort(perm))


def _laid(self, draw):
    """draw(shape) laid out as self: drawn in self's memory order."""
    shape, back = _order(self)
    v = draw(shape)
    return v if back is None else np.transpose(v, back)


def _draw_uniform(self, gen, a=0.0, b=1.0):
    dt = self._np_dtype()
    if dt.kind not in "fc" and dt.name != "bfloat16":
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{_L(dt)}'")
    a, b = float(a), float(b)
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    eng = C._eng(gen)
    return _laid(self, lambda shape: C.draw_uniform(eng, shape, dt, a, b))


def _draw_normal(self, gen, mean=0.0, std=1.0):
    dt = self._np_dtype()
    if dt.kind not in "fc" and dt.name != "bfloat16":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_L(dt)}'")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    eng = C._eng(gen)
    contiguous = self.is_contiguous()
    return _laid(self, lambda shape: C.draw_normal(eng, shape, dt, float(mean), float(std), contiguous))


def _draw_bernoulli(self, gen, p=0.5):
    eng = C._eng(gen)
    if isinstance(p, Tensor):
        pv = p._host()
        C._check_probs(pv)
        shape, back = _order(self)
        pv = np.broadcast_to(pv, tuple(self.shape))
        if back is not None:
            pv = np.transpose(pv, np.argsort(back))
        v = MT.bernoulli_tensor(eng, np.ascontiguousarray(pv))
        return v if back is None else np.transpose(v, back)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _laid(self, lambda shape: MT.bernoulli_scalar(eng, math.prod(shape), float(p)).reshape(shape))


def _random_to(dt) -> int:
    """random_()'s exclusive upper bound for a dtype: every integer the dtype holds exactly."""
    if dt.kind == "b":
        return 2
    if dt.kind in "iu":
        return int(np.iinfo(dt).max) + 1
    return 2 ** (MT._digits(dt)) + 1


def _draw_random(self, gen, *args, **kwargs):
    """random_(), random_(to), random_(from, to): uniform integers in [from, to); to=None means the dtype's
    largest exactly representable integer, inclusive. The same draws as torch's kernels."""
    dt = self._np_dtype()
    names = ("from", "to") if len(args) != 1 else ("to",)
    bound = dict(zip(names, args))
    bound.update(kwargs)
    eng = C._eng(gen)
    if not bound:
        return _laid(self, lambda shape: MT.random_default(eng, math.prod(shape), dt).reshape(shape))
    low = int(bound.get("from", 0))
    high = bound.get("to", None)
    if high is None and low == -2 ** 63:
        if dt not in (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.float32)) and dt.name != "bfloat16":
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and "
                               "bfloat16")
        return _laid(self, lambda shape: MT.random_full(eng, math.prod(shape), dt).reshape(shape))
    if high is None:
        high = (2 ** MT._digits(dt) if dt.kind == "f" or dt.name == "bfloat16" else 1 if dt.kind == "b" else
                int(np.iinfo(dt).max)) + 1
    high = int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    C._check_int_range(low, high, dt)
    return _laid(self, lambda shape: MT.random_from_to(eng, math.prod(shape), dt, low, high).reshape(shape))


def _draw_exponential(self, gen, lambd=1.0):
    dt = self._np_dtype()
    if dt.kind != "f" and dt.name != "bfloat16":
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_L(dt)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    eng = C._eng(gen)
    return _laid(self, lambda shape: MT.exponential(eng, math.prod(shape), dt, float(lambd)).reshape(shape))


def _draw_log_normal(self, gen, mean=1.0, std=2.0):
    dt = self._np_dtype()
    if dt.kind != "f" and dt.name != "bfloat16":
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{_L(dt)}'")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    eng = C._eng(gen)
    return _laid(self, lambda shape: MT.log_normal(eng, math.prod(shape), dt, float(mean),
                                                   float(std)).reshape(shape))


def _draw_cauchy(self, gen, median=0.0, sigma=1.0):
    dt = self._np_dtype()
    if dt.kind != "f" and dt.name != "bfloat16":
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_L(dt)}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    eng = C._eng(gen)
    return _laid(self, lambda shape: MT.cauchy(eng, math.prod(shape), dt, float(median),
                                               float(sigma)).reshape(shape))


def _draw_geometric(self, gen, p):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    dt = self._np_dtype()
    eng = C._eng(gen)
    # trials up to the first success: P(k) = (1-p)^(k-1) p, k >= 1
    return _laid(self, lambda shape: MT.geometric(eng, math.prod(shape), dt, float(p)).reshape(shape))


# --- conversions ---------------------------------------------------------------------------------------

def _to_dtype(self, dt, copy=False):
    sdt = self._np_dtype()
    if sdt == dt and not copy:
        return self
    if sdt.kind == "c" and dt.kind != "c":  # (torch's copy warns; the imaginary part is dropped)
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
    if self._rg and D.kind(dt) not in "fc":  # (an integer or bool copy has no gradient; bfloat16's kind is "V")
        return _wrap(ew.convert_element_type(self._arr(), dt))
    return _apply1("ToCopy", lambda a: ew.convert_element_type(a, dt), self)


def _parse_to(args, kwargs):
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, (D.dtype, np.dtype)) or a in (float, int, bool, complex):
            if dtype is not None:  # (no overload takes two dtypes)
                raise TypeError("to() received an invalid combination of arguments - got (torch.dtype, torch.dtype)")
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
            device = a.device
        elif isinstance(a, (str, D.device)) or (isinstance(a, int) and not isinstance(a, bool)):
            device = a
        elif isinstance(a, bool):
            pass
        elif a is None:
            pass
        else:
            raise TypeError(f"to() received an invalid combination of arguments: {type(a).__name__}")
    return dtype, device, copy


def to(self, *args, **kwargs):
    """x.to(dtype), x.to(device), x.to(other), x.to(device, dtype, copy=...): only the CPU holds tensors."""
    dtype, device, copy = _parse_to(args, dict(kwargs))
    if device is not None:
        D.check_device(device)
    if dtype is None:
        return views.clone(self) if copy else self
    return _to_dtype(self, D.to_np(dtype), copy)


def cpu(self, memory_format=None):
    return self


def cuda(self, device=None, non_blocking=False, memory_format=None):
    if device is not None:
        d = D.device(device) if not isinstance(device, D.device) else device
        if d.type != "cuda":
            raise RuntimeError("Invalid device, must be cuda device")
    return to(self, "cuda" if device is None else device)


_LEGACY = {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
           "int64": "torch.LongTensor", "int32": "torch.IntTensor", "int16": "torch.ShortTensor",
           "int8": "torch.CharTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor",
           "complex64": "torch.ComplexFloatTensor", "complex128": "torch.ComplexDoubleTensor",
           "bfloat16": "torch.BFloat16Tensor"}
_FROM_LEGACY = {v: k for k, v in _LEGACY.items()}


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """x.type() -> 'torch.FloatTensor'; x.type(torch.DoubleTensor / 'torch.DoubleTensor' / torch.float64) converts."""
    if dtype is None:
        return _LEGACY[self._np_dtype().name]
    if isinstance(dtype, type) and dtype.__name__ in TYPES and TYPES[dtype.__name__] is dtype:
        dtype = dtype.dtype
    elif dtype is Tensor or dtype == "torch.Tensor":
        dtype = D.get_default_dtype()
    elif isinstance(dtype, str):
        if dtype.startswith("torch.cuda.") and dtype[11:] in TYPES and not D._accelerator_type():
            raise RuntimeError("Cannot initialize CUDA: Torch not compiled with CUDA enabled")
        if dtype not in _FROM_LEGACY:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _FROM_LEGACY[dtype]
    return _to_dtype(self, D.to_np(dtype))


def type_as(self, other):
    return _to_dtype(self, other._np_dtype())


def _conv(dt):
    def m(self, memory_format=None):
        return _to_dtype(self, dt.dtype)
    return m


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return C.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return C.zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return C.ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return C.empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return C.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def set_(self, source=None):
    if source is None:
        self._v = np.zeros((0,), self._np_dtype())
        self._a = None
        self._st = None
        return self
    self._v = source._v
    self._a = source._a
    self._st = source._storage() if source._v is not None else None
    return self


def fill_diagonal_(self, fill_value, wrap=False):
    v = self._v
    if v is not None and not (_gs.enabled and self._rg) and not _DP._fw_on:
        np.fill_diagonal(v, fill_value, wrap=wrap)
        self._bump()
        return self
    mask = np.zeros(self.shape, bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return _inplace("FillDiagonal", self, lambda a: ew.select(Array(mask), jnp.full(a.shape, fill_value, a.dtype), a))


# --- methods whose signatures differ from the functions ----------------------------------------------------

def _flip_m(self, *dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    return views.flip(self, dims)


def _tile_m(self, *dims):
    return views.tile(self, views._shape_args(dims))


def _broadcast_to_m(self, *size):
    return views.broadcast_to(self, views._shape_args(size))


def _size_args(f):
    def m(self, *sizes):
        return f(self, *sizes)
    return m


def _T(self):
    """The dimensions reversed: a permute, as torch's (PermuteBackward0, for matrices too); torch's deprecation
    warnings for other ranks."""
    if self.ndim != 2:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
                      if self.ndim == 0 else _T_DEPRECATED, UserWarning, stacklevel=2)
    return views.permute(self, tuple(range(self.ndim - 1, -1, -1)))


_T_DEPRECATED = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                 "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                 "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")


def _mT(self):
    if self.ndim == 0:
        return self
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return views.transpose(self, -2, -1)


def _real(self):
    if self._np_dtype().kind != "c":
        return self
    return _apply1("Select", lambda a: ew.real(a), self)  # (torch's: a select of view_as_real)


def _imag(self):
    if self._np_dtype().kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _apply1("Select", lambda a: ew.imag(a), self)  # (torch's: a select of view_as_real)


def _conj(self):
    if self._np_dtype().kind != "c":
        return self
    return _apply1("Conj", lambda a: ew.conj(a), self)


def _H(self):
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return _conj(self)
    return _conj(views.transpose(self, 0, 1))  # (torch's TransposeBackward0)


def _neg_dunder(self):
    v = self._v
    if v is not None and v.dtype.kind in "fiu":  # (one neg bind: the direct path)
        return _apply_prim1("Neg", ew.neg_p, unary._neg_fn, self)
    return unary.neg(self)


def _invert(self):
    if self._np_dtype() == np.bool_:
        return unary.logical_not(self)
    return unary.bitwise_not(self)


def _swap(f):
    return lambda self, other: f(other, self)


def _matmul_r(self, other):
    return products.matmul(other if isinstance(other, Tensor) else C.tensor(other), self)


_OPERANDS = (Tensor, int, float, bool, complex, np.generic, np.ndarray, list, tuple)
# the operators made by _prim_dunder: name -> (node name, primitive, its Array-level function, dtype kinds)
_PRIM_OPS = {"add": ("Add", arithmetic._ADD_P, arithmetic._bool_add, "fiu"),  # (complex: arithmetic._scaled)
             "sub": ("Sub", arithmetic._SUB_P, arithmetic._sub_fn, "fiu"),
             "mul": ("Mul", arithmetic._MUL_P, arithmetic._bool_mul, "fciu"),
             "truediv": ("Div", arithmetic._DIV_P, arithmetic._div, "fc")}


def _inplace_dunder(dunder_name, name):
    """x op= y: Tensor's in-place method `name` (add_, ...), looked up when called, so it is the one installed."""
    def dunder(self, other):
        return getattr(Tensor, name)(self, other)
    dunder.__name__ = dunder.__qualname__ = dunder_name
    return dunder


def _binary_dunder(f):
    """A binary operator method: f(self, other), or NotImplemented for an operand torch does not take (so
    that Python tries the other operand's reflected method)."""
    def m(self, other):
        if not isinstance(other, _OPERANDS):
            return NotImplemented
        return f(self, other)
    return m


def _rbinary_dunder(f):
    """The reflected method of _binary_dunder(f): f(other, self)."""
    return _binary_dunder(lambda self, other: f(other, self))


def _prim_dunder(f, name, prim, afn, kinds, left=False):
    """The operator of f (torch's add/sub/mul/div; `left`: its reflected form, f(other, self)): on two concrete
    tensors of one dtype of `kinds`, or a float tensor and a Python int or float (taken in the tensor's dtype),
    one bind of prim (afn: its Array-level function) made here, as f's own hot paths do but without their
    frames; any other operands go to f."""
    def m(self, other):
        if other.__class__ is float or other.__class__ is int:
            v = self._v
            if v is not None and v.dtype.kind == "f":
                return _apply_prim_scalar(name, prim, afn, self, other, left)
        elif isinstance(other, Tensor):
            xv = self._v
            yv = other._v
            if not left and xv is not None and yv is not None and yv.dtype is xv.dtype and xv.dtype.kind in kinds:
                if xv.shape != yv.shape:
                    _bshape(xv.shape, yv.shape)  # (torch's error for shapes that do not broadcast)
                return _apply_prim2(name, prim, afn, self, other)
        elif not isinstance(other, _OPERANDS):
            return NotImplemented
        return f(other, self) if left else f(self, other)
    return m


def _sum_m(self, dim=None, keepdim=False, *, dtype=None):
    if dim is None and dtype is None and not keepdim:  # (reductions.sum's direct path, one frame less)
        v = self._v
        if v is not None and v.ndim and v.dtype.kind in "fc":  # (bfloat16's kind is 'V')
            p, bound = reductions._SUM_ALL.get(v.ndim) or reductions.sum_all_params(v.ndim)
            return _apply_prim1("Sum", reductions._REDUCE_SUM_P, reductions._sum_all, self, p, bound)
    return reductions.sum(self, dim, keepdim, dtype=dtype)


def _apply_(self, callable_):
    v = self._v
    flat = v.reshape(-1) if v.flags.c_contiguous else None
    if flat is None:
        out = np.vectorize(callable_, otypes=[v.dtype])(v)
        np.copyto(v, out)
    else:
        for i in range(flat.size):
            flat[i] = callable_(flat[i].item())
    self._bump()
    return self


def _pin_memory(self, device=None):
    """Pinned memory needs an accelerator: torch's error without one."""
    if not D._accelerator_type():
        raise RuntimeError(D._NO_ACCEL)
    return self


def _dim_order(self):
    st = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda i: -st[i]))


def _float_power_(self, exponent):
    """float_power_ computes in double, so (as in torch) only a double tensor can hold its result."""
    cplx = isinstance(exponent, complex) or isinstance(exponent, Tensor) and exponent._np_dtype().kind == "c"
    if self._np_dtype() != (np.complex128 if cplx or self._np_dtype().kind == "c" else np.float64):
        raise RuntimeError(f"the base given to float_power_ has dtype {_legacy(self._np_dtype())} but the "
                           f"operation's result requires dtype {'ComplexDouble' if cplx else 'Double'}")
    return _make_inplace(arithmetic.float_power, "FloatPower")(self, exponent)


# torch's core functions, one module per family (funcgrad/_torch/ops/): each declares METHODS (its functions that
# Tensor has as methods) and INPLACE (those with an in-place `op_` variant). The package exports them at the top
# level as they are (the other families in _methods_ops get torch's argument checks first).
CORE = (unary, arithmetic, comparison, selection, reductions, extrema, sorting, products, diagonals, activations, views,
        join_split, indexing)


def methods() -> dict:
    """This module's Tensor attributes (name -> method, property or value): the core families' methods and their
    in-place variants, operators, conversions, samplers and the rest of the methods written here."""
    m = {}
    for fam in CORE:
        for name in fam.METHODS:
            m[name] = getattr(fam, name)
        for name in fam.INPLACE:
            m[name + "_"] = _make_inplace(getattr(fam, name), _INPLACE_NODES.get(name, name.capitalize()))
    m["sum"] = _sum_m
    m["flip"] = _flip_m
    m["tile"] = _tile_m
    m["broadcast_to"] = _broadcast_to_m
    m["float_power_"] = _float_power_
    m["add_"] = _fast_binary_inplace(np.add, arithmetic.add, "Add", True)
    m["sub_"] = _fast_binary_inplace(np.subtract, arithmetic.sub, "Sub", True)
    m["subtract_"] = m["sub_"]
    m["mul_"] = _fast_binary_inplace(np.multiply, arithmetic.mul, "Mul")
    m["multiply_"] = m["mul_"]
    m["div_"] = _div_
    m["divide_"] = m["true_divide_"] = _div_
    m["zero_"] = zero_
    m["fill_"] = fill_
    m["copy_"] = copy_
    m["set_"] = set_
    m["fill_diagonal_"] = fill_diagonal_
    m["uniform_"] = _sampler_("uniform_", _draw_uniform)
    m["normal_"] = _sampler_("normal_", _draw_normal)
    m["bernoulli_"] = _sampler_("bernoulli_", _draw_bernoulli)
    m["random_"] = _sampler_("random_", _draw_random)
    m["exponential_"] = _sampler_("exponential_", _draw_exponential)
    m["log_normal_"] = _sampler_("log_normal_", _draw_log_normal)
    m["cauchy_"] = _sampler_("cauchy_", _draw_cauchy)
    m["geometric_"] = _sampler_("geometric_", _draw_geometric)
    m["bernoulli"] = lambda self, p=None, *, generator=None: C.bernoulli(self, p, generator=generator)
    m["multinomial"] = lambda self, num_samples, replacement=False, *, generator=None: C.multinomial(
        self, num_samples, replacement, generator=generator)
    m["to"] = to
    m["cpu"] = cpu
    m["cuda"] = cuda
    m["type"] = type_
    m["type_as"] = type_as
    m["float"] = _conv(D.float32)
    m["double"] = _conv(D.float64)
    m["half"] = _conv(D.float16)
    if D.bfloat16 is not None:
        m["bfloat16"] = _conv(D.bfloat16)
    m["long"] = _conv(D.int64)
    m["int"] = _conv(D.int32)
    m["short"] = _conv(D.int16)
    m["char"] = _conv(D.int8)
    m["byte"] = _conv(D.uint8)
    m["bool"] = _conv(D.bool_)
    m["cfloat"] = _conv(D.complex64)
    m["cdouble"] = _conv(D.complex128)
    m["new_tensor"] = new_tensor
    m["new_zeros"] = new_zeros
    m["new_ones"] = new_ones
    m["new_empty"] = new_empty
    m["new_full"] = new_full
    m["T"] = property(_T)
    m["mT"] = property(_mT)
    m["mH"] = property(lambda self: _conj(_mT(self)))
    # x.where(condition, y) is torch.where(condition, x, y)
    m["where"] = lambda self, condition, y: selection.where(condition, self, y)
    m["H"] = property(_H)
    m["real"] = property(_real)
    m["imag"] = property(_imag)
    m["conj"] = _conj
    m["resolve_conj"] = lambda self: self
    m["resolve_neg"] = lambda self: self
    m["apply_"] = _apply_
    m["pin_memory"] = _pin_memory
    m["is_pinned"] = lambda self: False
    m["dim_order"] = _dim_order
    m["__getitem__"] = _index.getitem
    m["__setitem__"] = _index.setitem
    # the operators: x op y, y op x and x op= y (the in-place method, looked up on Tensor when called)
    for op, fn, inplace in (
            ("add", arithmetic.add, "add_"), ("sub", arithmetic.sub, "sub_"), ("mul", arithmetic.mul, "mul_"),
            ("truediv", arithmetic.div, None), ("floordiv", arithmetic.floor_divide, "floor_divide_"),
            ("mod", arithmetic.remainder, "remainder_"), ("pow", arithmetic.pow, "pow_"),
            ("and", comparison.bitwise_and, "bitwise_and_"), ("or", comparison.bitwise_or, "bitwise_or_"),
            ("xor", comparison.bitwise_xor, "bitwise_xor_"), ("lshift", comparison.bitwise_left_shift, None),
            ("rshift", comparison.bitwise_right_shift, None)):
        m[f"__{op}__"], m[f"__r{op}__"] = _binary_dunder(fn), _rbinary_dunder(fn)
        if op in _PRIM_OPS:  # (their common cases made directly)
            name, prim, afn, kinds = _PRIM_OPS[op]
            m[f"__{op}__"] = _prim_dunder(fn, name, prim, afn, kinds)
            m[f"__r{op}__"] = _prim_dunder(fn, name, prim, afn, kinds, left=True)
        if inplace is not None:
            m[f"__i{op}__"] = _inplace_dunder(f"__i{op}__", inplace)
    m["__itruediv__"] = lambda self, other: _div_(self, other)
    m["__rtruediv__"] = _rtruediv(m["__rtruediv__"])
    m["__matmul__"] = products.matmul_dunder(_complex_reject.guard_method("__matmul__", _binary_dunder(
        lambda a, b: products.matmul(a, b if isinstance(b, Tensor) else C.tensor(b)))))
    m["__rmatmul__"] = _matmul_r
    m["__neg__"] = _neg_dunder
    m["__pos__"] = lambda self: self
    m["__abs__"] = lambda self: unary.abs(self)
    m["__invert__"] = _invert
    for op in ("eq", "ne", "lt", "le", "gt", "ge"):
        m[f"__{op}__"] = _binary_dunder(getattr(comparison, op))
    m["__hash__"] = object.__hash__
    # the functional transforms (jit, grad, vmap) see a Tensor as the Array it holds (a tracer inside them)
    m["__funcgrad_array__"] = lambda self: self._a if self._v is None else self._arr()
    return m


def _rtruediv(general):
    """number / tensor as torch's Tensor.__rdiv__: self.reciprocal() * number (two roundings, and its two nodes
    ReciprocalBackward0 and MulBackward0), not one division; other operands take `general`."""
    def rtruediv(self, other):
        if isinstance(other, (int, float, complex)) and not isinstance(other, bool):
            return unary.reciprocal(self) * other
        return general(self, other)
    return rtruediv


def install(*tables: dict) -> None:
    """Give Tensor its methods, once: `tables` (name -> attribute) are this module's, _methods_storage's,
    _methods_ops' and _sparse's, each name declared in one of them; torch's errors for complex (or bool) operands
    without a kernel are added to an entry here, as it is installed (_complex_reject.guard_method)."""
    table: dict = {}
    for t in tables:
        twice = table.keys() & t.keys()
        if twice:
            raise RuntimeError(f"Tensor attributes declared twice: {sorted(twice)}")
        table.update(t)
    seen: set = set()
    for name, value in table.items():
        setattr(Tensor, name, _named(_TORCH_NAMES.get(name, name), _complex_reject.guard_method(name, value), seen))


# the operators whose function torch names after the method it is (Tensor.__pow__ is TensorBase.pow)
_TORCH_NAMES = {"__abs__": "abs", "__neg__": "neg", "__pos__": "positive", "__pow__": "pow", "__ipow__": "pow_",
                "__rtruediv__": "__rdiv__", "__itruediv__": "__idiv__"}


def _named(name: str, value, seen: set):
    """`value` as Tensor's method `name`: a Python function that bears another name (a helper's, a lambda, or an
    alias's such as absolute -> abs) becomes a copy of it named `name`, so that `func.__name__` is torch's in
    `__torch_function__` and an alias is a function of its own (torch's `Tensor.absolute is not Tensor.abs`).
    The copy shares the code object: calling it costs the same."""
    if value.__class__ is not _FunctionType or (value.__name__ == name and id(value) not in seen):
        seen.add(id(value))
        return value
    f = _FunctionType(value.__code__, value.__globals__, name, value.__defaults__, value.__closure__)
    f.__kwdefaults__, f.__doc__, f.__module__ = value.__kwdefaults__, value.__doc__, value.__module__
    f.__dict__.update(value.__dict__)
    f.__qualname__, f.__wrapped__ = f"Tensor.{name}", value  # (the function it copies, as functools.wraps says)
    return f
