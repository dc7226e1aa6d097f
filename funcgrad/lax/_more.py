"""More of jax.lax: patches, shape helpers (broadcast_to_rank, broadcast_shapes, *_shape_tuple), clz,
empty, tile/stack/unstack, index_take, scatter_sub/scatter_apply in funcgrad's scatter convention,
JAX's gather/scatter type names, and the primitives under JAX's `*_p` names.

Everything here is composed of existing funcgrad operations, so derivatives, vmap and jit come from the
cards those operations bind.
"""
from __future__ import annotations

import enum
from typing import NamedTuple, Sequence, Union

import numpy as np

from ..core.primitive import registry as _registry

__all__ = ["conv_general_dilated_patches", "broadcast_to_rank", "broadcast_shapes", "clz", "empty", "tile",
           "stack", "unstack", "index_take", "scatter_sub", "scatter_apply", "GatherDimensionNumbers",
           "ScatterDimensionNumbers", "GatherScatterMode", "DotDimensionNumbers",
           "ConvGeneralDilatedDimensionNumbers", "reduce_window_shape_tuple", "conv_shape_tuple",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple", "ragged_dot", "mulhi",
           "platform_dependent", "composite"]


def _jnp():
    from .. import numpy as jnp
    return jnp


# --- types ---------------------------------------------------------------------------------------------
class GatherDimensionNumbers(NamedTuple):
    """XLA's gather dimension numbers (the fields of jax.lax.GatherDimensionNumbers)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's scatter dimension numbers (the fields of jax.lax.ScatterDimensionNumbers)."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds index handling; usable as `mode=` of x.at[...] and funcgrad.ops."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s) -> "GatherScatterMode":
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        names = {"clip": "CLIP", "fill": "FILL_OR_DROP", "drop": "FILL_OR_DROP",
                 "promise_in_bounds": "PROMISE_IN_BOUNDS", "one_hot": "ONE_HOT"}
        try:
            return GatherScatterMode[names[str(s).lower()]]
        except KeyError:
            raise ValueError(f"Unknown gather mode {s!r}") from None


DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], "ConvDimensionNumbers", None]


# --- array functions -----------------------------------------------------------------------------------
def broadcast_to_rank(x, rank: int):
    """x with leading length-1 axes added up to `rank` dimensions (x itself if it has that many)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if rank < x.ndim:
        raise ValueError(f"broadcast_to_rank: cannot lower the rank of an array of shape {x.shape} to {rank}")
    return x if rank == x.ndim else jnp.reshape(x, (1,) * (rank - x.ndim) + tuple(x.shape))


