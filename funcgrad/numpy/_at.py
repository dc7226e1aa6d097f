"""Functional updates: `x.at[idx].set(v)`, `.add`, `.mul`/`.multiply`, `.min`, `.max`, `.divide`,
`.power` and `.get()`, as in JAX.

    y = x.at[0, 1:].set(5.0)           # NumPy's  y = x.copy(); y[0, 1:] = 5.0
    y = x.at[[0, 0, 2]].add(1.0)       # NumPy's  y = x.copy(); np.add.at(y, [0, 0, 2], 1.0)

`idx` is any NumPy index (ints, slices with any step, None, Ellipsis, integer arrays, concrete boolean
masks). The values broadcast to the shape of x[idx] and are cast to x's dtype. Repeated positions
accumulate for add/mul/min/max; for set the last write wins. Out-of-bounds indices are dropped
(mode=None, "drop", "fill" or "promise_in_bounds") or clamped into range (mode="clip"). `.get()` is
x[idx], or with mode="clip" clamps and with mode="fill" returns `fill_value` (NaN for floats) at
out-of-bounds positions.

The update is one scatter: the index is turned into the integer coordinates of every position of
x[idx] (trailing whole axes excepted, which scatter carries along), and the values are scattered there.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase
from .._src.core.errors import user_location
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.prims.indexing import gather, scatter
from ._advanced_indexing import parse_index, stack_columns
from ._indexing import _expand_index
from ._promote import asarray_any, broadcast_to
from ._sorting import _default_fill
from ._ufuncs import power, true_divide

_MODES = (None, "drop", "fill", "clip", "promise_in_bounds")


def _check_mode(mode) -> str:
    mode = getattr(mode, "name", mode)  # accept enum-like values by name
    if isinstance(mode, str):
        mode = mode.lower()
        mode = {"fill_or_drop": "fill"}.get(mode, mode)
    if mode not in _MODES:
        raise ValueError(f"x.at[...]: mode must be one of {_MODES}, got {mode!r}")
    return mode


class _Grid:
    """The integer coordinates of the positions x[idx] addresses.

    indices: int64 array R' + (m,) giving coordinates along axes 0..m-1 of x; axes m.. (whole axes at
    the end of the index) are carried along, so x[idx] has shape R' + x.shape[m:] = `shape`."""

    def __init__(self, x, idx, policy: str):
        p = parse_index(x.shape, _expand_index(idx, x.ndim), policy)
        layout = p.layout()
        self.shape = p.result_shape()
        t = 0  # trailing whole axes of x, untouched by the index, left to scatter's rest axes
        for e in reversed(p.entries):
            if e.kind != "slice" or not e.is_full(x.shape[e.dim]):
                break
            t += 1
        m = x.ndim - t
        grid_shape = self.shape[:len(self.shape) - t]
        b_axes = tuple(q for q, (k, _) in enumerate(layout) if k == "b")
        cols = [None] * m
        for q, (kind, e) in enumerate(layout[:len(grid_shape)]):
            if kind == "slice":
                vals = (e.start + e.step * np.arange(e.size, dtype=np.int64)).reshape(
                    [e.size if r == q else 1 for r in range(len(grid_shape))])
                cols[e.dim] = np.broadcast_to(vals, grid_shape)
        for e in p.entries:
            if e.kind == "adv" and e.dim is not None and e.dim < m:
                cols[e.dim] = _place(p.advs[e.adv], p.bshape, grid_shape, b_axes)
        self.indices = stack_columns(cols, grid_shape)
        self.m = m
        self.axes = tuple(range(m))

    def in_bounds(self, x):
        """Bool array `shape`: whether each addressed position lies inside x."""
        idx = self.indices
        ok = None
        for j in range(self.m):
            col = sh.reshape(sh.slice(idx, (0,) * (idx.ndim - 1) + (j,), tuple(idx.shape[:-1]) + (j + 1,)),
                             idx.shape[:-1])
            zero = sh.full(col.shape, 0, col.dtype)
            inside = ew.select(ew.ge(col, zero), ew.lt(col, sh.full(col.shape, x.shape[j], col.dtype)),
                               ew.ge(col, zero))
            ok = inside if ok is None else ew.select(ok, inside, ok)
        if ok is None:
            return sh.full(self.shape, True, dtypes.bool_)
        return sh.broadcast_in_dim(ok, self.shape, tuple(range(ok.ndim)))


