"""funcgrad.scipy.sparse.linalg.cg: conjugate gradients for symmetric (Hermitian) positive-definite A,
given as a matrix or as a function computing A @ x, as jax.scipy.sparse.linalg.cg.

The iteration is a while_loop (it runs under jit and vmap). Derivatives are implicit, not through the
iterations: for x = A^-1 b, the cotangent of b is A^-1 g (another cg solve, A being symmetric) and the
cotangents of the arrays A's function closes over (or of the matrix A) are those of -lambda^T A(x) with
lambda = A^-1 g (found with closure_convert).
"""
from __future__ import annotations

from typing import Callable

from ... import numpy as jnp
from ..._jax.api import closure_convert
from ..._src.control.while_loop import while_loop
from ..._src.interpreters.ad import vjp
from ..._src.interpreters.custom import custom_vjp

__all__ = ["cg"]


def _as_op(A, name) -> Callable:
    if callable(A):
        return A
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"cg: {name} must be a square matrix or a function, got shape {A.shape}")
    return lambda x: A @ x


def _cg_loop(matvec, b, x0, tol, atol, maxiter, M):
    def dot(u, v):
        return jnp.real(jnp.vdot(u, v))
    bs2 = dot(b, b)
    bound2 = jnp.maximum(tol * tol * bs2, atol * atol)
    r0 = b - matvec(x0)
    z0 = M(r0)
    init = (x0, r0, z0, dot(r0, z0), jnp.asarray(0))

    def cond(s):
        _, r, _, _, k = s
        return (dot(r, r) > bound2) & (k < maxiter)

    def body(s):
        x, r, p, gamma, k = s
        Ap = matvec(p)
        alpha = gamma / jnp.vdot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        z = M(r)
        gamma_new = dot(r, z)
        p = z + (gamma_new / gamma) * p
        return x, r, p, gamma_new, k + 1
    return while_loop(cond, body, init)[0]


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None):
    """(x, None): the solution of A x = b by (preconditioned) conjugate gradients, stopping when
    ||b - A x|| <= max(tol ||b||, atol) or after maxiter steps (default 10 * size of b)."""
    b = jnp.asarray(b)
    if b.ndim != 1:
        raise ValueError(f"cg: b must be one-dimensional, got shape {b.shape}")
    if not jnp.issubdtype(b.dtype, jnp.inexact):
        b = b.astype(jnp.result_type(float))
    matvec = _as_op(A, "A")
    precond = (lambda v: v) if M is None else _as_op(M, "M")
    x0 = jnp.zeros_like(b) if x0 is None else jnp.asarray(x0, dtype=b.dtype)
    maxiter = 10 * b.shape[0] if maxiter is None else int(maxiter)
    mv, consts = closure_convert(matvec, b)

    def loop(rhs, cs, start):
        return _cg_loop(lambda v: mv(v, *cs), rhs, start, tol, atol, maxiter, precond)

    @custom_vjp
    def solve(rhs, *cs):
        return loop(rhs, cs, jnp.zeros_like(rhs) if x0 is None else x0)

    def fwd(rhs, *cs):
        x = solve(rhs, *cs)
        return x, (x, cs)

    def bwd(res, g):
        x, cs = res
        lam = loop(g, cs, jnp.zeros_like(g))
        _, pull = vjp(lambda *c: mv(x, *c), *cs)
        ct_cs = pull(-lam) if cs else ()
        return (lam, *ct_cs)

    solve.defvjp(fwd, bwd)
    return solve(b, *consts), None
