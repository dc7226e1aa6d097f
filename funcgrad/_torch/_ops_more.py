"""More torch functions over tensors: pointwise extras (addcmul, sinc, ldexp, ...), scans (cummax,
logcumsumexp), integration (trapezoid), construction helpers (block_diag, vander, combinations, the window
functions), as_strided and small predicates; statistics live in _ops_stats, the *_scatter family in
_ops_scatter (both re-exported here).

Like `_ops`, each op is composed of existing Tensor ops or of Array-level funcgrad operations run through
`_apply*`, so autograd uses the primitives' derivative rules; index bookkeeping is done on the host.
"""
from __future__ import annotations

import builtins
import itertools
import math
import warnings

import numpy as np

from . import _jnp as jnp
from .._src.core.array import Array
from .._src.prims import cumulative as _cum
from .._src.prims import elementwise as ew
from . import _dtype as D
from . import _creation as _C
from . import _ops as O
from ._argcheck import check_same_dtype
from ._tensor import Tensor, _apply, _apply1, _apply_nograd, _dim, _view, _wrap

_int = builtins.int
_float = builtins.float
_bool = builtins.bool
_range = builtins.range

e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None


from . import return_types as _rt  # noqa: E402


def _t(x, dtype=None) -> Tensor:
    return O._as_tensor(x, dtype)


def _legacy(dt) -> str:
    from ._tensor import _legacy as lg
    return lg(dt)


def _host_int(t, name: str) -> np.ndarray:
    v = t._host()
    if v.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected a Long tensor for the indices, but got {_legacy(v.dtype)}")
    return v.astype(np.int64)


def _check_int_value(name, value, *ts):
    if isinstance(value, _float) and all(t._np_dtype().kind in "biu" for t in ts if isinstance(t, Tensor)):
        raise RuntimeError(f"{name}: For integral input tensors, argument value must not be a floating point "
                           "number.")


# --- pointwise ---------------------------------------------------------------------------------------------

