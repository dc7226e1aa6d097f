"""Scans, differences and integration along a dimension: cummax / cummin, logcumsumexp, diff, gradient
(numpy.gradient's finite differences), trapezoid / trapz and cumulative_trapezoid."""
from __future__ import annotations

import builtins

import numpy as np

from ..._src.core.array import Array
from ..._src.prims import cumulative as _cum
from .. import _dtype as D, _jnp as jnp
from . import arithmetic, comparison, indexing, join_split, reductions
from ._common import _out, _with_out
from .. import return_types as _rt
from .._tensor import Tensor, _dim, _wrap
from .._dispatch import _apply1
from .._errors import _legacy

_int = builtins.int
_float = builtins.float
_range = builtins.range


def _cum_extreme(name, np_acc):
    """cummax / cummin: the indices found on the host (the last position of each running extreme; NaN
    propagates), the values one node named as torch's (CummaxBackward0 / CumminBackward0) gathering input at
    them, whose backward is gather's rule (torch's scatter-add of the gradient at the indices)."""
    rt = getattr(_rt, name)
    node = name.capitalize()

    def op(input, dim, *, out=None):
        d = _dim(dim, input.ndim)
        if input.ndim == 0 or not input.numel():  # (the values are input's own)
            return rt(_apply1(node, _same, input), _wrap(Array(np.zeros(input.shape, np.int64))))
        v = input._host()
        run = np_acc.accumulate(v, axis=d)
        with np.errstate(invalid="ignore"):
            hit = (v == run)
        if D.kind(v.dtype) in "fc":
            hit |= np.isnan(v)
        shape = [1] * v.ndim
        shape[d] = v.shape[d]
        pos = np.where(hit, np.arange(v.shape[d]).reshape(shape), 0)
        idx = np.maximum.accumulate(pos, axis=d).astype(np.int64)
        it = _wrap(Array(idx))
        if input._v is None:  # (a traced tensor)
            return rt(indexing.gather(input, d, it), it)
        return rt(indexing._gather_along(node, input, idx, d), it)
    op.__name__ = op.__qualname__ = name
    return op


def _same(a):
    return a


cummax = _with_out()(_cum_extreme("cummax", np.maximum))
cummin = _with_out()(_cum_extreme("cummin", np.minimum))


def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along dim, computed stably."""
    dt = input._np_dtype()
    if D.kind(dt) not in "fc":
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{_legacy(dt)}'")
    d = _dim(dim, input.ndim)
    if input.ndim == 0:
        return _out(input.clone(), out)
    if D.kind(dt) == "c":
        return _out(_apply1("Logcumsumexp", lambda a: _complex_logcumsumexp(a, d), input), out)
    return _out(_apply1("Logcumsumexp", lambda a: _cum.cumlogsumexp(a, axis=d), input), out)


def _complex_log_add_exp(x, y):
    """torch's complex log(exp(x) + exp(y)) (LogAddExp.h): NaN in either part of either operand is NaN + NaN j;
    with mn/mx the operands of the smaller/larger real part, equal infinite real parts give mn (-inf) or
    log(exp(mn) + exp(mx)) (+inf), and otherwise log1p(exp(mn - mx)) + mx. Unselected branches get safe
    arguments, so no NaN reaches a derivative through them."""
    xr, yr = jnp.real(x), jnp.real(y)
    nan = jnp.isnan(x) | jnp.isnan(y)
    first = xr < yr
    mn, mx = jnp.where(first, x, y), jnp.where(first, y, x)
    mnr, mxr = jnp.real(mn), jnp.real(mx)
    inf = ~jnp.isfinite(mnr) & (mnr == mxr)
    pos = inf & (mnr > 0)
    zero = jnp.zeros_like(mn)
    general = jnp.log1p(jnp.exp(jnp.where(inf | nan, zero, mn - mx))) + mx
    both_inf = jnp.log(jnp.exp(jnp.where(pos, mn, zero)) + jnp.exp(jnp.where(pos, mx, zero)))
    r = jnp.where(inf, jnp.where(pos, both_inf, mn), general)
    return jnp.where(nan, jnp.full_like(r, complex(np.nan, np.nan)), r)


def _complex_logcumsumexp(a, d):
    """torch's sequential complex scan from -inf + 0j, accumulated in complex128 (its CPU acc_type)."""
    if a.shape[d] == 0:
        return a
    acc = jnp.moveaxis(a.astype(np.complex128), d, 0)
    cum = jnp.full(acc.shape[1:], complex(-np.inf, 0.0), np.complex128)
    outs = []
    for i in _range(acc.shape[0]):
        cum = _complex_log_add_exp(acc[i], cum)
        outs.append(cum)
    return jnp.moveaxis(jnp.stack(outs), 0, d).astype(a.dtype)


