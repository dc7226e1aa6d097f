"""torch.optim.LBFGS: limited-memory BFGS driven by a closure, with an optional strong-Wolfe line search.

The only optimiser without a pure update in funcgrad.optim.functional: each step re-evaluates the closure
an input-dependent number of times, so it is a stateful loop over the flattened parameters. Scalars
(dot products, step lengths) stay 0-d tensors of the parameters' dtype where torch keeps them so, so
trajectories agree with torch's to float rounding.
"""
from __future__ import annotations

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..autograd import enable_grad as _enable_grad, no_grad as _no_grad

from .optimizer import Optimizer, _lr

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, slope g1) and (x2, f2, slope g2), clipped to `bounds`
    (default: the interval between x1 and x2); the interval midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if not disc >= 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt() if isinstance(disc, _fg.Tensor) else disc ** 0.5
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d from x for a step t meeting the strong Wolfe conditions (bracketing, then zoom
    by safeguarded cubic interpolation). Returns (f, flat grad, t, number of evaluations)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    # phase 1: expand until the minimiser is bracketed (or the conditions already hold)
    while it < max_ls:
        if f_new > (f + c1 * t * gtd) or (it > 1 and f_new >= f_prev):
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, br_f, br_g, done = [t], [f_new], [g_new], True
            break
        if gtd_new >= 0:
            br, br_f, br_g, br_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        t_next = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
    if it == max_ls:
        br, br_f, br_g = [0, t], [f, f_new], [g, g_new]

    # phase 2: zoom into the bracket
    stalled = False
    lo, hi = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        top, bot = max(br), min(br)
        eps = 0.1 * (top - bot)
        if min(top - t, t - bot) < eps:
            # too close to an end: after one such try (or when outside), move eps inside the bracket
            if stalled or t >= top or t <= bot:
                t = top - eps if abs(t - top) < abs(t - bot) else bot + eps
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
        if f_new > (f + c1 * t * gtd) or f_new >= br_f[lo]:
            br[hi], br_f[hi], br_g[hi], br_gtd[hi] = t, f_new, g_new.clone(), gtd_new
            lo, hi = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[hi] - br[lo]) >= 0:
                br[hi], br_f[hi], br_g[hi], br_gtd[hi] = br[lo], br_f[lo], br_g[lo], br_gtd[lo]
            br[lo], br_f[lo], br_g[lo], br_gtd[lo] = t, f_new, g_new.clone(), gtd_new
    return br_f[lo], br_g[lo], br[lo], evals


class LBFGS(Optimizer):
    """torch.optim.LBFGS. One parameter group only; `step(closure)` needs a closure that recomputes the loss
    (zeroing and filling the gradients) and returns it."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        lr = _lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # --- the flat view of all parameters ------------------------------------------------------------------
    def _flat_grad(self):
        return _fg.cat([p.grad.reshape(-1) if p.grad is not None else _fg.zeros(p.numel(), dtype=p.dtype)
                        for p in self._params], 0)

    def _add_dir(self, t, d) -> None:
        """params += t * d (d flat over all parameters)."""
        t = float(t)
        off = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[off:off + n].view_as(p), alpha=t)
            off += n

    def _evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are left at x."""
        self._add_dir(t, d)
        with _enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        for p, v in zip(self._params, x):
            p.copy_(v)
        return loss, g

    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that reevaluates the model and returns the loss")
        with _no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history = group["line_search_fn"], group["history_size"]
        if line_search is not None and line_search != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")

        st = self.state[self._params[0]]
        st.setdefault("func_evals", 0)
        st.setdefault("n_iter", 0)
        with _enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        st["func_evals"] += 1
        g = self._flat_grad()
        if g.abs().max() <= tol_grad:
            return orig_loss

        d, t = st.get("d"), st.get("t")
        dirs, steps, ro = st.get("old_dirs"), st.get("old_stps"), st.get("ro")
        h_diag, prev_g, prev_loss = st.get("H_diag"), st.get("prev_flat_grad"), st.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d = g.neg()
                dirs, steps, ro = [], [], []
                h_diag = 1
            else:
                # update the curvature pairs, then the two-loop recursion for d = -H g
                y = g.sub(prev_g)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0)
                        steps.pop(0)
                        ro.pop(0)
                    dirs.append(y)
                    steps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                al = st.setdefault("al", [None] * history)
                q = g.neg()
                for i in range(len(dirs) - 1, -1, -1):
                    al[i] = steps[i].dot(q) * ro[i]
                    q.add_(dirs[i], alpha=-float(al[i]))
                d = r = q * h_diag
                for i in range(len(dirs)):
                    be_i = dirs[i].dot(r) * ro[i]
                    r.add_(steps[i], alpha=float(al[i] - be_i))
            prev_g = g.clone() if prev_g is None else prev_g.copy_(g)
            prev_loss = loss

            t = min(1.0, 1.0 / g.abs().sum()) * lr if st["n_iter"] == 1 else lr
            gtd = g.dot(d)
            if gtd > -tol_change:
                break

            ls_evals = 0
            if line_search is not None:
                x0 = [p.clone() for p in self._params]
                loss, g, t, ls_evals = _strong_wolfe(lambda x, s, dd: self._evaluate(closure, x, s, dd),
                                                     x0, t, d, loss, g, gtd)
                self._add_dir(t, d)
                converged = g.abs().max() <= tol_grad
            else:
                self._add_dir(t, d)
                converged = False
                if n_iter != max_iter:
                    with _enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    converged = g.abs().max() <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            st["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval or converged:
                break
            if d.mul(t).abs().max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        st.update(d=d, t=t, old_dirs=dirs, old_stps=steps, ro=ro, H_diag=h_diag, prev_flat_grad=prev_g,
                  prev_loss=prev_loss)
        return orig_loss