def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2 (broadcast, with torch's type promotion)."""
    _check_int_value("addcmul", value, input, tensor1, tensor2)
    p = O.mul(tensor1, tensor2)
    return O._out(O.add(input, p if value == 1 else O.mul(p, value)), out)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2; integer tensor1 and tensor2 are refused, as in torch."""
    if tensor1._np_dtype().kind in "biu" and tensor2._np_dtype().kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    _check_int_value("addcdiv", value, input)
    q = O.div(tensor1, tensor2)
    return O._out(O.add(input, q if value == 1 else O.mul(q, value)), out)


def _beta_alpha(input, prod, beta, alpha):
    r = prod if alpha == 1 else O.mul(prod, alpha)
    if beta == 0:  # input is ignored (NaN in it does not propagate) but still broadcasts and promotes
        return O.add(r, _C.zeros_like(input))
    return O.add(input if beta == 1 else O.mul(input, beta), r)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor")
    if isinstance(input, Tensor):
        check_same_dtype("self and mat2 must have the same dtype, but got {0} and {1}", input, batch2)
    check_same_dtype("mat1 and mat2 must have the same dtype, but got {0} and {1}", batch1, batch2)
    return O._out(_beta_alpha(input, O.bmm(batch1, batch2).sum(0), beta, alpha), out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1
                           else f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return O._out(_beta_alpha(input, O.outer(vec1, vec2), beta, alpha), out)


def angle(input, *, out=None):
    """The argument of complex input; for real input pi where negative, 0 elsewhere (NaN kept)."""
    dt = input._np_dtype()
    if dt.kind == "c":
        return O._out(_apply1("Angle", lambda a: jnp.angle(a), input), out)
    fdt = dt if dt.kind == "f" else D.default_float()

    def fn(a):
        a = O._cast(a, fdt)
        z = jnp.zeros_like(a)
        r = ew.select(ew.lt(a, z), jnp.full(a.shape, math.pi, fdt), z)
        return ew.select(ew.ne(a, a), ew.mul(a, z), r)  # NaN kept, with a zero gradient as in torch
    return O._out(_apply1("Angle", fn, input), out)


def deg2rad(input, *, out=None):
    x = input if input._np_dtype().kind in "fc" else input.to(D.from_np(D.default_float()))
    return O._out(O.mul(x, math.pi / 180.0), out)


def rad2deg(input, *, out=None):
    x = input if input._np_dtype().kind in "fc" else input.to(D.from_np(D.default_float()))
    return O._out(O.mul(x, 180.0 / math.pi), out)


def sinc(input, *, out=None):
    """sin(pi x) / (pi x), 1 at 0 (with derivative 0 there)."""
    # (torch's second derivative at 0 is NaN, from differentiating its 0/0-guarded backward formula; sinc is
    # smooth there, so the Taylor branch's exact -pi^2/3 is kept: a reference's NaN at a smooth point is not
    # a target)
    dt = input._np_dtype()
    fdt = dt if dt.kind in "fc" else D.default_float()

    def fn(a):
        a = O._cast(a, fdt)
        pi = np.asarray(math.pi, fdt if fdt.kind == "f" else np.float64).astype(fdt)
        if fdt.kind == "c":
            zero = ew.eq(a, jnp.zeros_like(a))
            px = ew.select(zero, jnp.ones_like(a), a) * pi
            return ew.select(zero, jnp.ones_like(a), ew.sin(px) / px)
        # near 0 the Taylor series 1 - y/6 + y^2/120 - y^3/5040 (y = (pi x)^2), so that value and gradient
        # keep full precision where sin(px) / px cancels (and is 0/0 at 0)
        small = ew.lt(ew.abs(a), jnp.full_like(a, 1e-3))
        px = ew.select(small, jnp.ones_like(a), a) * pi
        y = ew.select(small, a, jnp.zeros_like(a)) * pi
        y = y * y
        taylor = 1.0 - y * (1.0 / 6.0 - y * (1.0 / 120.0 - y * (1.0 / 5040.0)))
        return ew.select(small, taylor, ew.sin(px) / px)
    return O._out(_apply1("Sinc", fn, input), out)


def ldexp(input, other, *, out=None):
    """input * 2 ** other, as torch: 2.0 ** other in other's float dtype, the product in the result dtype of
    (input, other) (the default float for integers)."""
    o = other if isinstance(other, Tensor) else _t(other)
    dt = O._promote(input, o)
    if dt.kind in "biu":
        dt = D.default_float()
    r = O.mul(input, O.pow(2.0, o))
    return O._out(r if r._np_dtype() == dt else r.to(D.from_np(dt)), out)


def logaddexp2(input, other, *, out=None):
    O._tensor_arg("logaddexp2", other)
    dt = O._promote(input, other)
    if dt.kind in "biu":
        raise NotImplementedError(f"\"logaddexp2_cpu\" not implemented for '{_legacy(dt)}'")
    return O._out(O._binop("Logaddexp20", O._bc(ew.logaddexp2), input, other, O._TRUEDIV), out)


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent (exponent int32, no gradient). The mantissa
    is input * 2^-e, two exact power-of-two scalings (2^-e alone overflows for subnormal input), so its
    derivative is 2^-e, as torch's (which divides by 2^e computed in float32: inf below 2^-149 and 0 from
    2^128 on in float64, where funcgrad's is exact)."""
    dt = input._np_dtype()
    if dt.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    ex = np.frexp(input._host())[1]
    e = -ex.astype(np.int64)
    h = e // 2
    s1, s2 = Array(np.exp2(h).astype(dt)), Array(np.exp2(e - h).astype(dt))
    m = _apply1("Frexp", lambda a: ew.mul(ew.mul(a, s1), s2), input)
    return _rt.frexp(m, _wrap(Array(ex.astype(np.int32))))


def _int_binary(name, np_fn):
    def op(input, other, *, out=None):
        O._tensor_arg(name, other)
        a, b = _t(input), _t(other)
        dt = O._promote(a, b)
        if dt.kind not in "iu":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_legacy(dt)}'")
        O._bshape(tuple(a.shape), tuple(b.shape))
        return O._out(_wrap(Array(np.asarray(np_fn(a._host().astype(dt), b._host().astype(dt))).astype(dt))), out)
    op.__name__ = name
    return op


