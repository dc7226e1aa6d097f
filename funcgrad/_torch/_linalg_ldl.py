"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve: the Bunch-Kaufman LDL^T factorisation of a symmetric
(or, with hermitian=True, Hermitian) matrix in LAPACK's compact sytrf format (lower triangle), and solves
with it.

Computed on the host in the input's precision with the diagonal pivoting of LAPACK's unblocked sytf2/hetf2
(1x1 and 2x2 pivot blocks, alpha = (1 + sqrt 17) / 8), so LD and pivots agree with torch's for matrices
LAPACK factors unblocked (n up to its block size). Like torch's, these have no derivative: the results do not
require grad.
"""
from __future__ import annotations

import math

import numpy as np

from .._src.core.array import Array
from ._tensor import _wrap

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

from .return_types import linalg_ldl_factor as _ldl_t, linalg_ldl_factor_ex as _ldl_ex_t  # noqa: E402
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _abs1(x):
    """LAPACK's cabs1 for complex (|re| + |im|), |x| for real."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _factor_one(a: np.ndarray, hermitian: bool):
    """Factor one matrix in place (lower triangle used); returns (pivots 1-based LAPACK style, info)."""
    n = a.shape[0]
    herm = hermitian and np.iscomplexobj(a)
    cj = np.conj if herm else (lambda v: v)
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else float(_abs1(a[k, k]))
        if k < n - 1:
            col = _abs1(a[k + 1:, k])
            imax = k + 1 + int(np.argmax(col))
            colmax = float(col[imax - k - 1])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                rowmax = float(np.max(_abs1(a[imax, k:imax])))
                if imax < n - 1:
                    rowmax = max(rowmax, float(np.max(_abs1(a[imax + 1:, imax]))))
                aii = abs(a[imax, imax].real) if herm else float(_abs1(a[imax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif aii >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # interchange rows and columns kk and kp of the trailing submatrix
                if kp < n - 1:
                    tmp = a[kp + 1:, kk].copy()
                    a[kp + 1:, kk] = a[kp + 1:, kp]
                    a[kp + 1:, kp] = tmp
                tmp = cj(a[kk + 1:kp, kk].copy())
                a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = tmp
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            elif herm:
                a[k, k] = a[k, k].real
            if herm and kstep == 2:
                a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    d11 = (1.0 / a[k, k].real) if herm else (1.0 / a[k, k])
                    x = a[k + 1:, k].copy()
                    upd = d11 * np.outer(x, cj(x))
                    a[k + 1:, k + 1:] -= np.tril(upd).astype(a.dtype)
                    a[k + 1:, k] = x * d11
            elif k < n - 2:
                if herm:
                    d = abs(a[k + 1, k])
                    d11 = a[k + 1, k + 1].real / d
                    d22 = a[k, k].real / d
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = a[k + 1, k] / d
                    d = tt / d
                    wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
                    wkp1 = d * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
                else:
                    d21 = a[k + 1, k]
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    t = 1.0 / (d11 * d22 - 1.0)
                    d21 = t / d21
                    wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
                    wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
                upd = np.outer(a[k + 2:, k], cj(wk)) + np.outer(a[k + 2:, k + 1], cj(wkp1))
                a[k + 2:, k + 2:] -= np.tril(upd).astype(a.dtype)
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
                if herm:
                    idx = np.arange(k + 2, n)
                    a[idx, idx] = a[idx, idx].real
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _check_square(h, name):
    if h.ndim < 2:
        raise RuntimeError(f"torch.linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if h.shape[-1] != h.shape[-2]:
        raise RuntimeError(f"torch.linalg.{name}: A must be batches of square matrices, but they are "
                           f"{h.shape[-2]} by {h.shape[-1]} matrices")
    if h.dtype.kind not in "fc":
        raise RuntimeError(f"torch.linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {h.dtype}")


def _factor(A, hermitian, name):
    h = np.asarray(A._host())
    _check_square(h, name)
    work = h.astype(np.float32 if h.dtype.itemsize < 4 and h.dtype.kind == "f" else h.dtype)
    n = h.shape[-1]
    flat = np.array(work.reshape((-1, n, n)))
    piv = np.zeros(flat.shape[:1] + (n,), np.int32)
    info = np.zeros(flat.shape[:1], np.int32)
    for b in range(flat.shape[0]):
        piv[b], info[b] = _factor_one(flat[b], hermitian)
        flat[b] = np.tril(flat[b])
    LD = flat.reshape(h.shape).astype(h.dtype)
    return LD, piv.reshape(h.shape[:-1]), info.reshape(h.shape[:-2])


def _tensors(LD, piv, info=None):
    out = [_wrap(Array(np.ascontiguousarray(LD))), _wrap(Array(np.ascontiguousarray(piv)))]
    if info is not None:
        out.append(_wrap(Array(np.ascontiguousarray(info))))
    return out


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): info[i] > 0 when D's info[i]-th diagonal element is exactly zero (A singular);
    with check_errors such input raises RuntimeError."""
    LD, piv, info = _factor(A, hermitian, "ldl_factor_ex")
    if check_errors and np.any(info > 0):
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: The factorization could not be completed because the "
                           f"input is singular (D[{int(info[info > 0].flat[0]) - 1}] is zero).")
    return _ldl_ex_t(*_tensors(LD, piv, info))


def ldl_factor(A, *, hermitian=False, out=None):
    """(LD, pivots): LAPACK sytrf's compact LDL^T of symmetric (or Hermitian) A; RuntimeError if singular."""
    LD, piv, info = _factor(A, hermitian, "ldl_factor")
    if np.any(info > 0):
        raise RuntimeError(f"torch.linalg.ldl_factor: The factorization could not be completed because the "
                           f"input is singular (D[{int(info[info > 0].flat[0]) - 1}] is zero).")
    return _ldl_t(*_tensors(LD, piv))


def _solve_one(a, ipiv, b, hermitian):
    n = a.shape[0]
    herm = hermitian and np.iscomplexobj(a)
    cj = np.conj if herm else (lambda v: v)
    k = 0
    while k < n:  # L D y = P b
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] / (a[k, k].real if herm else a[k, k])
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / cj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / cj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T (L^H) x = y, then undo the interchanges
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
                b[k - 1] -= cj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Solve A X = B from ldl_factor's (LD, pivots) (LAPACK sytrs / hetrs), batched; no derivative."""
    a, p, b = np.asarray(LD._host()), np.asarray(pivots._host()), np.asarray(B._host())
    _check_square(a, "ldl_solve")
    n = a.shape[-1]
    if b.ndim < 2 or b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by {n} "
                           f"but each b matrix is {b.shape[-2] if b.ndim >= 2 else b.shape[-1]} by "
                           f"{b.shape[-1]}")
    if p.shape != a.shape[:-1]:
        raise RuntimeError("torch.linalg.ldl_solve: pivots must have shape LD.shape[:-1], got "
                           f"{tuple(p.shape)} for LD of shape {tuple(a.shape)}")
    dt = np.result_type(a.dtype, b.dtype)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1, n, n))
    p = np.broadcast_to(p, batch + (n,)).reshape((-1, n))
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:]), dtype=dt)
    for i in range(x.shape[0]):
        _solve_one(a[i].astype(dt), p[i], x[i], hermitian)
    return _wrap(Array(np.ascontiguousarray(x.reshape(batch + b.shape[-2:]))))
