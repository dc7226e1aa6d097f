"""NumPy advanced indexing (integer arrays and boolean masks, mixed with basic indices) on gather.

`advanced_getitem(x, items)` is `x[idx]` for an index list whose Ellipsis is already expanded (see
_indexing.py). The steps:

1. parse: every index becomes an entry: a new axis (None), a slice of one axis, or an advanced index
   of one axis (an integer array; an int, which counts as a 0-d array once any array is present; each
   axis of a boolean mask, through its nonzero coordinates). Advanced indices broadcast to one shape B.
2. apply the slices with basic indexing, then one gather reads the advanced axes: B + (sliced axes).
3. place B as NumPy does: where the advanced indices stand if they are adjacent in the index, else
   first; then insert the new axes.

`parse_index` is shared with `x.at[...]` (_at.py), which needs the same positions for updates.
"""
from __future__ import annotations

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array
from .._src.core.errors import InvalidIndexTypeError, NonConcreteBooleanIndexError, user_location
from .._src.core.trace import Tracer, concrete_value
from .._src.prims import elementwise as ew
from .._src.prims import shape as sh
from .._src.prims.indexing import gather
from ._creation import array
from ._indexing import basic_getitem, slice_indices
from ._promote import _holds_array, broadcast_to

_INDEX_DTYPE = dtypes.int64


class Entry:
    """One parsed index entry: kind "new" (None), "slice" or "adv" (one advanced index)."""
    __slots__ = ("kind", "dim", "slc", "start", "step", "size", "adv")

    def __init__(self, kind, dim=None, slc=None, start=0, step=1, size=1, adv=None):
        self.kind, self.dim, self.slc, self.adv = kind, dim, slc, adv
        self.start, self.step, self.size = start, step, size

    def is_full(self, n: int) -> bool:
        return self.kind == "slice" and self.start == 0 and self.step == 1 and self.size == n


class ParsedIndex:
    """An index normalised against a shape.

    entries: the Entry list in index order; advs: the advanced index arrays (NumPy int64 arrays when
    concrete, else int64 tracers), one per "adv" entry (entry.adv is its position here, entry.dim the
    axis it indexes, None for a 0-d boolean, which indexes no axis); bshape: their broadcast shape;
    adjacent: whether the advanced entries stand next to each other in the index."""

    def __init__(self, shape, entries, advs, bshape):
        self.shape, self.entries, self.advs, self.bshape = tuple(shape), entries, advs, tuple(bshape)
        pos = [i for i, e in enumerate(entries) if e.kind == "adv"]
        self.adjacent = bool(pos) and pos == list(range(pos[0], pos[-1] + 1))

    @property
    def has_adv(self) -> bool:
        return any(e.kind == "adv" for e in self.entries)

    def layout(self) -> list:
        """The result's axes in order: ("new", None), ("slice", entry) or ("b", j) for axis j of B."""
        bs = [("b", j) for j in range(len(self.bshape))]
        out = [] if self.adjacent or not self.has_adv else list(bs)
        placed = False
        for e in self.entries:
            if e.kind == "adv":
                if self.adjacent and not placed:
                    out.extend(bs)
                    placed = True
            elif e.kind == "new":
                out.append(("new", None))
            else:
                out.append(("slice", e))
        return out

    def result_shape(self) -> tuple:
        return tuple(1 if k == "new" else e.size if k == "slice" else self.bshape[e]
                     for k, e in self.layout())


# --- parsing --------------------------------------------------------------------------------------

def _is_int_scalar(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _as_index_array(i):
    """A NumPy array or a funcgrad array/tracer for one advanced index item."""
    if isinstance(i, ArrayBase):
        c = concrete_value(i) if isinstance(i, Tracer) else i
        return i if c is None else np.asarray(c)
    if isinstance(i, (list, tuple)):
        if _holds_array(i):
            return _as_index_array(array(i))
        a = np.asarray(i)
        if a.size == 0 and a.dtype.kind == "f":  # x[[]] is an empty integer index, as in NumPy
            a = a.astype(_INDEX_DTYPE)
        return a
    if isinstance(i, (bool, np.bool_, np.ndarray)) or _is_int_scalar(i):
        return np.asarray(i)
    raise InvalidIndexTypeError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                                f"integer or boolean arrays are valid indices; got {type(i).__name__} {i!r} "
                                f"(at {user_location(4)})")


def _normalise(a, dim: int, n: int, policy: str):
    """Integer index `a` for an axis of size n: negative entries wrap once; out-of-range ones are
    clamped ("clip"), or left out of range ("wrap", for updates that drop them; "raise", for reads that
    gather clamps, as JAX's reads do, eager or traced). Under "raise" an index into an empty axis raises
    IndexError, as in JAX: there is no element to clamp to."""
    if policy == "raise" and n == 0 and int(np.prod(a.shape)):
        raise IndexError(f"index is out of bounds for axis {dim} with size 0 (at {user_location(4)})")
    if isinstance(a, np.ndarray):
        a = a.astype(_INDEX_DTYPE, copy=False)
        a = np.where(a < 0, a + n, a)
        if policy == "clip":
            a = np.clip(a, 0, max(n - 1, 0))
        return a
    a = ew.convert_element_type(a, _INDEX_DTYPE)
    zero = sh.full(a.shape, 0, _INDEX_DTYPE)
    a = ew.select(ew.lt(a, zero), ew.add(a, sh.full(a.shape, n, _INDEX_DTYPE)), a)
    if policy == "clip":
        a = ew.min(ew.max(a, zero), sh.full(a.shape, max(n - 1, 0), _INDEX_DTYPE))
    return a