gcd = _int_binary("gcd", np.gcd)
lcm = _int_binary("lcm", np.lcm)


def heaviside(input, values, *, out=None):
    """0 where input < 0, values where input == 0, 1 where input > 0 (no gradient, as in torch)."""
    O._tensor_arg("heaviside", values)
    if input._np_dtype() != values._np_dtype():
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    if input._np_dtype().kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    x, v = input._host(), values._host()
    O._bshape(x.shape, v.shape)
    return O._out(_wrap(Array(np.asarray(np.where(x == 0, v, x > 0)).astype(x.dtype))), out)


def nextafter(input, other, *, out=None):
    O._tensor_arg("nextafter", other)
    a, b = _t(input), _t(other)
    dt = O._promote(a, b)
    if dt.kind != "f":
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{_legacy(dt)}'")
    a, b = a.to(D.from_np(dt)), b.to(D.from_np(dt))
    O._bshape(tuple(a.shape), tuple(b.shape))
    # torch's derivative: 1 in input, 0 in other (the card's kink="torch")
    return O._out(_apply("Nextafter", O._bc(lambda p, q: ew.nextafter_p.bind(p, q, kink="torch")), (a, b)), out)


def polar(abs, angle, *, out=None):  # noqa: A002 - torch's parameter name
    """abs * (cos(angle) + i sin(angle))."""
    if abs._np_dtype() != angle._np_dtype() or abs._np_dtype() not in (np.float32, np.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_legacy(abs._np_dtype())} and {_legacy(angle._np_dtype())}")
    from ._creation import complex as _complex
    return O._out(_complex(O.mul(abs, O.cos(angle)), O.mul(abs, O.sin(angle))), out)


def real(input):
    return input.real


def imag(input):
    return input.imag


def view_as_real(input):
    """A real view (..., 2) of complex input, sharing its storage."""
    dt = input._np_dtype()
    if dt.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    rdt = np.dtype(np.float32 if dt == np.complex64 else np.float64)

    def np_fn(v):  # the real and imaginary parts as a trailing axis of stride one element
        return np.lib.stride_tricks.as_strided(v.real, v.shape + (2,), v.strides + (rdt.itemsize,),
                                               writeable=v.flags.writeable)
    return _view("ViewAsReal", input, np_fn, lambda a: jnp.stack([ew.real(a), ew.imag(a)], axis=-1))


