"""Numerical derivative checks: check_grads, check_jvp and check_vjp (JAX's meaning).

Forward mode is checked against central finite differences along a random direction; reverse mode
through the identity <u, J v> == <J^T u, v>, with J v from finite differences and J^T u from the vjp.
Defaults for the step and the tolerances follow the least precise inexact dtype among the inputs and
outputs. Everything is compared on the host in float64 (complex128).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .._src.core import dtypes
from .._src.core.array import ArrayBase, to_array, wrap
from .._src.core.tree_util import tree_flatten, tree_unflatten
from .._src.interpreters.ad import jvp, vjp

# Finite-difference step and default atol = rtol, per precision (complex dtypes use their parts').
_EPS = {"float16": 3e-2, "bfloat16": 1e-1, "float32": 1e-3, "float64": 1e-5}
_TOL = {"float16": 2e-2, "bfloat16": 1e-1, "float32": 2e-3, "float64": 1e-5}
_RANK = ["bfloat16", "float16", "float32", "float64"]  # least precise first

# Above this many input elements a failed reverse-mode check reports the inner products only;
# below it, the expected cotangent is rebuilt element by element to name the worst entry.
_ELEMENTWISE_REPORT_LIMIT = 256


# --- small host-side helpers ----------------------------------------------------------------------

def _precision(dt) -> str | None:
    """'float16' | 'bfloat16' | 'float32' | 'float64' for an inexact dtype, else None."""
    dt = np.dtype(dt)
    if dtypes.bfloat16 is not None and dt == dtypes.bfloat16:
        return "bfloat16"
    if dt.kind == "c":
        return "float32" if dt.itemsize == 8 else "float64"
    if dt.kind == "f":
        return {2: "float16", 4: "float32"}.get(dt.itemsize, "float64")
    return None


def _inexact(x) -> bool:
    return _precision(x.dtype) is not None


def _host(x) -> np.ndarray:
    """x as a float64/complex128 (or its own non-inexact dtype) NumPy array."""
    a = np.asarray(x)
    if _precision(a.dtype) is None:
        return a
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def _as_leaf(x) -> ArrayBase:
    return x if isinstance(x, ArrayBase) else to_array(x, copy=False)


def _like(ref: ArrayBase, values: np.ndarray) -> ArrayBase:
    """A concrete Array with ref's dtype and weak type holding `values`."""
    return wrap(np.asarray(values).astype(ref.dtype), bool(getattr(ref, "weak_type", False)))


def _zeros_like(ref: ArrayBase) -> ArrayBase:
    return wrap(np.zeros(ref.shape, ref.dtype), bool(getattr(ref, "weak_type", False)))


def _random(rng: np.random.Generator, ref: ArrayBase) -> np.ndarray:
    if ref.dtype.kind == "c":
        return (rng.standard_normal(ref.shape) + 1j * rng.standard_normal(ref.shape)) / np.sqrt(2)
    return rng.standard_normal(ref.shape)


def _unit_roundoff(dt) -> float:
    return {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23,
            "float64": 2.0 ** -52}[_precision(dt)]


def _least_precise(leaves) -> str | None:
    found = [p for p in (_precision(x.dtype) for x in leaves) if p is not None]
    return min(found, key=_RANK.index) if found else None


def _defaults(leaves, eps, atol, rtol):
    prec = _least_precise(leaves) or "float64"
    return (_EPS[prec] if eps is None else eps, _TOL[prec] if atol is None else atol,
            _TOL[prec] if rtol is None else rtol)


def _inner(xs, ys) -> float:
    """Re sum(conj(x) * y) over matching leaves."""
    return float(sum(np.real(np.vdot(_host(x).ravel(), _host(y).ravel())) for x, y in zip(xs, ys)))


def _fail(label: str, order: int, detail: str) -> None:
    raise AssertionError(f"{label}, order {order}: {detail}")


def _num(x) -> str:
    return repr(np.asarray(x).item())


