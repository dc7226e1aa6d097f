"""A matrix product and the elementwise update that consumes it as one BLAS gemm (NumPy backend).

    out = c - s * dot(a, b)      (an SGD step: c the parameter, dot the weight gradient, s the rate)
    out = dot(a, b) + c          (a bias add: c the bias broadcast over the rows)

each become `gemm_update[alpha, ta, tb](c, a, b)`: `out` is filled with c (no copy when c is a dead full-size
buffer the code may overwrite, a donated parameter among them) and gemm adds alpha * op(a) @ op(b) into it
(beta = 1). That saves the product's own buffer (an SGD step with donated parameters never holds a weight
gradient beside its weight: the peak memory of a jitted training step) and a pass over memory (BLAS zeroes C
before a beta = 0 product anyway, so filling it with c costs what that zeroing did).

Rounding: the product's sum is rounded once with c added (an FMA in the BLAS's kernel) instead of being
rounded, scaled, rounded and subtracted; where the BLAS splits the inner dimension into panels, c joins the
first panel's partial sum rather than the last. Either way the result is as accurate as the unfused one and
within the jit-vs-eager tolerances (not bitwise equal to eager).

The BLAS is NumPy's own (the OpenBLAS its wheels bundle, through its 64-bit-integer CBLAS entry point), so
the product runs the kernels numpy.matmul runs, on the threads core/threads.py sets; where it cannot be
found (another NumPy build) nothing is rewritten. Like patterns.py's operations, gemm_update is compiler-
internal: it appears only in the jaxpr code generation sees (codegen.generate, NumPy backend).
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from ...core.aval import ShapedArray
from ...core.jaxpr import Eqn, Jaxpr, Var
from ...core.primitive import Primitive
from ._ir import producers, rebuild, uniform_value

# Products with fewer output elements keep matmul and the update ufuncs: the ctypes call costs a few
# microseconds, about what a pass over 64K floats saves.
MIN_SIZE = 65536

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_gemms: dict | None = None


def _find_gemms() -> dict:
    """{dtype: cblas_?gemm} of NumPy's bundled OpenBLAS ({} when there is none to find)."""
    d = os.path.dirname(np.__file__)
    paths = sorted(set(glob.glob(d + ".libs/*openblas*") + glob.glob(os.path.join(d, ".dylibs", "*openblas*"))))
    i64, i32 = ctypes.c_int64, ctypes.c_int
    for path in paths:
        try:
            lib = ctypes.CDLL(path)  # (numpy has loaded it: the same handle)
        except OSError:
            continue
        found = {}
        for dt, ch, real in ((np.dtype(np.float32), "s", ctypes.c_float), (np.dtype(np.float64), "d", ctypes.c_double)):
            for prefix in ("scipy_", ""):
                f = getattr(lib, f"{prefix}cblas_{ch}gemm64_", None)  # (64_: the ILP64 interface)
                if f is not None:
                    f.argtypes = [i32, i32, i32, i64, i64, i64, real, ctypes.c_void_p, i64, ctypes.c_void_p, i64,
                                  real, ctypes.c_void_p, i64]
                    f.restype = None
                    found[dt] = f
                    break
        if len(found) == 2:
            return found
    return {}


def available() -> bool:
    global _gemms
    if _gemms is None:
        _gemms = _find_gemms()
    return bool(_gemms)


def _operand(m: np.ndarray):
    """(array, leading dimension, CBLAS transpose flag) for a row-major gemm operand m (a copy if its
    strides fit neither layout)."""
    r, c = m.shape
    if m.flags.c_contiguous:
        return m, max(1, c), _NO_TRANS
    if m.flags.f_contiguous:
        return m, max(1, r), _TRANS
    isz = m.itemsize
    s0, s1 = m.strides
    if s1 == isz and s0 > 0 and s0 % isz == 0 and s0 // isz >= c:
        return m, s0 // isz, _NO_TRANS
    if s0 == isz and s1 > 0 and s1 % isz == 0 and s1 // isz >= r:
        return m, s1 // isz, _TRANS
    return np.ascontiguousarray(m), max(1, c), _NO_TRANS


def gemm_update(alpha: float, a: np.ndarray, ta: bool, b: np.ndarray, tb: bool, c: np.ndarray,
                out: np.ndarray | None = None) -> np.ndarray:
    """c + alpha * op(a) @ op(b), written into `out` (which may be c itself) or a new array; op transposes
    where ta / tb."""
    A = a.T if ta else a
    B = b.T if tb else b
    m, k = A.shape
    n = B.shape[1]
    if out is None:
        out = np.empty((m, n), np.result_type(A, B))
    if out is not c:
        np.copyto(out, c)
    if not (out.flags.c_contiguous and out.flags.writeable):  # (not from codegen's buffers; read-only raises
        out[...] = gemm_update(alpha, a, ta, b, tb, out)      # as a ufunc's out= would)
        return out
    A, lda, fa = _operand(A)
    B, ldb, fb = _operand(B)
    _gemms[out.dtype](_ROW_MAJOR, fa, fb, m, n, k, alpha, A.ctypes.data, lda, B.ctypes.data, ldb, 1.0,
                      out.ctypes.data, max(1, n))
    return out


def _impl(xp):
    def f(c, a, b, *, alpha, ta, tb):
        return gemm_update(alpha, a, ta, b, tb, c)
    return f


def _rule(c: ShapedArray, a: ShapedArray, b: ShapedArray, *, alpha, ta, tb) -> ShapedArray:
    return ShapedArray((a.shape[1 if ta else 0], b.shape[0 if tb else 1]), a.dtype)