def view_as_complex(input):
    """A complex view of a float tensor whose last dimension has size 2 (stride 1), sharing its storage."""
    dt = input._np_dtype()
    if dt not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {_legacy(dt)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if input.ndim > 1 and any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    cdt = np.dtype(np.complex64 if dt == np.float32 else np.complex128)

    def np_fn(v):  # each pair reinterpreted as one complex number, at the pair's address
        if v.dtype != dt:  # a traced tensor's layout shadow (one byte per element): the pair's first stands in
            return v[..., 0]
        out = np.ndarray(v.shape[:-1], dtype=cdt, buffer=_root(v), offset=_offset(v, v), strides=v.strides[:-1])
        if not v.flags.writeable:
            out.flags.writeable = False
        return out
    return _view("ViewAsComplex", input, np_fn, lambda a: ew.complex(a[..., 0], a[..., 1]))


def _root(v):
    r = v
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


def _offset(x, v) -> int:
    return x.__array_interface__["data"][0] - _root(v).__array_interface__["data"][0]


def conj_physical(input, *, out=None):
    return O._out(input.conj().clone() if input.is_complex() else input.clone(), out)


def resolve_conj(input):
    return input


def resolve_neg(input):
    return input


def is_conj(input) -> _bool:
    return False


def is_neg(input) -> _bool:
    return False


def is_same_size(input, other) -> _bool:
    return tuple(input.shape) == tuple(other.shape)


def is_inference(input) -> _bool:
    return input.is_inference()


def get_device(input) -> _int:
    return input.get_device()


def fill(input, value):
    """A new tensor of input's shape and dtype filled with value (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.ndim} "
                               "dimensions.")
        return O.add(_C.zeros_like(input), value.to(input.dtype))
    return _full_like(input, value)


def _full_like(input, value):
    from ._creation import full_like
    return full_like(input, value)


def mvlgamma(input, p):
    """The multivariate log-gamma of dimension p, elementwise."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input._np_dtype().kind not in "f":
        raise RuntimeError("mvlgamma: Expected a floating point tensor as input")
    # (torch computes outside the domain x > (p - 1) / 2 too, as lgamma's sum)
    args = O.sub(input.unsqueeze(-1), _wrap(Array(np.arange(p, dtype=input._np_dtype()) / 2)))
    return O.add(O.lgamma(args).sum(-1), p * (p - 1) / 4 * math.log(math.pi))


def renorm(input, p, dim, maxnorm, *, out=None):
    """Each slice input.select(dim, i) whose p-norm exceeds maxnorm is scaled to norm maxnorm."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _dim(dim, input.ndim)
    others = [i for i in _range(input.ndim) if i != d]
    n = O.norm(input, p, dim=others, keepdim=True) if others else O.abs(input)
    scale = O.where(O.gt(n, maxnorm), O.div(maxnorm, O.add(n, 1e-7)), _C.ones_like(n))
    return O._out(O.mul(input, scale), out)


# --- scans --------------------------------------------------------------------------------------------------

def _cum_extreme(name, np_acc):
    rt = getattr(_rt, name)

    def op(input, dim, *, out=None):
        d = _dim(dim, input.ndim)
        if input.ndim == 0:
            return rt(input.clone(), _wrap(Array(np.zeros((), np.int64))))
        v = input._host()
        run = np_acc.accumulate(v, axis=d)
        with np.errstate(invalid="ignore"):
            hit = (v == run)
        if v.dtype.kind in "fc":
            hit |= np.isnan(v)
        shape = [1] * v.ndim
        shape[d] = v.shape[d]
        pos = np.where(hit, np.arange(v.shape[d]).reshape(shape), 0)
        idx = np.maximum.accumulate(pos, axis=d).astype(np.int64)
        it = _wrap(Array(idx))
        return rt(O.gather(input, d, it), it)
    op.__name__ = name
    return op


cummax = _cum_extreme("cummax", np.maximum)
cummin = _cum_extreme("cummin", np.minimum)


def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along dim, computed stably."""
    dt = input._np_dtype()
    if dt.kind not in "fc":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_legacy(dt)}'")
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        return O._out(input.clone(), out)
    return O._out(_apply1("Logcumsumexp", lambda a: _cum.cumlogsumexp(a, axis=d), input), out)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (after prepending/appending); bool input uses xor."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _dim(dim, input.ndim)
    parts = [t if t.ndim else t.expand(*input.shape[:d], 1, *input.shape[d + 1:]) for t in (prepend,)
             if t is not None] + [input] + [t if t.ndim else t.expand(*input.shape[:d], 1, *input.shape[d + 1:])
                                            for t in (append,) if t is not None]
    x = O.cat(parts, d) if len(parts) > 1 else input
    for _ in _range(n):
        L = x.shape[d]
        if L == 0:
            break
        hi, lo = O.narrow(x, d, 1, L - 1), O.narrow(x, d, 0, L - 1)
        x = O.logical_xor(hi, lo) if x._np_dtype() == np.bool_ else O.sub(hi, lo)
    return x