def _fmt_index(idx) -> str:
    return "()" if idx == () else str(tuple(int(i) for i in idx))


# --- perturbation and finite differences ----------------------------------------------------------

def _perturb(rng, in_leaves, eps):
    """For each leaf: (tangent, x + eps*t, x - eps*t); non-inexact leaves get a zero tangent.

    The tangent handed to the AD side is the perturbation actually representable in the leaf's
    dtype, ((x + eps*t) - (x - eps*t)) / (2*eps), so low precision loses nothing at the inputs.
    """
    tangents, plus, minus = [], [], []
    for x in in_leaves:
        if not _inexact(x):
            tangents.append(_zeros_like(x))
            plus.append(x)
            minus.append(x)
            continue
        h, t = _host(x), _random(rng, x)
        xp, xm = _like(x, h + eps * t), _like(x, h - eps * t)
        t_eff = (_host(xp) - _host(xm)) / (2 * eps)
        tangents.append(_like(x, t_eff))
        plus.append(xp)
        minus.append(xm)
    return tangents, plus, minus


def _eval_leaves(f, in_tree, leaves):
    out = f(*tree_unflatten(in_tree, leaves))
    o_leaves, o_tree = tree_flatten(out)
    return [_as_leaf(o) for o in o_leaves], o_tree


def _central(f_plus, f_minus, eps):
    """Central differences per output leaf (None for non-inexact leaves) and a rounding allowance."""
    diffs, round_off = [], []
    for a, b in zip(f_plus, f_minus):
        if not _inexact(a):
            diffs.append(None)
            round_off.append(None)
            continue
        ha, hb = _host(a), _host(b)
        diffs.append((ha - hb) / (2 * eps))
        # Each output is rounded to its dtype: the difference quotient inherits that error / eps.
        u = _unit_roundoff(a.dtype)
        round_off.append(u * (np.abs(ha) + np.abs(hb)) / (2 * eps))
    return diffs, round_off


# --- the checks -----------------------------------------------------------------------------------

def _check_close(label, order, what, expected, got, atol, rtol, extra=None):
    """Elementwise |got - expected| <= atol + rtol*|expected| (+ extra) over matching leaves."""
    worst = None
    n_bad = n_all = 0
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is None:
            continue
        g = _host(g)
        if g.shape != e.shape:
            _fail(label, order, f"{what}: output leaf {i} has shape {g.shape}, expected {e.shape}")
        err = np.abs(g - e)
        allowed = atol + rtol * np.abs(e)
        if extra is not None and extra[i] is not None:
            allowed = allowed + extra[i]
        bad = ~(err <= allowed)  # NaN counts as a mismatch
        n_bad += int(bad.sum())
        n_all += err.size
        if bad.any():
            ratio = np.where(np.isnan(err), np.inf, err / np.maximum(allowed, 1e-300))
            j = np.unravel_index(int(np.argmax(ratio)), err.shape)
            r = float(ratio[j])
            if worst is None or r > worst[0]:
                worst = (r, i, j, e[j], g[j], err[j], allowed[j])
    if worst is not None:
        _, i, j, e, g, err, allowed = worst
        leaf = f"output leaf {i}, " if len(expected) > 1 else ""
        _fail(label, order, f"{what}: {n_bad} of {n_all} elements mismatch; worst at {leaf}index "
                            f"{_fmt_index(j)}: expected {_num(e)}, got {_num(g)} (abs error {err:.3g}, allowed "
                            f"{allowed:.3g}; atol={atol:g}, rtol={rtol:g})")


def _check_primal(label, order, out_leaves, ref_leaves, atol, rtol):
    if len(out_leaves) != len(ref_leaves):
        _fail(label, order, f"returned {len(out_leaves)} output leaves but f returns {len(ref_leaves)}")
    exp = [_host(r) if _inexact(r) else None for r in ref_leaves]
    _check_close(label, order, "primal output differs from f(*args)", exp, out_leaves, atol, rtol)
    for i, (o, r) in enumerate(zip(out_leaves, ref_leaves)):
        if not _inexact(r) and not np.array_equal(np.asarray(o), np.asarray(r)):
            _fail(label, order, f"primal output leaf {i} ({r.dtype}) differs from f(*args)")


