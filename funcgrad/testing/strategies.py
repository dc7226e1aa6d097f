"""Hypothesis strategies for derivative and property tests (requires the `hypothesis` test extra).

    from hypothesis import given
    from funcgrad.testing import arrays, shapes, float_dtypes

    @given(arrays(float_dtypes(), shapes()))
    def test_tanh(x): ...

Arrays are NumPy arrays (pass them to funcgrad functions directly or via funcgrad.numpy.asarray).

Random points rarely land where derivatives go wrong, so a special-points family draws arrays that mix
ordinary values with the ones that matter (0, -0.0, +-1, ties, the caller's bounds, zeros inside products,
tiny and huge magnitudes, optionally inf/nan) and singular matrices of a chosen rank:

    from funcgrad.testing import special_points, ties, singular_matrices

    @given(special_points(np.float64, (3, 4), bounds=(-1.0, 1.0)))
    def test_clip(x): ...
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("funcgrad.testing strategies need Hypothesis: pip install 'funcgrad[test]' "
                      "(or pip install hypothesis)") from e

from .._src.core import dtypes as _dt

def _as_strategy(x):
    return x if isinstance(x, st.SearchStrategy) else st.just(x)


def _default_elements(dtype: np.dtype) -> st.SearchStrategy:
    """Finite, moderate values: floats in [-10, 10], small integers, any bool."""
    if dtype == _dt.bool_:
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(info.min), -100), min(int(info.max), 100))
    if dtype.kind == "c":
        return st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False,
                                  width=8 * dtype.itemsize)
    width = {2: 16, 4: 32}.get(dtype.itemsize, 64)
    return st.floats(-10, 10, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width)


@st.composite
def _draw_array(draw, dtype, shape, elements):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    shp = tuple(int(s) for s in draw(_as_strategy(shape)))
    is_bf16 = _dt.bfloat16 is not None and dt == _dt.bfloat16
    if elements is None:
        if is_bf16:
            f32 = np.dtype(np.float32)
            return draw(hnp.arrays(f32, shp, elements=_default_elements(f32))).astype(dt)
        return draw(hnp.arrays(dt, shp, elements=_default_elements(dt)))
    if dt.kind == "f" or is_bf16:
        return draw(hnp.arrays(np.float64, shp, elements=elements)).astype(dt)
    if dt.kind == "c":
        return draw(hnp.arrays(np.complex128, shp, elements=elements)).astype(dt)
    return draw(hnp.arrays(dt, shp, elements=elements))


def arrays(dtype, shape, elements: st.SearchStrategy | None = None) -> st.SearchStrategy:
    """NumPy arrays of `dtype` and `shape` (each a value or a strategy).

    `elements` draws the entries (default: finite floats in [-10, 10], integers in [-100, 100], any
    bool). For float16/float32/bfloat16 the entries are drawn as float64 and rounded to the dtype, so
    any float strategy may be given (a bound may move by the rounding).
    """
    return _draw_array(dtype, shape, elements)


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Array shapes (tuples) with min_dims..max_dims dimensions of sizes min_side..max_side."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def broadcastable_shapes(shape: Sequence[int], min_dims: int = 0, max_dims: int | None = None,
                         min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Shapes that broadcast with `shape` under NumPy's rules (as hypothesis.extra.numpy's do).

    With the default max_dims (len(shape)) and no size-1 entries in `shape`, every result broadcasts
    *to* `shape`; otherwise the broadcast result may be larger than `shape`.
    """
    shape = tuple(int(s) for s in shape)
    if max_dims is None:
        max_dims = max(len(shape), min_dims)
    return hnp.broadcastable_shapes(shape, min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                                    max_side=max_side)


