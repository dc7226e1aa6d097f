"""jax.experimental.ode.odeint: adaptive Dormand-Prince (RK45) integration of dy/dt = func(y, t, *args),
differentiable in reverse mode by the adjoint method (the augmented system integrated backwards in
time, Chen et al. 2018, appendix C).

Step control follows Hairer, Norsett & Wanner (Solving ODEs I, sec. II.4): an RMS error ratio against
atol + rtol * max(|y0|, |y1|), the step scaled by clip(0.9 * ratio^(-1/5), 0.2, 10), and between steps
a quartic through the step's ends and its Dormand-Prince midpoint gives the solution at the requested
times. This is the scheme JAX uses, so results agree with it to the tolerances.
"""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from .. import numpy as jnp
from .._jax.api import closure_convert
from .._src.core.tree_util import tree_leaves, tree_map
from ..flatten_util import ravel_pytree
from .._src.control.scan import scan as _scan
from .._src.control.while_loop import while_loop as _while_loop
from .._src.interpreters import custom_vjp, jit, vjp, vmap

__all__ = ["odeint"]

# the Dormand-Prince 5(4) tableau: stage times, stage weights, the 5th-order solution, and the
# difference between it and the embedded 4th-order one (the local error estimate)
_C = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]
_A = [[1 / 5],
      [3 / 40, 9 / 40],
      [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
      [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_B = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0]
_E = [35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
      -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60]
# weights of the stages for the solution at the middle of a step (Shampine's dense output)
_MID = [6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2, -2691868925 / 45128329728 / 2,
        187940372067 / 1594534317056 / 2, -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2]


def _combine(weights, ks):
    """sum_i weights[i] * ks[i] over the nonzero weights."""
    out = None
    for w, k in zip(weights, ks):
        if w != 0.0:
            term = w * k
            out = term if out is None else out + term
    return out


def _dopri_step(f, y, fy, t, dt):
    """One step from (t, y) with f(y, t) = fy: (y1, f(y1), error estimate, the 7 stage slopes)."""
    ks = [fy]
    for c, a in zip(_C, _A):
        ks.append(f(y + dt * _combine(a, ks), t + c * dt))
    y1 = y + dt * _combine(_B, ks)
    return y1, ks[-1], dt * _combine(_E, ks), ks


def _quartic(y0, y1, ks, dt):
    """Coefficients (highest power first) of the quartic in s = (t - t0) / dt through y0 and y1, with
    the step's end slopes and its midpoint value."""
    y_mid = y0 + dt * _combine(_MID, ks)
    dy0, dy1 = dt * ks[0], dt * ks[-1]
    a = -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.stack([a, b, c, dy0, y0])


def _error_ratio(err, rtol, atol, y0, y1):
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean(jnp.abs(err / tol.astype(err.dtype)) ** 2))


def _next_step(dt, ratio):
    shrink = jnp.where(ratio < 1, 1.0, 0.2)
    factor = jnp.minimum(10.0, jnp.maximum(ratio ** (-1.0 / 5.0) * 0.9, shrink))
    return jnp.where(ratio == 0, dt * 10.0, dt * factor)


def _first_step(f, t0, y0, f0, rtol, atol, order=4):
    scale = (atol + jnp.abs(y0) * rtol).astype(y0.dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """The solution of dy/dt = func(y, t, *args), y(t[0]) = y0, at each time in `t` (increasing): a
    pytree shaped like y0 with a leading axis of len(t). `args` (arrays or scalars, in pytrees) and
    the values func closes over can be differentiated; `mxstep` bounds the steps between two outputs
    and `hmax` the step size."""
    for a in tree_leaves(args):
        if not isinstance(a, (int, float, complex, np.ndarray, np.generic)) and not hasattr(a, "dtype"):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {a}.")
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _solve(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    flat_y0, unravel = ravel_pytree(y0)

    def flat_func(y, t, *a):
        return ravel_pytree(func(unravel(y), t, *a))[0]

    ys = _integrate(flat_func, rtol, atol, mxstep, hmax, flat_y0, ts, *args)
    return vmap(unravel)(ys)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _integrate(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    f = lambda y, t: func(y, t, *args)  # noqa: E731

    def to_output_time(carry, target):
        def keep_going(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, ks = _dopri_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeffs = _quartic(y, y1, ks, dt)
            dt_next = jnp.clip(_next_step(dt, ratio), 0.0, hmax)
            accept = ratio <= 1.0
            taken = [i + 1, y1, f1, t + dt, dt_next, t, new_coeffs]
            kept = [i + 1, y, fy, t, dt_next, last_t, coeffs]
            return [jnp.where(accept, a, b) for a, b in zip(taken, kept)]

        _, *carry = _while_loop(keep_going, step, [0] + carry)
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return carry, jnp.polyval(coeffs, s.astype(coeffs.dtype))

    f0 = f(y0, ts[0])
    dt = jnp.clip(_first_step(f, ts[0], y0, f0, rtol, atol), 0.0, hmax)
    init = [y0, f0, ts[0], dt, ts[0], jnp.stack([y0] * 5)]
    _, ys = _scan(to_output_time, init, ts[1:])
    return jnp.concatenate([y0[None], ys])


def _integrate_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _integrate(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _integrate_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def augmented(state, minus_t, *a):
        # the state, its adjoint, and the accumulated time and argument cotangents, run in reversed
        # time (s = -t)
        y, y_bar = state[0], state[1]
        y_dot, pull = vjp(func, y, -minus_t, *a)
        return (-y_dot, *pull(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.real(jnp.dot(func(ys[i], ts[i], *args), g[i]))  # moving the output time
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(augmented, (ys[i], y_bar, t0_bar, args_bar),
                                            jnp.stack([-ts[i], -ts[i - 1]]), *args,
                                            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(operator.itemgetter(1), (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = _scan(back_one_interval, init,
                                                    jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([t0_bar[None], rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_integrate.defvjp(_integrate_fwd, _integrate_bwd)