# --- construction helpers ------------------------------------------------------------------------------

def diagflat(input, offset=0):
    return O.diag(input.reshape(-1), offset)


def block_diag(*tensors):
    """The block-diagonal matrix with the given blocks (0-d -> 1x1, 1-d -> a row)."""
    mats = [t.reshape(1, 1) if t.ndim == 0 else (t.reshape(1, -1) if t.ndim == 1 else t) for t in tensors]
    for i, m in enumerate(mats):
        if m.ndim != 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{tensors[i].ndim} dimensions")
    if not mats:
        return _wrap(Array(np.zeros((1, 0), D.default_float())))
    dt = O._result_type_many(mats)
    W = sum(m.shape[1] for m in mats)
    rows, col = [], 0
    from ._creation import zeros
    for m in mats:
        r, c = m.shape
        parts = [zeros(r, col, dtype=D.from_np(dt)), m.to(D.from_np(dt)), zeros(r, W - col - c, dtype=D.from_np(dt))]
        rows.append(O.cat(parts, 1))
        col += c
    return O.cat(rows, 0)


def vander(x, N=None, increasing=False):
    """Columns x**0 .. x**(N-1) (reversed unless increasing), built by a running product."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dt = x._np_dtype()
    odt = np.dtype(np.int64) if dt.kind in "biu" else dt
    xx = x.to(D.from_np(odt))
    if n == 0:
        from ._creation import empty
        return empty(x.shape[0], 0, dtype=D.from_np(odt))
    from ._creation import ones
    cols = O.cat([ones(x.shape[0], 1, dtype=D.from_np(odt)), xx.unsqueeze(1).expand(x.shape[0], n - 1)], 1)
    r = O.cumprod(cols, 1)
    return r if increasing else O.flip(r, (1,))


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-D tensor's elements, as rows."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(Array(np.zeros((0,), input._np_dtype())))
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(gen(_range(input.shape[0]), r)), np.int64).reshape(-1, r)
    if idx.size == 0:
        return _wrap(Array(np.zeros((0, r), input._np_dtype())))
    return O.index_select(input, 0, _wrap(Array(idx.reshape(-1)))).reshape(-1, r)


def unravel_index(indices, shape):
    """The coordinate tensors of flat indices into shape (int64)."""
    if not isinstance(indices, Tensor):
        indices = _t(indices)
    if indices._np_dtype().kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, _int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(tuple(shape)))
    v = indices._host().astype(np.int64)
    n = int(np.prod(shape))
    if np.any((v < -n) | (v >= n)):
        raise ValueError("'indices' must be in range [-" + str(n) + ", " + str(n - 1) + "]")
    v = np.where(v < 0, v + n, v)
    return tuple(_wrap(Array(np.asarray(c, np.int64))) for c in np.unravel_index(v, shape)) if shape else ()


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in `test_elements` (either may be a scalar)."""
    a = elements._host() if isinstance(elements, Tensor) else np.asarray(elements)
    b = test_elements._host() if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return _wrap(Array(np.asarray(np.isin(a, b, invert=invert))))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero with a fixed number of rows: truncated, or padded with fill_value."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size} instead.")
    nz = O.nonzero(input)._host()
    out = np.full((size, input.ndim), fill_value, np.int64)
    k = min(size, nz.shape[0])
    out[:k] = nz[:k]
    return _wrap(Array(out))


def split_with_sizes(input, split_sizes, dim=0):
    return O.split(input, list(split_sizes), dim)


def _hvd_split(name, axis_for, min_dim):
    def op(input, indices_or_sections):
        if input.ndim < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                               f"with {input.ndim} dimensions!")
        d = axis_for(input)
        if isinstance(indices_or_sections, _int):
            n = input.shape[d]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size of the "
                                   f"dimension {n} is not divisible by the split_size {indices_or_sections}!")
        return O.tensor_split(input, indices_or_sections, d)
    op.__name__ = name
    return op