def mutually_broadcastable_shapes(num_shapes: int = 2, min_dims: int = 0, max_dims: int = 3,
                                  min_side: int = 1, max_side: int = 5) -> st.SearchStrategy:
    """Tuples of `num_shapes` shapes that broadcast together (their result may be larger than each)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side).map(
        lambda b: tuple(tuple(s) for s in b.input_shapes))


def broadcastable_shape_pairs(min_dims: int = 0, max_dims: int = 3, min_side: int = 1,
                              max_side: int = 5) -> st.SearchStrategy:
    """Pairs (shape_a, shape_b) of mutually broadcastable shapes."""
    return mutually_broadcastable_shapes(2, min_dims, max_dims, min_side, max_side)


def float_dtypes(sizes: Sequence[int] = (16, 32, 64), bfloat16: bool = False) -> st.SearchStrategy:
    """Floating dtypes (np.dtype) of the given bit sizes, plus bfloat16 if asked and installed."""
    choices = [np.dtype(f"float{s}") for s in sizes]
    if bfloat16 and _dt.bfloat16 is not None:
        choices.append(_dt.bfloat16)
    if not choices:
        raise ValueError("float_dtypes: no dtypes to choose from")
    return st.sampled_from(choices)


def dtypes(kinds: str = "bifc") -> st.SearchStrategy:
    """Supported dtypes of the given kinds: 'b' bool, 'i' signed/unsigned integer, 'f' float, 'c' complex."""
    choices = []
    if "b" in kinds:
        choices.append(_dt.bool_)
    if "i" in kinds:
        choices += [_dt.int8, _dt.int16, _dt.int32, _dt.int64, _dt.uint8, _dt.uint16, _dt.uint32, _dt.uint64]
    if "f" in kinds:
        choices += [_dt.float16, _dt.float32, _dt.float64]
    if "c" in kinds:
        choices += [_dt.complex64, _dt.complex128]
    if not choices:
        raise ValueError(f"dtypes: no dtypes of kinds {kinds!r}")
    return st.sampled_from(choices)


# --- special points -------------------------------------------------------------------------------

KINDS = ("real", "nonnegative", "positive", "unit", "nonzero")


def _finfo(dtype):
    dt = _dt.canonicalize(dtype)
    return dt, np.finfo(np.float32 if _dt.bfloat16 is not None and dt == _dt.bfloat16 else dt)


def _special_list(dtype, kind: str, bounds: Sequence[float], tiny: bool, huge: bool,
                  allow_infinity: bool, allow_nan: bool) -> list[float]:
    """The special values of `kind` (see special_values), in a fixed order."""
    if kind not in KINDS:
        raise ValueError(f"special points: kind must be one of {KINDS}, got {kind!r}")
    _, fi = _finfo(dtype)
    small = float(fi.tiny)                       # the smallest normal number
    big = float(fi.max) ** 0.25                  # huge, yet its square and cube stay finite
    vals = {
        "real": [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0],
        "nonnegative": [0.0, 1.0, 0.5, 2.0],
        "positive": [1.0, 0.5, 2.0],
        "unit": [0.0, -0.0, 1.0, -1.0, 0.5, -0.5],
        "nonzero": [1.0, -1.0, 0.5, -0.5, 2.0, -2.0],
    }[kind]
    if tiny:
        vals += {"real": [small, -small, float(fi.eps)], "nonnegative": [small, float(fi.eps)],
                 "positive": [small, float(fi.eps)], "unit": [small, -small, 1.0 - float(fi.epsneg)],
                 "nonzero": [small, -small]}[kind]
    if huge and kind != "unit":
        vals += [big] if kind in ("nonnegative", "positive") else [big, -big]
    if allow_infinity:
        vals += [np.inf] if kind in ("nonnegative", "positive") else [np.inf, -np.inf]
    if allow_nan:
        vals.append(np.nan)
    vals += [float(b) for b in bounds]
    return vals


def special_values(dtype=np.float64, *, kind: str = "real", bounds: Sequence[float] = (), tiny: bool = True,
                   huge: bool = False, allow_infinity: bool = False, allow_nan: bool = False
                   ) -> st.SearchStrategy:
    """Python floats that are special points of `kind`, exactly representable in `dtype`.

    kind: "real" (0, -0.0, +-1, +-0.5, +-2), "nonnegative" (0, 0.5, 1, 2), "positive" (0.5, 1, 2),
    "unit" (the closed interval [-1, 1]: 0, -0.0, +-1, +-0.5, and 1 - eps), "nonzero" (+-1, +-0.5, +-2).
    tiny adds the smallest normal number (and eps); huge a large magnitude whose cube is finite;
    bounds adds the caller's bounds (e.g. those of clip or hardtanh) exactly.

    >>> special_values(np.float32, kind="unit").example() in (0.0, 1.0, -1.0, 0.5, -0.5) or True
    True
    """
    dt, _ = _finfo(dtype)
    vals = _special_list(dtype, kind, bounds, tiny, huge, allow_infinity, allow_nan)
    return st.sampled_from([float(np.asarray(v, dtype=np.float64).astype(dt)) for v in vals])


def _ordinary(kind: str, bounds: Sequence[float]) -> st.SearchStrategy:
    lo, hi = {"real": (-3.0, 3.0), "nonnegative": (0.0, 3.0), "positive": (0.05, 3.0), "unit": (-1.0, 1.0),
              "nonzero": (0.05, 3.0)}[kind]
    if bounds:  # also values between and around the caller's bounds
        if kind == "nonzero":
            hi = max([hi] + [abs(float(b)) + 1 for b in bounds])
        else:
            lo, hi = min([lo] + [float(b) - 1 for b in bounds]), max([hi] + [float(b) + 1 for b in bounds])
    values = st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    if kind == "nonzero":  # magnitudes in [0.05, hi], either sign
        values = st.tuples(values, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
    return values


@st.composite
def _draw_special(draw, dtype, shape, kind, bounds, tiny, huge, allow_infinity, allow_nan, elements,
                  min_special):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    shp = tuple(int(s) for s in draw(_as_strategy(shape)))
    vals = _special_list(dt, kind, bounds, tiny, huge, allow_infinity, allow_nan)
    ordinary = elements if elements is not None else _ordinary(kind, bounds)
    special = st.sampled_from(vals)
    n = int(np.prod(shp, dtype=np.int64))
    flat = [draw(st.one_of(special, ordinary)) for _ in range(n)]
    if n:  # make sure the example holds special values, not only ordinary ones
        k = min(min_special, n)
        for i in draw(st.permutations(range(n)))[:k]:
            flat[i] = draw(special)
    return np.asarray(flat, dtype=np.float64).astype(dt).reshape(shp)


def special_points(dtype=np.float64, shape=(), *, kind: str = "real", bounds: Sequence[float] = (),
                   tiny: bool = True, huge: bool = False, allow_infinity: bool = False, allow_nan: bool = False,
                   elements: st.SearchStrategy | None = None, min_special: int = 1) -> st.SearchStrategy:
    """Float arrays of `dtype` and `shape` (values or strategies) mixing ordinary values with special points.

    Each entry is either an ordinary value (from `elements`, default: floats in the kind's range, around
    the bounds if given) or one of special_values(dtype, kind=..., bounds=..., ...); at least
    `min_special` entries (default 1) are special, so every non-empty example holds one. Repeated
    special values also give ties. Use kind= to stay inside a function's domain (e.g. "positive" for
    log, "unit" for arcsin) and bounds= for the kinks of clip/hardtanh/relu6.

    >>> from hypothesis import given
    >>> @given(special_points(np.float64, (4,), bounds=(-1.0, 1.0)))
    ... def test_clip(x): ...
    """
    return _draw_special(dtype, shape, kind, tuple(bounds), tiny, huge, allow_infinity, allow_nan, elements,
                         min_special)


@st.composite
def _draw_ties(draw, dtype, shape, which, elements):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    shp = tuple(int(s) for s in draw(_as_strategy(shape)))
    n = int(np.prod(shp, dtype=np.int64))
    if n < 2:
        raise ValueError(f"ties: an array of shape {shp} has fewer than two entries, so it cannot hold a tie")
    values = elements if elements is not None else st.floats(-3, 3, allow_nan=False, allow_subnormal=False)
    flat = np.asarray([draw(values) for _ in range(n)], dtype=np.float64).astype(dt).astype(np.float64)
    order = draw(st.permutations(range(n)))
    extremes = {"max": [np.max], "min": [np.min], "both": [np.max, np.min]}[which]
    if which == "both" and n < 4:  # two ties in 2 or 3 entries: all equal
        return np.full(shp, flat[0]).astype(dt)
    for j, ext in enumerate(extremes):
        a, b = order[2 * j], order[2 * j + 1]
        flat[b] = flat[a]
        if which == "both":  # set max tie then min tie on disjoint positions
            flat[a] = flat[b] = (ext(flat) + (1.0 if ext is np.max else -1.0))
        else:
            flat[a] = flat[b] = ext(flat)
    return flat.astype(dt).reshape(shp)


def ties(dtype=np.float64, shape=(4,), *, which: str = "max", elements: st.SearchStrategy | None = None
         ) -> st.SearchStrategy:
    """Float arrays whose maximum ("max"), minimum ("min") or both ("both") is attained at least twice.

    Ties are where max/min/sort/median/argmax and their derivatives pick a convention. With "both" and
    fewer than 4 entries every entry is equal.

    >>> x = ties(np.float64, (5,)).example(); int((x == x.max()).sum()) >= 2
    True
    """
    if which not in ("max", "min", "both"):
        raise ValueError(f"ties: which must be 'max', 'min' or 'both', got {which!r}")
    return _draw_ties(dtype, shape, which, elements)


@st.composite
def _draw_with_zeros(draw, dtype, shape, min_zeros, max_zeros, elements):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    shp = tuple(int(s) for s in draw(_as_strategy(shape)))
    n = int(np.prod(shp, dtype=np.int64))
    values = elements if elements is not None else _ordinary("nonzero", ())
    flat = [draw(values) for _ in range(n)]
    k = draw(st.integers(min(min_zeros, n), min(max_zeros, n)))
    for i in draw(st.permutations(range(n)))[:k]:
        flat[i] = draw(st.sampled_from([0.0, -0.0]))
    return np.asarray(flat, dtype=np.float64).astype(dt).reshape(shp)


def arrays_with_zeros(dtype=np.float64, shape=(4,), *, min_zeros: int = 1, max_zeros: int = 2,
                      elements: st.SearchStrategy | None = None) -> st.SearchStrategy:
    """Float arrays with between min_zeros and max_zeros entries equal to 0 (or -0.0), the others nonzero.

    One zero inside prod/cumprod leaves a nonzero derivative at it; two make every first derivative zero.

    >>> x = arrays_with_zeros(np.float64, (5,), min_zeros=2).example(); int((x == 0).sum()) >= 2
    True
    """
    if not 0 <= min_zeros <= max_zeros:
        raise ValueError(f"arrays_with_zeros: need 0 <= min_zeros <= max_zeros, got {min_zeros}, {max_zeros}")
    return _draw_with_zeros(dtype, shape, min_zeros, max_zeros, elements)


@st.composite
def _draw_singular(draw, n, rank, dtype, batch_shape, symmetric):
    dt = _dt.canonicalize(draw(_as_strategy(dtype)))
    r = draw(_as_strategy(rank)) if rank is not None else draw(st.integers(0, n - 1))
    if not 0 <= r < n:
        raise ValueError(f"singular_matrices: rank must be in [0, {n - 1}] for {n}x{n} matrices, got {r}")
    batch = tuple(int(s) for s in draw(_as_strategy(batch_shape)))
    ints = st.integers(-3, 3)
    out = []
    for _ in range(int(np.prod(batch, dtype=np.int64))):
        while True:  # small integer factors: the product is exact, so its rank is exactly r
            u = np.asarray([[draw(ints) for _ in range(r)] for _ in range(n)], dtype=np.float64).reshape(n, r)
            v = u if symmetric else np.asarray([[draw(ints) for _ in range(r)] for _ in range(n)],
                                               dtype=np.float64).reshape(n, r)
            m = u @ v.T
            if np.linalg.matrix_rank(m) == r:
                break
            # rank-deficient factors: make them full rank by adding identity columns
            u[:r, :r] += 7 * np.eye(r)
            if not symmetric:
                v[:r, :r] += 7 * np.eye(r)
            m = u @ (u if symmetric else v).T
            if np.linalg.matrix_rank(m) == r:
                break
        out.append(m)
    return np.asarray(out, dtype=np.float64).reshape(batch + (n, n)).astype(dt)


def singular_matrices(n: int = 3, *, rank: int | st.SearchStrategy | None = None, dtype=np.float64,
                      batch_shape=(), symmetric: bool = False) -> st.SearchStrategy:
    """Singular n x n matrices of exactly `rank` (default: drawn from 0..n-1), batched over batch_shape.

    Built as U @ V.T from small integer n x rank factors (U @ U.T with symmetric=True, positive
    semidefinite), so the product is exact and det is exactly 0: where det/slogdet/inv/solve/pinv and
    the matrix norms meet their singular cases.

    >>> m = singular_matrices(3, rank=2).example(); int(np.linalg.matrix_rank(m))
    2
    """
    if n < 1:
        raise ValueError(f"singular_matrices: n must be at least 1, got {n}")
    return _draw_singular(n, rank, dtype, batch_shape, symmetric)


__all__ = ["arrays", "shapes", "broadcastable_shapes", "mutually_broadcastable_shapes",
           "broadcastable_shape_pairs", "float_dtypes", "dtypes", "special_values", "special_points", "ties",
           "arrays_with_zeros", "singular_matrices"]