def _place(a, bshape, grid_shape, b_axes):
    """Advanced index `a` (broadcastable to bshape) laid out along axes b_axes of grid_shape."""
    if isinstance(a, np.ndarray):
        a = np.broadcast_to(a, bshape)
        expanded = [1] * len(grid_shape)
        for q, s in zip(b_axes, bshape):
            expanded[q] = s
        return np.broadcast_to(a.reshape(expanded), grid_shape)
    return sh.broadcast_in_dim(broadcast_to(a, tuple(bshape)), tuple(grid_shape), b_axes)


def _updates(x, values, shape):
    """values cast to x's dtype and broadcast to `shape` (NumPy assignment rules: extra leading
    length-1 axes are dropped)."""
    v = asarray_any(values)
    v = ew.convert_element_type(v, x.dtype, x.weak_type)
    extra = v.ndim - len(shape)
    if extra > 0:
        if any(s != 1 for s in v.shape[:extra]):
            raise ValueError(f"x.at[...]: cannot broadcast values of shape {tuple(v.shape)} to the indexed "
                             f"shape {tuple(shape)} (at {user_location(3)})")
        v = sh.reshape(v, v.shape[extra:])
    for a, b in zip(v.shape[::-1], tuple(shape)[::-1]):
        if a != 1 and a != b:
            raise ValueError(f"x.at[...]: cannot broadcast values of shape {tuple(v.shape)} to the indexed "
                             f"shape {tuple(shape)} (at {user_location(3)})")
    if tuple(v.shape) != tuple(shape):
        v = sh.broadcast_in_dim(v, tuple(shape), tuple(range(len(shape) - v.ndim, len(shape))))
    return v


class _IndexUpdateRef:
    """x.at[idx]: call one of its methods to get the updated array (x itself is never changed)."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _scatter(self, values, how: str, mode):
        mode = _check_mode(mode)
        x = self.array
        grid = _Grid(x, self.index, "clip" if mode == "clip" else "wrap")
        return scatter(x, grid.indices, _updates(x, values, grid.shape), grid.axes, how)

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """x[idx]; mode="clip" clamps out-of-bounds indices, mode="fill" reads fill_value there."""
        mode = _check_mode(mode)
        x = self.array
        if mode is None:
            return x[self.index]
        grid = _Grid(x, self.index, "wrap" if mode in ("fill", "drop") else "clip")
        out = gather(x, grid.indices, grid.axes)
        if mode in ("fill", "drop"):
            fill = _default_fill(x.dtype) if fill_value is None else fill_value
            out = ew.select(grid.in_bounds(x), out, sh.full(out.shape, fill, out.dtype))
        return out

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] replaced by values (NumPy's x[idx] = values, without mutating x)."""
        return self._scatter(values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with values added at idx; repeated indices accumulate (NumPy's np.add.at)."""
        return self._scatter(values, "add", mode)

    def mul(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] multiplied by values; repeated indices accumulate (np.multiply.at)."""
        return self._scatter(values, "mul", mode)

    multiply = mul

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] replaced by minimum(x[idx], values) (np.minimum.at)."""
        return self._scatter(values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] replaced by maximum(x[idx], values) (np.maximum.at)."""
        return self._scatter(values, "max", mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] divided by values."""
        ones = sh.full(self.array.shape, 1, self.array.dtype)
        return true_divide(self.array, _IndexUpdateRef(ones, self.index)._scatter(values, "mul", mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] raised to the power values."""
        ones = sh.full(self.array.shape, 1, self.array.dtype)
        return power(self.array, _IndexUpdateRef(ones, self.index)._scatter(values, "mul", mode))

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x with x[idx] replaced by func(x[idx]) (a unary elementwise function; an index given more
        than once gets func applied once)."""
        mode = _check_mode(mode)
        return self.set(func(self.get(mode="clip" if mode in (None, "promise_in_bounds") else mode)), mode=mode)


class _IndexUpdateHelper:
    """The `x.at` property: index it (`x.at[idx]`) to choose positions for a functional update."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


_AT_DOC = """Functional updates: x.at[idx].set(v), .add(v), .multiply(v), .min(v), .max(v), .get(), ...

    Each returns a new array (x is unchanged); repeated indices accumulate for add/multiply/min/max.
    See the funcgrad.numpy._at module docstring for indices, modes and out-of-bounds handling.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> x = jnp.zeros(4)
        >>> x.at[1].set(5.)
        Array([0., 5., 0., 0.], dtype=float32)
        >>> x.at[jnp.array([0, 0, 2])].add(1.)
        Array([2., 0., 1., 0.], dtype=float32)
        >>> x
        Array([0., 0., 0., 0.], dtype=float32)
    """


def attach(cls) -> None:
    cls.at = property(_IndexUpdateHelper, doc=_AT_DOC)


attach(ArrayBase)