def broadcast_shapes(*shapes) -> tuple:
    """The NumPy broadcast of shapes (ValueError if they are incompatible)."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def clz(x):
    """Count of leading zero bits of each integer of x (its bit width for 0)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"clz does not accept dtype {x.dtype}. Accepted dtypes are subtypes of integer.")
    bits = np.dtype(x.dtype).itemsize * 8
    udt = np.dtype(f"uint{bits}")
    from ..primitives.elementwise import bitcast_convert_type
    u = bitcast_convert_type(x, udt) if np.dtype(x.dtype).kind == "i" else x
    count = jnp.zeros(x.shape, x.dtype)
    s = bits // 2
    while s >= 1:  # binary search for the highest set bit
        top_zero = (u >> np.array(bits - s, udt)) == 0
        count = jnp.where(top_zero, count + np.array(s, x.dtype), count)
        u = jnp.where(top_zero, u << np.array(s, udt), u)
        s //= 2
    return jnp.where((u >> np.array(bits - 1, udt)) == 0, count + np.array(1, x.dtype), count)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents are unspecified (here: zeros)."""
    return _jnp().zeros(shape, dtype)


def tile(operand, reps):
    """operand repeated reps[i] times along each axis (as numpy.tile)."""
    return _jnp().tile(operand, tuple(reps))


def stack(operands, axis: int = 0):
    """Arrays of one shape stacked along a new axis."""
    return _jnp().stack(list(operands), axis=axis)


def unstack(x, axis: int = 0) -> tuple:
    """The slices of x along `axis`, as a tuple (the inverse of stack)."""
    jnp = _jnp()
    x = jnp.asarray(x)
    axis = axis % x.ndim if x.ndim else axis
    return tuple(jnp.take(x, i, axis=axis) for i in range(x.shape[axis]))


def index_take(src, idxs, axes):
    """src at the index arrays `idxs` (one per axis of `axes`, of one length N): a (N,) + rest array, the
    axes of src not in `axes` following in their order."""
    jnp = _jnp()
    src = jnp.asarray(src)
    axes = tuple(int(a) % src.ndim for a in axes)
    idxs = tuple(idxs)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    rest = [d for d in range(src.ndim) if d not in axes]
    moved = jnp.transpose(src, axes + tuple(rest))
    return moved[tuple(jnp.asarray(i) for i in idxs)]


def _from_dimension_numbers(operand, indices, updates, dnums, mode, what):
    """JAX's (scatter_indices, updates, ScatterDimensionNumbers) as funcgrad's (indices, updates, axes), for
    scatters whose windows are whole operand dimensions (x.at[idx] style); others: NotImplementedError."""
    jnp = _jnp()
    uw = tuple(int(d) for d in dnums.update_window_dims)
    inserted = tuple(int(d) for d in dnums.inserted_window_dims)
    to_operand = tuple(int(d) for d in dnums.scatter_dims_to_operand_dims)
    if tuple(getattr(dnums, "operand_batching_dims", ())) or sorted(inserted) != sorted(to_operand):
        raise NotImplementedError(f"{what}: funcgrad supports scatters whose indexed operand dimensions are "
                                  "exactly the inserted window dimensions (no batching dimensions)")
    rest = [d for d in range(operand.ndim) if d not in inserted]
    indices = jnp.asarray(indices)
    if updates is not None:
        updates = jnp.asarray(updates)
        batch = [d for d in range(updates.ndim) if d not in uw]
        if [updates.shape[d] for d in uw] != [operand.shape[d] for d in rest]:
            raise NotImplementedError(f"{what}: funcgrad supports windows spanning whole operand dimensions "
                                      f"(updates {tuple(updates.shape)}, operand {tuple(operand.shape)})")
        updates = jnp.transpose(updates, tuple(batch) + uw)
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.CLIP:
        hi = np.array([operand.shape[d] - 1 for d in to_operand])
        indices = jnp.clip(indices, 0, hi)
    elif mode is GatherScatterMode.ONE_HOT:
        raise NotImplementedError(f"{what}: mode ONE_HOT")
    return indices, updates, to_operand


def _is_dnums(x) -> bool:
    return hasattr(x, "update_window_dims") and hasattr(x, "scatter_dims_to_operand_dims")


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """operand with updates subtracted at the indexed positions. `dimension_numbers` is JAX's
    ScatterDimensionNumbers (whole-dimension windows, as x.at[...] makes) or funcgrad's `axes`."""
    from ..primitives.indexing import scatter_add
    jnp = _jnp()
    operand = jnp.asarray(operand)
    if _is_dnums(dimension_numbers):
        scatter_indices, updates, axes = _from_dimension_numbers(operand, scatter_indices, updates,
                                                                 dimension_numbers, mode, "scatter_sub")
    else:
        axes = dimension_numbers
    return scatter_add(operand, scatter_indices, -jnp.asarray(updates), axes)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """operand with func applied at the indexed positions (each position once). `dimension_numbers`:
    JAX's ScatterDimensionNumbers (whole-dimension windows) or funcgrad's `axes`."""
    from ..primitives.indexing import gather, scatter
    jnp = _jnp()
    operand = jnp.asarray(operand)
    if _is_dnums(dimension_numbers):
        scatter_indices, _, axes = _from_dimension_numbers(operand, scatter_indices, None, dimension_numbers,
                                                           mode, "scatter_apply")
    else:
        axes = dimension_numbers
    taken = gather(operand, scatter_indices, axes)
    return scatter(operand, scatter_indices, func(taken), axes, "set")


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of spatial shape `filter_shape` sees, as features: the
    output has C * prod(filter_shape) features, channel-major (feature c * prod(filter_shape) + k holds
    channel c at flat kernel position k), laid out as the output spec of dimension_numbers says."""
    from ..primitives.conv import conv_dimension_numbers, conv_general_dilated
    jnp = _jnp()
    lhs = jnp.asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    n = lhs.ndim - 2
    if len(filter_shape) != n:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} needs {n} entries")
    dn = conv_dimension_numbers(lhs.shape, lhs.shape, dimension_numbers)
    lhs_nc = jnp.transpose(lhs, dn.lhs_spec)  # N, C, spatial (in the rhs spec's spatial order)
    c = lhs_nc.shape[1]
    k = int(np.prod(filter_shape))
    eye = np.eye(k, dtype=np.dtype(lhs.dtype)).reshape((k, 1) + filter_shape)
    kernel = np.tile(eye, (c,) + (1,) * (n + 1))  # (C*k, 1, *filter): group c picks channel c
    out = conv_general_dilated(lhs_nc, jnp.asarray(kernel, dtype=lhs.dtype), window_strides, padding,
                               lhs_dilation, rhs_dilation, None, feature_group_count=c,
                               precision=precision, preferred_element_type=preferred_element_type)
    return jnp.transpose(out, tuple(np.argsort(dn.out_spec)))


# --- shape tuples --------------------------------------------------------------------------------------
def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None) -> tuple:
    """The shape reduce_window gives: explicit (lo, hi) padding, optional base and window dilations."""
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    out = []
    for d, w, s, (lo, hi), b, wd in zip(operand_shape, window_dimensions, window_strides, padding,
                                        base_dilation, window_dilation):
        size = (0 if d == 0 else (d - 1) * b + 1) + lo + hi
        win = (w - 1) * wd + 1
        out.append(max(0, (size - win) // s + 1))
    return tuple(out)


def _shape_of(fn, *shapes, **kw):
    from .._jax_api import ShapeDtypeStruct, eval_shape
    args = [ShapeDtypeStruct(tuple(s), np.float32) for s in shapes]
    return tuple(eval_shape(lambda a, b: fn(a, b, **kw), *args).shape)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """conv_general_dilated's output shape for NC.../OI... operands (pads: a string or (lo, hi) pairs)."""
    from ..primitives.conv import conv_general_dilated
    return _shape_of(lambda a, b: conv_general_dilated(a, b, strides, pads, batch_group_count=batch_group_count),
                     lhs_shape, rhs_shape)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """conv_general_dilated's output shape for the given dimension_numbers."""
    from ..primitives.conv import conv_general_dilated
    return _shape_of(lambda a, b: conv_general_dilated(a, b, window_strides, padding,
                                                       dimension_numbers=dimension_numbers),
                     lhs_shape, rhs_shape)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """lax.conv_transpose's output shape."""
    from ._conv_transpose import conv_transpose
    return _shape_of(lambda a, b: conv_transpose(a, b, window_strides, padding,
                                                 dimension_numbers=dimension_numbers),
                     lhs_shape, rhs_shape)