gemm_update_p = Primitive("gemm_update", impl=_impl, abstract_eval=_rule, differentiable=False, register=False)


def product_mac(e: Eqn) -> int:
    """Multiply-adds of a gemm_update equation (for the BLAS thread policy)."""
    a = e.invars[1].aval
    k = a.shape[0 if e.params["ta"] else 1]
    return int(np.prod(e.outvars[0].aval.shape)) * k


def _product(e: Eqn, dt):
    """(ta, tb) when e is a 2-D dot_general of dtype dt that is one matmul, else None."""
    if e is None or e.prim.name != "dot_general":
        return None
    p = e.params
    pt = p.get("preferred_element_type")
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    a, b = e.invars
    if (pt is not None and np.dtype(pt) != dt) or lb or rb or a.aval.ndim != 2 or b.aval.ndim != 2 \
            or a.aval.dtype != dt or b.aval.dtype != dt or a.aval.shape[lc[0]] == 0:
        return None
    return tuple(lc) == (0,), tuple(rc) == (1,)


def _numpy_broadcast(e: Eqn) -> bool:
    """Whether broadcast_in_dim e is NumPy's broadcasting of its operand (trailing dimensions)."""
    x = tuple(e.invars[0].aval.shape)
    shape, dims = tuple(e.params["shape"]), tuple(e.params["broadcast_dimensions"])
    return dims == tuple(range(len(shape) - len(x), len(shape))) and \
        all(d == 1 or d == shape[i] for d, i in zip(x, dims))


def fuse_updates(jaxpr: Jaxpr) -> Jaxpr:
    """Each `c -/+ s * dot(a, b)`, `c + dot(a, b)` (either order) as one gemm_update (see the module
    docstring), where the product and its scaled copy are read nowhere else, c broadcasts to the product's
    shape, s is a uniform constant and the product has at least MIN_SIZE elements. The equation takes the
    product's place (the update's, when c is computed after the product)."""
    if not available() or not any(e.prim.name == "dot_general" for e in jaxpr.eqns):
        return jaxpr
    eqns = jaxpr.eqns
    prod = producers(eqns)
    pos = {id(e): i for i, e in enumerate(eqns)}
    uses: dict = {}
    for e in eqns:
        for v in e.invars:
            uses[v] = uses.get(v, 0) + 1
    for v in jaxpr.outvars:
        uses[v] = uses.get(v, 0) + 2
    const_val = dict(zip(jaxpr.constvars, jaxpr.consts))

    def single(v):
        return isinstance(v, Var) and uses.get(v) == 1

    def scaled_product(t, dt):
        """(dot eqn, scale, eqns to drop) when t is dot(a, b) or s * dot(a, b)."""
        if not single(t):
            return None
        e = prod.get(t)
        if _product(e, dt) is not None:
            return e, 1.0, [e]
        if e is None or e.prim.name != "mul" or e.params:
            return None
        for s, d in (e.invars, e.invars[::-1]):
            if s in const_val and s.aval.dtype == dt and single(d) and _product(prod.get(d), dt) is not None \
                    and tuple(d.aval.shape) == tuple(t.aval.shape):
                u = uniform_value(const_val[s], limit=1)
                if u is not None:
                    return prod[d], float(u), [e, prod[d]]
        return None

    at, drop = {}, set()
    for i, e in enumerate(eqns):
        if e.prim.name not in ("add", "sub") or e.params or len(e.invars) != 2:
            continue
        out = e.outvars[0].aval
        dt = np.dtype(out.dtype)
        if dt not in (np.float32, np.float64) or out.size < MIN_SIZE:
            continue
        x, y = e.invars
        cands = [(x, y, -1.0)] if e.prim.name == "sub" else [(x, y, 1.0), (y, x, 1.0)]
        for c, t, sign in cands:
            if not isinstance(c, Var) or c.aval.dtype != dt or tuple(t.aval.shape) != tuple(out.shape) or \
                    np.broadcast_shapes(tuple(c.aval.shape), tuple(out.shape)) != tuple(out.shape):
                continue
            hit = scaled_product(t, dt)
            if hit is None or any(id(d) in drop for d in hit[2]):
                continue
            dot, scale, gone = hit
            alpha = sign * scale
            if alpha == 0 or not np.isfinite(alpha) or c in dot.outvars:
                continue
            pc = prod.get(c)
            if pc is not None and pc.prim.name == "broadcast_in_dim" and single(c) and \
                    _numpy_broadcast(pc) and id(pc) not in drop:
                gone = gone + [pc]  # copyto broadcasts the operand itself (a bias row)
                c = pc.invars[0]
            ta, tb = _product(dot, dt)
            new = Eqn(gemm_update_p, [c, dot.invars[0], dot.invars[1]], [e.outvars[0]],
                      {"alpha": alpha, "ta": ta, "tb": tb})
            pc = prod.get(c)
            where = pos[id(dot)] if pc is None or pos[id(pc)] < pos[id(dot)] else i
            at[where] = new
            drop.update(id(d) for d in gone)
            drop.add(id(e))
            break
    if not at:
        return jaxpr
    out_eqns = []
    for i, e in enumerate(eqns):
        if i in at:
            out_eqns.append(at[i])
        if id(e) not in drop:
            out_eqns.append(e)
    return rebuild(jaxpr, out_eqns)


__all__ = ["gemm_update_p", "gemm_update", "fuse_updates", "available", "product_mac", "MIN_SIZE"]
