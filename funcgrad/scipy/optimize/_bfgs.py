"""BFGS for funcgrad.scipy.optimize.minimize, written with lax.while_loop so it runs eagerly and under
jit (and vmap over starting points).

Each iteration takes the quasi-Newton direction d = -H g, finds a step by backtracking from 1 until
the Armijo condition f(x + a d) <= f(x) + c1 a g.d holds (at most `line_search_maxiter` halvings;
the first step is scaled to move no coordinate by more than 1),
and updates the inverse-Hessian estimate H with the BFGS formula when the curvature s.y is positive.
Stops when the gradient's norm (`norm`, default inf) is below gtol (status 0), after maxiter
iterations (status 1), or when no step decreases f (status 3, success False).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from ... import numpy as jnp
from ..._src.control.while_loop import while_loop
from ..._src.interpreters.ad import value_and_grad


class OptimizeResults(NamedTuple):
    """The result of minimize, with JAX's fields."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


class _State(NamedTuple):
    k: object
    x: object
    f: object
    g: object
    H: object
    status: object  # -1 running, 0 converged, 1 maxiter, 3 line search failed
    nfev: object
    njev: object


def _norm(g, order):
    if order == jnp.inf:
        return jnp.max(jnp.abs(g))
    return jnp.sum(jnp.abs(g) ** order) ** (1.0 / order)


def minimize_bfgs(fun: Callable, x0, maxiter=None, norm=jnp.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 20, c1: float = 1e-4) -> OptimizeResults:
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be one-dimensional, got shape {x0.shape}")
    if not jnp.issubdtype(x0.dtype, jnp.floating):
        x0 = x0.astype(jnp.result_type(float))
    n = x0.shape[0]
    maxiter = 200 * n if maxiter is None else int(maxiter)
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    dt = x0.dtype
    eye = jnp.eye(n, dtype=dt)
    init = _State(jnp.asarray(0), x0, f0, g0, eye,
                  jnp.where(_norm(g0, norm) < gtol, 0, -1), jnp.asarray(1), jnp.asarray(1))

    def cond(s):
        return s.status < 0

    def line_search(x, f, g, d, a0):
        slope = jnp.dot(g, d)

        def ls_cond(c):
            a, fa, ga, i, ok = c
            return (~ok) & (i < line_search_maxiter)

        def ls_body(c):
            a, _, _, i, _ = c
            a = jnp.where(i == 0, a, a * 0.5)
            fa, ga = vg(x + a * d)
            ok = jnp.isfinite(fa) & (fa <= f + c1 * a * slope)
            return a, fa, ga, i + 1, ok
        return while_loop(ls_cond, ls_body, (a0, f, g, jnp.asarray(0), jnp.asarray(False)))

    def body(s):
        d = -(s.H @ s.g)
        d = jnp.where(jnp.dot(s.g, d) < 0, d, -s.g)  # keep a descent direction
        # the first step (H = I) is scaled so that it moves no coordinate by more than 1
        a0 = jnp.where(s.k == 0, jnp.minimum(1.0, 1.0 / jnp.maximum(jnp.max(jnp.abs(d)), 1e-300)), 1.0).astype(dt)
        a, f1, g1, evals, ok = line_search(s.x, s.f, s.g, d, a0)
        step = a * d
        x1 = jnp.where(ok, s.x + step, s.x)
        y = g1 - s.g
        sy = jnp.dot(step, y)
        rho = jnp.where(sy > 0, 1.0 / jnp.where(sy > 0, sy, 1.0), 0.0)
        V = eye - rho * jnp.outer(step, y)
        H1 = jnp.where(ok & (sy > 0), V @ s.H @ V.T + rho * jnp.outer(step, step), s.H)
        f1 = jnp.where(ok, f1, s.f)
        g1 = jnp.where(ok, g1, s.g)
        k = s.k + 1
        status = jnp.where(~ok, 3, jnp.where(_norm(g1, norm) < gtol, 0, jnp.where(k >= maxiter, 1, -1)))
        return _State(k, x1, f1, g1, H1, status, s.nfev + evals, s.njev + evals)

    s = while_loop(cond, body, init)
    return OptimizeResults(x=s.x, success=s.status == 0, status=s.status, fun=s.f, jac=s.g, hess_inv=s.H,
                           nfev=s.nfev, njev=s.njev, nit=s.k)