# --- JAX's newer lax helpers --------------------------------------------------------------------------

def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None,
               out_sharding=None):
    """Grouped matrix product (jax.lax.ragged_dot): the rows of lhs (m, k) fall in consecutive groups of
    group_sizes (g,) rows, and the rows of group i are multiplied by rhs[i] (k, n); rows after the last
    group give zeros. Differentiable in lhs and rhs."""
    jnp = _jnp()
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported")
    lhs, rhs, group_sizes = jnp.asarray(lhs), jnp.asarray(rhs), jnp.asarray(group_sizes)
    if lhs.ndim != 2 or rhs.ndim != 3 or group_sizes.ndim != 1 or rhs.shape[0] != group_sizes.shape[0] \
            or lhs.shape[1] != rhs.shape[1]:
        raise TypeError(f"ragged_dot: expected lhs (m, k), rhs (g, k, n) and group_sizes (g,), got "
                        f"{tuple(lhs.shape)}, {tuple(rhs.shape)} and {tuple(group_sizes.shape)}")
    if not jnp.issubdtype(group_sizes.dtype, jnp.integer):
        raise TypeError(f"ragged_dot: group_sizes must be integers, got {group_sizes.dtype}")
    ends = jnp.cumsum(group_sizes)
    rows = jnp.arange(lhs.shape[0])
    member = (rows[None, :] >= (ends - group_sizes)[:, None]) & (rows[None, :] < ends[:, None])
    dt = jnp.result_type(lhs, rhs)
    out = jnp.einsum("gm,mk,gkn->mn", member.astype(dt), lhs.astype(dt), rhs.astype(dt))
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def mulhi(x, y, /):
    """The upper N bits of the 2N-bit product of N-bit integers x and y (jax.lax.mulhi)."""
    jnp = _jnp()
    x, y = jnp.asarray(x), jnp.asarray(y)
    if x.dtype != y.dtype or not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"mulhi: operands must be integers of one dtype, got {x.dtype} and {y.dtype}")
    dt = np.dtype(x.dtype)
    bits = dt.itemsize * 8
    if bits <= 32:
        wide = np.int64 if dt.kind == "i" else np.uint64
        prod = x.astype(wide) * y.astype(wide)
        return (prod >> bits).astype(dt)
    u = np.uint64
    a, b = x.astype(u), y.astype(u)  # (bit patterns)
    low = u(0xFFFFFFFF)
    a_lo, a_hi, b_lo, b_hi = a & low, a >> u(32), b & low, b >> u(32)
    hi_lo, lo_hi = a_hi * b_lo, a_lo * b_hi
    cross = ((a_lo * b_lo) >> u(32)) + (hi_lo & low) + lo_hi
    hi = a_hi * b_hi + (hi_lo >> u(32)) + (cross >> u(32))
    if dt.kind == "i":  # signed: subtract the other operand where one is negative (mod 2**64)
        hi = hi - jnp.where(x < 0, b, u(0)) - jnp.where(y < 0, a, u(0))
    return hi.astype(dt)