hsplit = _hvd_split("hsplit", lambda t: 0 if t.ndim == 1 else 1, 1)
vsplit = _hvd_split("vsplit", lambda t: 0, 2)
dsplit = _hvd_split("dsplit", lambda t: 2, 3)


# --- integration --------------------------------------------------------------------------------------------

def _trap_parts(y, x, dx, dim):
    d = _dim(dim, y.ndim)
    n = y.shape[d]
    avg = O.mul(O.add(O.narrow(y, d, 1, n - 1), O.narrow(y, d, 0, n - 1)), 0.5) if n else None
    if x is None:
        return d, n, avg, dx
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"trapezoid: There must be one `x` value for each sample point")
        dxs = diff(x)
        shape = [1] * y.ndim
        shape[d] = n - 1
        return d, n, avg, dxs.reshape(shape)
    dxs = diff(x, dim=d if x.ndim == y.ndim else dim)
    return d, n, avg, dxs


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal-rule integral of y along dim (samples at x, or spaced dx apart; default 1)."""
    if isinstance(x, (_int, _float)):
        x, dx = None, x
    d, n, avg, w = _trap_parts(y, x, 1 if dx is None else dx, dim)
    if n == 0:
        return O.sum(y, d)
    return O.sum(O.mul(avg, w), d)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal-rule integral of y along dim (one element shorter)."""
    if isinstance(x, (_int, _float)):
        x, dx = None, x
    d, n, avg, w = _trap_parts(y, x, 1 if dx is None else dx, dim)
    if n == 0:
        return y.clone()
    return O.cumsum(O.mul(avg, w), d)


# --- window functions ----------------------------------------------------------------------------------------

def _window(name, window_length, periodic, dtype, requires_grad, fn):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    dt = D.default_float() if dtype is None else D.to_np(dtype)
    if dt.kind != "f" and not (D.bfloat16 is not None and dt == D.to_np(D.bfloat16)):
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={D.from_np(dt)})")
    if window_length == 0:
        w = np.zeros((0,), np.float64)
    elif window_length == 1:
        w = np.ones((1,), np.float64)
    else:
        N = window_length + 1 if periodic else window_length
        w = fn(np.arange(N, dtype=np.float64), N)[:window_length]
    t = _wrap(Array(w.astype(dt)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * math.pi * n / (N - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * math.pi * n / (N - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * math.pi * n / (N - 1)) + 0.08 * np.cos(4 * math.pi * n / (N - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (N - 1) - 1) ** 2, 0, None))) / np.i0(beta))


# --- misc ------------------------------------------------------------------------------------------------------

