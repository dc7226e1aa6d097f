"""NumPy's 1-d set operations: union1d, intersect1d, setdiff1d, setxor1d (sorted unique results).

Their result sizes depend on the values, so they need concrete inputs (as numpy.unique does without
`size=`); NaNs are never equal to each other, so they are never in an intersection."""
from __future__ import annotations

from .._src.prims import elementwise as ew
from ._manipulation import concatenate, ravel
from ._promote import asarray_any, promote_dtypes
from ._sorting import argsort, isin, searchsorted, sort, unique


def _unique_1d(x, assume_unique: bool):
    return ravel(x) if assume_unique else unique(x)


def union1d(ar1, ar2):
    """The sorted unique values in either array."""
    a, b = promote_dtypes(asarray_any(ar1), asarray_any(ar2))
    return unique(concatenate([ravel(a), ravel(b)]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted unique values in both arrays; with return_indices, also the indices of their first
    occurrences in each (flattened) input."""
    a, b = promote_dtypes(asarray_any(ar1), asarray_any(ar2))
    if return_indices:
        u1, i1 = unique(a, return_index=True) if not assume_unique else (ravel(a), None)
        u2, i2 = unique(b, return_index=True) if not assume_unique else (ravel(b), None)
        keep = isin(u1, u2)
        common = u1[keep]
        if assume_unique:
            o1, o2 = argsort(u1), argsort(u2)
            common = sort(common)
            pos1 = o1[searchsorted(u1[o1], common)]
            pos2 = o2[searchsorted(u2[o2], common)]
            return common, pos1, pos2
        return common, i1[keep], i2[searchsorted(u2, common)]
    u1 = _unique_1d(a, assume_unique)
    return sort(u1[isin(u1, b)]) if assume_unique else u1[isin(u1, b)]


def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of ar1 that are not in ar2 (sorted unless assume_unique)."""
    a, b = promote_dtypes(asarray_any(ar1), asarray_any(ar2))
    u1 = _unique_1d(a, assume_unique)
    return u1[isin(u1, b, invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted unique values that are in exactly one of the arrays."""
    a, b = promote_dtypes(asarray_any(ar1), asarray_any(ar2))
    u1, u2 = _unique_1d(a, assume_unique), _unique_1d(b, assume_unique)
    both = concatenate([u1[isin(u1, u2, invert=True)], u2[isin(u2, u1, invert=True)]])
    return ew.convert_element_type(sort(both), a.dtype)