def platform_dependent(*args, default=None, **per_platform):
    """Call the rule given for the platform the arguments live on (cpu, or cuda / gpu for CuPy arrays),
    else `default` (jax.lax.platform_dependent)."""
    from ..core.array import Array
    on_gpu = any(isinstance(a, Array) and a.device.platform != "cpu" for a in args)
    names = ("cuda", "gpu") if on_gpu else ("cpu",)
    for n in names:
        if n in per_platform:
            return per_platform[n](*args)
    if default is None:
        raise NotImplementedError(f"platform_dependent: no rule for platform {names[0]!r} and no default")
    return default(*args)


def composite(decomposition, name: str, version: int = 0):
    """A function marked as a composite operation (jax.lax.composite): funcgrad runs, differentiates and
    compiles its decomposition."""
    import functools

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    call.composite_name, call.composite_version = name, version
    return call


# --- primitives under JAX's names ------------------------------------------------------------------------
# JAX name -> funcgrad card name, where the card computes the same operation. Cards whose operands or
# params are laid out differently from JAX's primitive (gather, scatter, select_n, cond, ...) are left out.
_SAME = ("abs acos acosh add and argmax argmin asin asinh atan atan2 atanh bessel_i0e bessel_i1e "
         "bitcast_convert_type broadcast_in_dim cbrt ceil clamp complex concatenate conj "
         "conv_general_dilated convert_element_type cos cosh cumlogsumexp cummax cummin cumprod cumsum "
         "digamma div dot_general dynamic_slice dynamic_update_slice eq erf erf_inv erfc exp exp2 expm1 fft "
         "floor ge gt igamma igammac imag integer_pow iota is_finite le lgamma log log1p logistic lt max min "
         "mul ne neg nextafter not or pad polygamma population_count pow real reduce_and reduce_max "
         "reduce_min reduce_or reduce_prod reduce_sum reduce_window_max reduce_window_min reduce_window_sum "
         "rem reshape rev round rsqrt shift_left shift_right_arithmetic shift_right_logical sign sin sinh "
         "slice sort sqrt square squeeze stop_gradient sub tan tanh top_k transpose xor").split()
PRIMITIVES = {f"{n}_p": _registry[n] for n in _SAME if n in _registry}
if "regularized_incomplete_beta_p" not in PRIMITIVES and "betainc" in _registry:
    PRIMITIVES["regularized_incomplete_beta_p"] = _registry["betainc"]
globals().update(PRIMITIVES)
__all__ += sorted(PRIMITIVES)