def _reference(f, args, eps, atol, rtol):
    """args flattened to leaves (with their tree), f's output leaves and tree there, and the tolerances
    (eps, atol, rtol) with the defaults for those dtypes filled in."""
    in_leaves, in_tree = tree_flatten(tuple(args))
    in_leaves = [_as_leaf(x) for x in in_leaves]
    ref, out_tree = _eval_leaves(f, in_tree, in_leaves)
    return in_leaves, in_tree, ref, out_tree, _defaults(in_leaves + ref, eps, atol, rtol)


def _central_difference(f, in_tree, plus, minus, eps):
    """(f(plus) - f(minus)) / 2 eps per output leaf, with its round-off bound (_central)."""
    return _central(_eval_leaves(f, in_tree, plus)[0], _eval_leaves(f, in_tree, minus)[0], eps)


def _jvp_impl(f, f_jvp, args, eps, atol, rtol, label, order):
    in_leaves, in_tree, ref, _, (eps, atol, rtol) = _reference(f, args, eps, atol, rtol)
    rng = np.random.default_rng(0)
    tangents, plus, minus = _perturb(rng, in_leaves, eps)
    out, t_out = f_jvp(tree_unflatten(in_tree, in_leaves), tree_unflatten(in_tree, tangents))
    out_leaves = [_as_leaf(o) for o in tree_flatten(out)[0]]
    t_leaves = [_as_leaf(t) for t in tree_flatten(t_out)[0]]
    _check_primal(label, order, out_leaves, ref, atol, rtol)
    if len(t_leaves) != len(out_leaves):
        _fail(label, order, f"{len(t_leaves)} tangent leaves for {len(out_leaves)} outputs")
    for i, (o, t) in enumerate(zip(out_leaves, t_leaves)):
        if tuple(t.shape) != tuple(o.shape) or (_inexact(o) and t.dtype != o.dtype):
            _fail(label, order, f"tangent output leaf {i} is {t.dtype}{list(t.shape)} but the primal "
                                f"output is {o.dtype}{list(o.shape)}")
    expected, round_off = _central_difference(f, in_tree, plus, minus, eps)
    _check_close(label, order, f"tangent output does not match central finite differences "
                               f"(eps={eps:g})", expected, t_leaves, atol, rtol, round_off)


