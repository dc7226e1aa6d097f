"""funcgrad.scipy.optimize: minimize(fun, x0, args=(), method="BFGS", tol=None, options=None), as
jax.scipy.optimize.minimize (BFGS only; returns OptimizeResults with JAX's fields)."""
from __future__ import annotations

from typing import Callable

from ._bfgs import OptimizeResults, minimize_bfgs

__all__ = ["minimize", "OptimizeResults"]


def minimize(fun: Callable, x0, args=(), *, method: str, tol: float | None = None,
             options: dict | None = None) -> OptimizeResults:
    """Minimise fun(x, *args) over a 1-d x from x0. method must be "BFGS" (case-insensitive).
    options: maxiter (default 200 * x0.size), norm (default inf), gtol (default 1e-5; `tol` sets it
    too), line_search_maxiter (default 20 backtracking halvings)."""
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"minimize: method {method!r} is not supported; funcgrad offers 'BFGS'")
    options = dict(options or {})
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown options {sorted(unknown)}")
    if tol is not None:
        options.setdefault("gtol", tol)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    return minimize_bfgs(lambda x: fun(x, *args), x0, **options)
