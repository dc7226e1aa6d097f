"""lax.custom_root and lax.custom_linear_solve: solvers differentiated implicitly (by the implicit
function theorem), not through their iterations.

Reverse mode: the arrays that `f` / `matvec` close over are made explicit with closure_convert, so they
receive cotangents, as does the right-hand side b. The solvers' own closures are made explicit too (so
traced values may appear in them) but get zero cotangents: by the implicit function theorem the
solution depends on them only through f / matvec. (Forward mode is not provided: these are custom_vjp
functions.)
"""
from __future__ import annotations

from typing import Callable

from .._jax.api import closure_convert
from .._src.core.tree_util import tree_map
from .._src.prims.elementwise import zeros_like
from .._src.interpreters.ad import vjp
from .._src.interpreters.custom import custom_vjp

__all__ = ["custom_root", "custom_linear_solve"]


def _neg(tree):
    return tree_map(lambda v: -v, tree)


def _zeros(xs):
    return tuple(zeros_like(x) for x in xs)


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable, has_aux: bool = False):
    """x = solve(f, initial_guess), a root of f, with dx/dparams from f(x, params) = 0: the cotangent
    lambda solves J^T lambda = g through tangent_solve(J^T, g) (J = df/dx at the root), and the arrays f
    closes over get -lambda^T df/dparams."""
    f_conv, f_cs = closure_convert(f, initial_guess)
    s_conv, s_cs = closure_convert(lambda x0: solve(f, x0), initial_guess)
    nf = len(f_cs)

    @custom_vjp
    def root(x0, *cs):
        return s_conv(x0, *cs[nf:])

    def fwd(x0, *cs):
        out = root(x0, *cs)
        return out, (out[0] if has_aux else out, x0, cs)

    def bwd(res, ct):
        x, x0, cs = res
        g = ct[0] if has_aux else ct
        fcs = cs[:nf]
        _, pull_x = vjp(lambda v: f_conv(v, *fcs), x)
        lam = tangent_solve(lambda u: pull_x(u)[0], g)
        ct_f = ()
        if fcs:
            _, pull_c = vjp(lambda *c: f_conv(x, *c), *fcs)
            ct_f = tuple(pull_c(_neg(lam)))
        return (zeros_like(x0), *ct_f, *_zeros(cs[nf:]))

    root.defvjp(fwd, bwd)
    return root(initial_guess, *f_cs, *s_cs)


def custom_linear_solve(matvec: Callable, b, solve: Callable, transpose_solve: Callable | None = None,
                        symmetric: bool = False, has_aux: bool = False):
    """x = solve(matvec, b) for the linear map matvec, differentiated implicitly: the cotangent of b is
    lambda = transpose_solve(vecmat, g) (solve(matvec, g) when symmetric), and the arrays matvec closes
    over get -lambda^T d(matvec(x))/dparams."""
    mv_conv, m_cs = closure_convert(matvec, b)
    s_conv, s_cs = closure_convert(lambda r: solve(matvec, r), b)
    nm, ns = len(m_cs), len(s_cs)
    if transpose_solve is not None:
        def vecmat(u):
            return vjp(matvec, zeros_like(b))[1](u)[0]
        t_conv, t_cs = closure_convert(lambda r: transpose_solve(vecmat, r), b)
    else:
        t_conv, t_cs = None, []

    @custom_vjp
    def lin(rhs, *cs):
        return s_conv(rhs, *cs[nm:nm + ns])

    def fwd(rhs, *cs):
        out = lin(rhs, *cs)
        return out, (out[0] if has_aux else out, cs)

    def bwd(res, ct):
        x, cs = res
        g = ct[0] if has_aux else ct
        if symmetric:
            lam = s_conv(g, *cs[nm:nm + ns])
        elif t_conv is not None:
            lam = t_conv(g, *cs[nm + ns:])
        else:
            raise TypeError("custom_linear_solve: transpose_solve is required for reverse-mode "
                            "differentiation unless symmetric=True")
        ct_m = ()
        if nm:
            _, pull_c = vjp(lambda *c: mv_conv(x, *c), *cs[:nm])
            ct_m = tuple(pull_c(_neg(lam)))
        return (lam, *ct_m, *_zeros(cs[nm:]))

    lin.defvjp(fwd, bwd)
    return lin(b, *m_cs, *s_cs, *t_cs)