def as_strided(input, size, stride, storage_offset=None):
    """A view with the given sizes and strides (in elements) over input's storage."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    v = input._v
    if v is None:  # a traced tensor (inside funcgrad.func transforms): read as a contiguous buffer
        off = 0 if storage_offset is None else int(storage_offset)
        want = off + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - k)) * st
                         for k, (n, st) in enumerate(zip(size, stride))) if size else np.array(off)
        flat = np.asarray(want, np.int64).reshape(-1)
        if flat.size and flat.max() >= input.numel():
            raise RuntimeError(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage offset {off} "
                               f"reach past the {input.numel()} elements of the input")
        return _apply1("AsStrided", lambda a: jnp.ravel(a)[flat].reshape(size), input)
    off = input.storage_offset() if storage_offset is None else int(storage_offset)
    buf = input._storage().buf.reshape(-1)
    need = off + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0
    if need > buf.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
                           f"itemsize {buf.itemsize} requiring a storage size of {need * buf.itemsize} are out of "
                           f"bounds for storage of size {buf.size * buf.itemsize}")
    # where each of input's elements lives in the storage, so the view can be read off input's value
    base_off = input.storage_offset()
    loc = base_off + sum(np.arange(n).reshape((-1,) + (1,) * (input.ndim - 1 - k)) * s
                         for k, (n, s) in enumerate(zip(input.shape, input.stride()))) if input.ndim else \
        np.array(base_off)
    inv = {int(p): i for i, p in enumerate(np.asarray(loc).reshape(-1))}
    want = off + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - k)) * s
                     for k, (n, s) in enumerate(zip(size, stride))) if size else np.array(off)
    try:
        take = np.array([inv[int(p)] for p in np.asarray(want).reshape(-1)], np.int64).reshape(size)
    except KeyError:
        take = None

    def arr_fn(a):
        if take is None:
            raise RuntimeError("as_strided: the view reaches storage outside the input tensor")
        return jnp.ravel(a)[take.reshape(-1)].reshape(size) if take.size else jnp.zeros(size, a.dtype)

    def np_fn(_):
        return np.lib.stride_tricks.as_strided(buf[off:], size, tuple(s * buf.itemsize for s in stride),
                                               writeable=buf.flags.writeable)
    return _view("AsStrided", input, np_fn, arr_fn)


def chain_matmul(*matrices, out=None):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    from ._linalg_more import multi_dot_dtypes
    multi_dot_dtypes(matrices)
    r = matrices[0]
    for m in matrices[1:]:
        r = O.mm(r, m)
    return r if len(matrices) > 1 else r.clone()


def frobenius_norm(input, dim=(-2, -1), keepdim=False, *, out=None):
    return O.norm(input, "fro", dim=list(dim) if isinstance(dim, (tuple, list)) else dim, keepdim=keepdim)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    from . import linalg as LA
    if isinstance(dim, _bool):
        dim, keepdim = None, dim
    return LA.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


def typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a float32 tensor, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    q = type(obj).__qualname__
    return q if module in ("", "builtins") else f"{module}.{q}"


_WARN_ALWAYS = [False]


def set_warn_always(b: _bool) -> None:
    _WARN_ALWAYS[0] = _bool(b)


def is_warn_always_enabled() -> _bool:
    return _WARN_ALWAYS[0]


def is_anomaly_enabled() -> _bool:
    from ..autograd.grad_mode import state
    return _bool(state.anomaly)


def is_anomaly_check_nan_enabled() -> _bool:
    from ..autograd.grad_mode import state
    return _bool(state.anomaly_check_nan)


def set_anomaly_enabled(enabled: _bool, check_nan: _bool = True) -> None:
    from ..autograd.grad_mode import state
    state.anomaly = _bool(enabled)
    state.anomaly_check_nan = _bool(check_nan)


__all__ = [
    "e", "pi", "inf", "nan", "newaxis", "addcmul", "addcdiv", "addbmm", "addr", "angle", "deg2rad", "rad2deg",
    "sinc", "ldexp", "logaddexp2", "frexp", "gcd", "lcm", "heaviside", "nextafter", "polar", "real", "imag",
    "view_as_real", "view_as_complex", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg",
    "is_same_size", "is_inference", "get_device", "fill", "mvlgamma", "renorm", "cummax", "cummin",
    "logcumsumexp", "diff", "cov", "corrcoef", "quantile", "nanquantile", "nanmedian", "histogram", "diagflat",
    "block_diag", "vander", "combinations", "unravel_index", "isin", "nonzero_static", "split_with_sizes",
    "hsplit", "vsplit", "dsplit", "trapezoid", "trapz", "cumulative_trapezoid", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", "diagonal_scatter", "select_scatter", "slice_scatter",
    "as_strided_scatter", "put", "masked_scatter", "index_reduce", "as_strided", "chain_matmul", "frobenius_norm",
    "nuclear_norm", "typename", "set_warn_always", "is_warn_always_enabled", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
]


from ._ops_scatter import *  # noqa: E402,F401,F403  (split out; re-exported for the method table)
from ._ops_stats import *  # noqa: E402,F401,F403