@_with_out()
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (after prepending/appending); bool input uses xor."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _dim(dim, input.ndim)
    parts = [t if t.ndim else t.expand(*input.shape[:d], 1, *input.shape[d + 1:]) for t in (prepend,)
             if t is not None] + [input] + [t if t.ndim else t.expand(*input.shape[:d], 1, *input.shape[d + 1:])
                                            for t in (append,) if t is not None]
    x = join_split.cat(parts, d) if len(parts) > 1 else input
    for _ in _range(n):
        L = x.shape[d]
        if L == 0:
            break
        hi, lo = join_split.narrow(x, d, 1, L - 1), join_split.narrow(x, d, 0, L - 1)
        x = comparison.logical_xor(hi, lo) if x._np_dtype() == np.bool_ else arithmetic.sub(hi, lo)
    return x


def _trap_parts(y, x, dx, dim):
    d = _dim(dim, y.ndim)
    n = y.shape[d]
    avg = arithmetic.mul(arithmetic.add(join_split.narrow(y, d, 1, n - 1), join_split.narrow(y, d, 0, n - 1)), 0.5) if n else None
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
    if x is None and y._v is not None and y._v.dtype.kind in "fc" and y._v.dtype.itemsize >= 4 and y.ndim and \
            y.shape[_dim(dim, y.ndim)] and type(1 if dx is None else dx) in (_int, _float):
        # torch's kernel for a spacing dx: (sum - (first + last) / 2) * dx, one node (its last op's,
        # MulBackward1)
        d, h = _dim(dim, y.ndim), 1 if dx is None else dx

        def fn(a):
            ends = jnp.take(a, 0, axis=d) + jnp.take(a, -1, axis=d)
            return (jnp.sum(a, axis=d) - ends * 0.5) * h
        return _apply1("Mul1", fn, y)
    d, n, avg, w = _trap_parts(y, x, 1 if dx is None else dx, dim)
    if n == 0:
        return reductions.sum(y, d)
    return reductions.sum(arithmetic.mul(avg, w), d)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal-rule integral of y along dim (one element shorter)."""
    if isinstance(x, (_int, _float)):
        x, dx = None, x
    d, n, avg, w = _trap_parts(y, x, 1 if dx is None else dx, dim)
    if n == 0:
        return y.clone()
    return reductions.cumsum(arithmetic.mul(avg, w), d)


def _one_gradient(f, d, h, coords, edge_order):
    n = f.shape[d]
    if n < edge_order + 1:
        raise RuntimeError(f"torch.gradient expected each dimension size to be at least edge_order+1")

    def sl(a, b):
        return join_split.narrow(f, d, a, b - a)

    if coords is None:  # uniform spacing h
        inner = arithmetic.div(arithmetic.sub(sl(2, n), sl(0, n - 2)), 2 * h)
        if edge_order == 1:
            first = arithmetic.div(arithmetic.sub(sl(1, 2), sl(0, 1)), h)
            last = arithmetic.div(arithmetic.sub(sl(n - 1, n), sl(n - 2, n - 1)), h)
        else:
            first = arithmetic.div(arithmetic.add(arithmetic.add(arithmetic.mul(sl(0, 1), -1.5), arithmetic.mul(sl(1, 2), 2.0)), arithmetic.mul(sl(2, 3), -0.5)), h)
            last = arithmetic.div(arithmetic.add(arithmetic.add(arithmetic.mul(sl(n - 3, n - 2), 0.5), arithmetic.mul(sl(n - 2, n - 1), -2.0)),
                               arithmetic.mul(sl(n - 1, n), 1.5)), h)
        return join_split.cat([first, inner, last], d)
    if tuple(coords.shape) != (n,):
        raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, and the coordinates of "
                           f"dim {d} to have size {n}, got {list(coords.shape)}")
    c = coords if D.kind(coords._np_dtype()) == "f" else coords.to(f.dtype)
    dx = arithmetic.sub(join_split.narrow(c, 0, 1, n - 1), join_split.narrow(c, 0, 0, n - 1))  # differentiable in the coordinates too
    shape = [1] * f.ndim
    shape[d] = -1

    def col(t):
        return t.reshape(shape)
    hl, hr = join_split.narrow(dx, 0, 0, n - 2), join_split.narrow(dx, 0, 1, n - 2)
    a = -hr / (hl * (hl + hr))
    b = (hr - hl) / (hl * hr)
    cc = hl / (hr * (hl + hr))
    inner = sl(0, n - 2) * col(a) + sl(1, n - 1) * col(b) + sl(2, n) * col(cc)
    if edge_order == 1:
        first = (sl(1, 2) - sl(0, 1)) / col(dx[:1])
        last = (sl(n - 1, n) - sl(n - 2, n - 1)) / col(dx[-1:])
    else:
        h1, h2 = dx[:1], dx[1:2]
        first = sl(0, 1) * col(-(2 * h1 + h2) / (h1 * (h1 + h2))) + sl(1, 2) * col((h1 + h2) / (h1 * h2)) + \
            sl(2, 3) * col(-h1 / (h2 * (h1 + h2)))
        h1, h2 = dx[-2:-1], dx[-1:]
        last = sl(n - 3, n - 2) * col(h2 / (h1 * (h1 + h2))) + sl(n - 2, n - 1) * col(-(h2 + h1) / (h1 * h2)) + \
            sl(n - 1, n) * col((2 * h2 + h1) / (h2 * (h1 + h2)))
    return join_split.cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of input estimated by second-order central differences inside and first- or
    second-order one-sided differences at the edges, along each of dim (all dims by default). spacing: one
    number for every dim, one number per dim, or one coordinate tensor per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError(f"torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(dim, _int):
        dims = [_dim(dim, input.ndim)]
    elif dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [_dim(d, input.ndim) for d in dim]
    if isinstance(spacing, (_int, _float)):
        sp = [spacing] * len(dims)
    elif isinstance(spacing, Tensor) and spacing.ndim == 0:
        sp = [spacing.item()] * len(dims)
    else:
        sp = list(spacing)
        if len(sp) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                               f"dim arguments to have the same length, but got a spacing argument of length "
                               f"{len(sp)} and a dim argument of length {len(dims)}.")
    f = input if D.kind(input._np_dtype()) in "fc" else input.to(D.from_np(D.default_float()))
    out = []
    for d, s in zip(dims, sp):
        if isinstance(s, Tensor) and s.ndim == 1:
            out.append(_one_gradient(f, d, None, s, edge_order))
        else:
            out.append(_one_gradient(f, d, _float(s.item() if isinstance(s, Tensor) else s), None, edge_order))
    return tuple(out)



# Tensor methods of the same name (x.op(...)), and the ops among them with an in-place variant (x.op_(...));
# installed by _methods_ops
METHODS = ("cummax", "cummin", "diff", "logcumsumexp")
INPLACE = ()

__all__ = ["cummax", "cummin", "logcumsumexp", "diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]