def _vjp_impl(f, f_vjp, args, eps, atol, rtol, label, order):
    in_leaves, in_tree, ref, out_tree, (eps, atol, rtol) = _reference(f, args, eps, atol, rtol)
    rng = np.random.default_rng(0)
    out, pullback = f_vjp(*tree_unflatten(in_tree, in_leaves))
    out_leaves = [_as_leaf(o) for o in tree_flatten(out)[0]]
    _check_primal(label, order, out_leaves, ref, atol, rtol)
    tangents, plus, minus = _perturb(rng, in_leaves, eps)
    jv, round_off = _central_difference(f, in_tree, plus, minus, eps)
    cts = [_like(o, _random(rng, o)) if _inexact(o) else _zeros_like(o) for o in out_leaves]
    # JAX's convention: J^T u is conj(vjp(conj(u))), equal to vjp(u) for real functions.
    ct_in = pullback(tree_unflatten(out_tree, [_like(c, np.conj(_host(c))) if _inexact(c) else c
                                               for c in cts]))
    ct_leaves = tree_flatten(tuple(ct_in) if isinstance(ct_in, list) else ct_in)[0]
    if len(ct_leaves) != len(in_leaves):
        _fail(label, order, f"the vjp returned {len(ct_leaves)} cotangent leaves for {len(in_leaves)} "
                            "input leaves")
    ct_leaves = [_as_leaf(c) for c in ct_leaves]
    for i, (x, c) in enumerate(zip(in_leaves, ct_leaves)):
        if _inexact(x) and (tuple(c.shape) != tuple(x.shape) or c.dtype != x.dtype):
            _fail(label, order, f"cotangent for input leaf {i} is {c.dtype}{list(c.shape)} but the input "
                                f"is {x.dtype}{list(x.shape)}")
    diff_in = [i for i, x in enumerate(in_leaves) if _inexact(x)]
    jt_u = [np.conj(_host(ct_leaves[i])) for i in diff_in]
    v = [_host(tangents[i]) for i in diff_in]
    ip = _inner(v, jt_u)                                   # <v, J^T u>
    outs = [i for i, e in enumerate(jv) if e is not None]
    u = [_host(cts[i]) for i in outs]
    ip_expected = _inner([jv[i] for i in outs], u)         # <J v, u>
    # |<u, e>| <= |u| |e| where e bounds the finite-difference error of J v elementwise.
    fd_err = np.sqrt(sum(float(np.sum((atol + rtol * np.abs(jv[i]) + round_off[i]) ** 2)) for i in outs))
    u_norm = np.sqrt(sum(float(np.sum(np.abs(x) ** 2)) for x in u))
    ad_scale = sum(float(np.sum(np.abs(a) * np.abs(b))) for a, b in zip(v, jt_u))
    allowed = u_norm * fd_err + rtol * ad_scale
    err = abs(ip - ip_expected)
    if not err <= allowed:
        detail = (f"<J^T u, v> = {ip!r} from the vjp but <u, J v> = {ip_expected!r} from central finite "
                  f"differences (eps={eps:g}; abs error {err:.3g}, allowed {allowed:.3g})")
        worst = _worst_cotangent(f, in_tree, in_leaves, diff_in, outs, u, jt_u, eps, atol, rtol)
        if worst:
            detail += "; " + worst
        _fail(label, order, detail)


def _worst_cotangent(f, in_tree, in_leaves, diff_in, outs, u, jt_u, eps, atol, rtol) -> str:
    """For small real inputs, J^T u element by element from finite differences: the worst entry."""
    if sum(int(np.prod(in_leaves[i].shape)) for i in diff_in) > _ELEMENTWISE_REPORT_LIMIT or \
            any(in_leaves[i].dtype.kind == "c" for i in diff_in):
        return ""
    worst = None
    for k, i in enumerate(diff_in):
        x = in_leaves[i]
        h = _host(x)
        exp = np.zeros(h.shape, dtype=h.dtype)
        for j in np.ndindex(h.shape):
            hp, hm = h.copy(), h.copy()
            hp[j] += eps
            hm[j] -= eps
            xp, xm = _like(x, hp), _like(x, hm)
            step = (_host(xp) - _host(xm))[j]
            lp, lm = list(in_leaves), list(in_leaves)
            lp[i], lm[i] = xp, xm
            fp, _ = _eval_leaves(f, in_tree, lp)
            fm, _ = _eval_leaves(f, in_tree, lm)
            col = [(_host(fp[o]) - _host(fm[o])) / step for o in outs]
            exp[j] = _inner(col, u)  # (J e_j) . u, the j-th entry of J^T u (real case)
        got = np.real(jt_u[k])
        err = np.abs(got - exp)
        ratio = np.where(np.isnan(err), np.inf, err / (atol + rtol * np.abs(exp)))
        if ratio.size:
            j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
            if worst is None or ratio[j] > worst[0]:
                worst = (ratio[j], i, j, exp[j], got[j])
    if worst is None:
        return ""
    _, i, j, e, g = worst
    leaf = f"input leaf {i}, " if len(in_leaves) > 1 else ""
    return (f"worst cotangent entry at {leaf}index {_fmt_index(j)}: expected {_num(e)} (finite differences), "
            f"got {_num(g)}")