def _mask_coordinates(a, shape, dim: int):
    """The nonzero coordinates of a concrete boolean mask indexing axes dim, dim+1, ... of `shape`."""
    if a.ndim == 0:  # a 0-d mask adds an axis of length 1 (True) or 0 (False) and indexes none
        return [np.zeros(1 if bool(a) else 0, _INDEX_DTYPE)]
    for j, s in enumerate(a.shape):
        if shape[dim + j] != s and s != 0:  # NumPy accepts an empty mask axis against any length
            raise IndexError(f"boolean index did not match indexed array along axis {dim + j}; size of "
                             f"axis is {shape[dim + j]} but size of corresponding boolean axis is {s} "
                             f"(at {user_location(5)})")
    return [c.astype(_INDEX_DTYPE) for c in np.nonzero(a)]


def parse_index(shape, items, policy: str = "raise") -> ParsedIndex:
    """Normalise `items` (an index list with Ellipsis expanded) against `shape`; see ParsedIndex."""
    raw = [i if i is None or isinstance(i, slice) else int(i) if _is_int_scalar(i) else _as_index_array(i)
           for i in items]
    entries, advs = [], []
    dim = 0
    for i in raw:
        if i is None:
            entries.append(Entry("new"))
            continue
        if isinstance(i, slice):
            entries.append(_slice_entry(i, dim, shape[dim]))
            dim += 1
            continue
        if isinstance(i, int):  # with an array present (or under .at), an int is a 0-d advanced index
            i = np.asarray(i)
        dt = i.dtype
        if dt == dtypes.bool_:
            if not isinstance(i, np.ndarray):
                raise NonConcreteBooleanIndexError(
                    f"Array boolean indices must be concrete; got a traced mask {i.aval.str_short()} at "
                    f"{user_location(3)}. The shape of x[mask] depends on the mask's values, which are "
                    "not known under jit or vmap. Use funcgrad.numpy.where(mask, x, fill) to keep the "
                    "shape static (or x.at[...] with a concrete mask), or compute the mask outside the "
                    "transformed function.")
            for c in _mask_coordinates(i, shape, dim):
                if i.ndim == 0:
                    entries.append(Entry("adv", None, adv=len(advs)))
                else:
                    entries.append(Entry("adv", dim, adv=len(advs)))
                    c = _normalise(c, dim, shape[dim], policy)
                    dim += 1
                advs.append(c)
            continue
        if not dtypes.is_integer(dt):
            raise InvalidIndexTypeError(f"arrays used as indices must be of integer (or boolean) type, got "
                                        f"{dt} (at {user_location(3)})")
        advs.append(_normalise(i, dim, shape[dim], policy))
        entries.append(Entry("adv", dim, adv=len(advs) - 1))
        dim += 1
    while dim < len(shape):  # axes the index did not reach are taken whole
        entries.append(_slice_entry(slice(None), dim, shape[dim]))
        dim += 1
    try:
        bshape = np.broadcast_shapes(*[tuple(a.shape) for a in advs])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(a.shape)) for a in advs) + f" (at {user_location(3)})") from None
    return ParsedIndex(shape, entries, advs, bshape)


def _slice_entry(s: slice, dim: int, n: int) -> Entry:
    start, stop, step = slice_indices(s, n)
    size = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
    return Entry("slice", dim, s, start if size else 0, step, size)


# --- building index arrays ------------------------------------------------------------------------

def stack_columns(cols, shape):
    """Stack index columns (NumPy arrays or tracers, each broadcastable to `shape` from the right) into
    one int64 array shape + (len(cols),): a NumPy-backed constant Array when all are concrete."""
    if all(isinstance(c, np.ndarray) for c in cols):
        if not cols:
            return to_array(np.zeros(tuple(shape) + (0,), _INDEX_DTYPE))
        return to_array(np.stack([np.broadcast_to(c, shape) for c in cols], -1).astype(_INDEX_DTYPE))
    parts = []
    for c in cols:
        c = to_array(c) if isinstance(c, np.ndarray) else c
        parts.append(sh.reshape(broadcast_to(c, tuple(shape)), tuple(shape) + (1,)))
    return sh.concatenate(parts, len(shape))


# --- reads ----------------------------------------------------------------------------------------

def advanced_getitem(x, items):
    """x[items] with NumPy semantics, where items (Ellipsis expanded) hold an advanced index."""
    p = parse_index(x.shape, items, "raise")
    basic = [slice(None)] * x.ndim
    for e in p.entries:
        if e.kind == "slice" and not e.is_full(x.shape[e.dim]):
            basic[e.dim] = e.slc
    y = basic_getitem(x, basic) if any(s != slice(None) for s in basic) else x
    adv = [e for e in p.entries if e.kind == "adv"]
    # 0-d masks index no axis, but their shapes take part in B (stack_columns broadcasts to it).
    indices = stack_columns([p.advs[e.adv] for e in adv if e.dim is not None], p.bshape)
    out = gather(y, indices, tuple(e.dim for e in adv if e.dim is not None))
    # out is B + (sliced axes in order); move B where NumPy puts it, then add the new axes.
    nb = len(p.bshape)
    slices = [e for e in p.entries if e.kind == "slice"]
    if p.adjacent:
        first = next(k for k, e in enumerate(p.entries) if e.kind == "adv")
        before = sum(1 for e in p.entries[:first] if e.kind == "slice")
        perm = list(range(nb, nb + before)) + list(range(nb)) + list(range(nb + before, nb + len(slices)))
        out = sh.transpose(out, perm)
    final = p.result_shape()
    if tuple(out.shape) != final:
        out = sh.reshape(out, final)
    return out