# --- public API -----------------------------------------------------------------------------------

def check_jvp(f: Callable, f_jvp: Callable, args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, err_msg: str = "") -> None:
    """Check `f_jvp(primals, tangents) -> (f(*primals), J tangents)` against central finite differences.

    `args` is the tuple of positional arguments (pytrees allowed); tangents are random normal.
    Raises AssertionError naming the worst mismatching element.
    """
    _jvp_impl(f, f_jvp, tuple(args), eps, atol, rtol, err_msg or "check_jvp: forward mode (JVP)", 1)


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, err_msg: str = "") -> None:
    """Check `f_vjp(*args) -> (f(*args), pullback)` through <u, J v> == <J^T u, v>.

    J v comes from central finite differences along a random v; J^T u = pullback(u) for a random u.
    Raises AssertionError with both inner products (and, for small inputs, the worst cotangent entry).
    """
    _vjp_impl(f, f_vjp, tuple(args), eps, atol, rtol, err_msg or "check_vjp: reverse mode (VJP)", 1)


def check_grads(f: Callable, args: Sequence[Any], order: int = 2, modes: Sequence[str] = ("fwd", "rev"),
                eps: float | None = None, atol: float | None = None, rtol: float | None = None) -> None:
    """Check funcgrad's derivatives of `f` at `args` numerically, up to `order`, as jax.test_util does.

    "fwd" checks funcgrad.jvp against central finite differences; "rev" checks funcgrad.vjp against
    finite-difference jvps (<u, J v> == <J^T u, v>). For order > 1 the same checks are applied to the
    derivative functions themselves: (primals, tangents) -> jvp(f, primals, tangents) and
    `args -> vjp(f, *args)[1](f(*args))`. Defaults for eps/atol/rtol follow the least precise inexact
    dtype involved (float64: eps 1e-5, tol 1e-5; float32: 1e-3, 2e-3; float16: 3e-2, 2e-2).
    Raises AssertionError naming the mode, the order, and the worst mismatch.
    """

    modes = (modes,) if isinstance(modes, str) else tuple(modes)
    bad = [m for m in modes if m not in ("fwd", "rev")]
    if bad or not modes:
        raise ValueError(f"check_grads: modes must be a subset of ('fwd', 'rev'), got {modes!r}")
    if order < 1:
        raise ValueError(f"check_grads: order must be >= 1, got {order}")

    def run(f, args, left, path, level):
        if "fwd" in modes:
            what = "JVP" + (f" of {path}" if path else "")
            _jvp_impl(f, lambda p, t: jvp(f, tuple(p), tuple(t)), args, eps, atol, rtol,
                      f"check_grads: forward mode ({what})", level)
            if left > 1:
                run(lambda p, t: jvp(f, tuple(p), tuple(t)), (tuple(args), tuple(args)), left - 1, what,
                    level + 1)
        if "rev" in modes:
            what = "VJP" + (f" of {path}" if path else "")
            _vjp_impl(f, lambda *a: vjp(f, *a), args, eps, atol, rtol,
                      f"check_grads: reverse mode ({what})", level)
            if left > 1:
                def f_vjp(*a):
                    out, pull = vjp(f, *a)
                    return pull(out)
                run(f_vjp, args, left - 1, what, level + 1)

    args = tuple(args)
    if eps is None or atol is None or rtol is None:
        # Fix the defaults from f itself: the derivative functions checked at higher orders may hide
        # a lower precision inside (e.g. the vjp of a float64 -> float32 conversion is float64 -> float64).
        in_leaves = [_as_leaf(x) for x in tree_flatten(args)[0]]
        out_leaves = [_as_leaf(o) for o in tree_flatten(f(*args))[0]]
        eps, atol, rtol = _defaults(in_leaves + out_leaves, eps, atol, rtol)
    run(f, args, order, "", 1)


__all__ = ["check_grads", "check_jvp", "check_vjp"]
