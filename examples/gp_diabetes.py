"""Gaussian-process regression on a real data set (scikit-learn's load_diabetes), written as ordinary JAX code.

    pip install -e ".[examples]"        # scikit-learn (the data), tqdm (progress), matplotlib (figures)
    python examples/gp_diabetes.py [--steps N] [--quick] [--restarts R] [--out DIR]

Predicts disease progression a year on from 10 baseline measurements of 442 patients. The GP has an ARD
squared-exponential kernel (one length scale per feature, a signal variance) plus observation noise; its 12
hyperparameters maximise the log marginal likelihood, computed through a Cholesky factorisation. The fit is
what a functional library is for: `value_and_grad` of the likelihood, Adam steps run by `lax.scan` inside
`jit`, and `vmap` over several restarts drawn with random keys, all in one compiled function. The posterior
predictive mean and variance then give the test RMSE, the test log predictive density, and the figures in
--out (default ./gp_diabetes_out): predictions with 95% intervals against the truth, the posterior along the
BMI feature, and the fit's curve. Exits with status 1 if the test RMSE is above --floor (60).
Only the imports differ from JAX (`import jax`, `jax.numpy`, `jax.scipy.linalg`, ...).
"""
from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # small matrices: one BLAS thread is fastest

import argparse  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad as jax  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad import jit, lax, random, value_and_grad, vmap  # noqa: E402
from funcgrad.example_libraries import optimizers  # noqa: E402
from funcgrad.scipy.linalg import cho_solve, solve_triangular  # noqa: E402

try:
    from tqdm import tqdm
except ImportError:
    tqdm = None
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

JITTER = 1e-6


def load_data(seed: int = 0):
    """Standardised features and targets, split 75/25; also the target's mean and scale (to report RMSE in
    the data set's units) and the feature names."""
    try:
        from sklearn.datasets import load_diabetes
        from sklearn.model_selection import train_test_split
    except ImportError:
        sys.exit("this example reads scikit-learn's diabetes data set: pip install scikit-learn "
                 "(or pip install -e \".[examples]\")")
    data = load_diabetes()
    x_tr, x_te, y_tr, y_te = train_test_split(data.data, data.target, test_size=0.25, random_state=seed)
    mu, sd = x_tr.mean(0), x_tr.std(0)
    y_mu, y_sd = y_tr.mean(), y_tr.std()
    return ((x_tr - mu) / sd, (y_tr - y_mu) / y_sd, (x_te - mu) / sd, y_te, y_mu, y_sd,
            list(data.feature_names))


def kernel(theta, a, b):
    """ARD squared exponential: exp(log_amp*2) * exp(-|a - b|^2 / 2 per-feature length scales)."""
    a, b = a / jnp.exp(theta["log_len"]), b / jnp.exp(theta["log_len"])
    sq = jnp.sum(a * a, 1)[:, None] + jnp.sum(b * b, 1)[None, :] - 2.0 * a @ b.T
    return jnp.exp(2.0 * theta["log_amp"]) * jnp.exp(-0.5 * jnp.maximum(sq, 0.0))


def neg_log_marginal_likelihood(theta, x, y):
    """-log N(y | 0, K + noise^2 I) per data point, through the Cholesky factor L of the covariance."""
    n = x.shape[0]
    cov = kernel(theta, x, x) + (jnp.exp(2.0 * theta["log_noise"]) + JITTER) * jnp.eye(n)
    chol = jnp.linalg.cholesky(cov)
    alpha = solve_triangular(chol, y, lower=True)
    return (0.5 * jnp.sum(alpha ** 2) + jnp.sum(jnp.log(jnp.diag(chol))) + 0.5 * n * math.log(2 * math.pi)) / n


def random_init(key, d: int):
    """Hyperparameters for one restart: length scales around sqrt(d), amplitude and noise around 1 and 0.5."""
    k1, k2, k3 = random.split(key, 3)
    return {"log_len": 0.5 * math.log(d) + 0.5 * random.normal(k1, (d,)),
            "log_amp": 0.3 * random.normal(k2, ()),
            "log_noise": math.log(0.5) + 0.3 * random.normal(k3, ())}


def make_fit(x, y, lr: float, chunk: int):
    """fit(states) -> (states, losses): `chunk` Adam steps on every restart at once (vmap over a lax.scan),
    compiled once by jit; the optimizer states carry from one call to the next."""
    opt_init, opt_update, get_params = optimizers.adam(lr)
    loss_and_grad = value_and_grad(neg_log_marginal_likelihood)

    def run(state, step0):
        def body(carry, i):
            value, g = loss_and_grad(get_params(carry), x, y)
            return opt_update(i, g, carry), value
        return lax.scan(body, state, step0 + jnp.arange(chunk))

    fit = jit(vmap(run, in_axes=(0, None)))
    return opt_init, fit, get_params


def posterior(theta, x, y, x_new):
    """Predictive mean and variance (latent function plus observation noise) at x_new."""
    n = x.shape[0]
    cov = kernel(theta, x, x) + (jnp.exp(2.0 * theta["log_noise"]) + JITTER) * jnp.eye(n)
    chol = jnp.linalg.cholesky(cov)
    k_star = kernel(theta, x, x_new)
    mean = k_star.T @ cho_solve((chol, True), y)
    v = solve_triangular(chol, k_star, lower=True)
    var = jnp.exp(2.0 * theta["log_amp"]) - jnp.sum(v * v, 0) + jnp.exp(2.0 * theta["log_noise"])
    return mean, var


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200, help="Adam steps per restart")
    ap.add_argument("--quick", action="store_true", help="a short run (100 steps, 2 restarts): a smoke test")
    ap.add_argument("--restarts", type=int, default=4, help="random initial hyperparameters, fitted together")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "gp_diabetes_out"),
                    help="folder for the figures (default ./gp_diabetes_out)")
    ap.add_argument("--floor", type=float, default=60.0, help="exit 1 if the test RMSE is above this")
    args = ap.parse_args(argv)
    jax.config.update("jax_enable_x64", True)  # a kernel matrix's Cholesky factor wants float64
    steps, restarts = (100, 2) if args.quick else (args.steps, args.restarts)
    chunk = 50

    x_tr, y_tr, x_te, y_te, y_mu, y_sd, names = load_data(args.seed)
    x, y = jnp.asarray(x_tr), jnp.asarray(y_tr)
    print(f"diabetes: {len(y_tr)} training and {len(y_te)} test patients, {x_tr.shape[1]} features; "
          f"{restarts} restarts x {steps} Adam steps")

    keys = random.split(random.PRNGKey(args.seed), restarts)
    opt_init, fit, get_params = make_fit(x, y, args.lr, chunk)
    state = vmap(opt_init)(vmap(lambda k: random_init(k, x_tr.shape[1]))(keys))
    curves = []
    t0 = time.time()
    chunks = range(0, steps, chunk)
    bar = tqdm(chunks, desc="fitting", unit="chunk", leave=False, disable=None) if tqdm else chunks
    for step0 in bar:
        state, losses = fit(state, step0)
        curves.append(np.asarray(losses))
        if tqdm:
            bar.set_postfix(nlml=f"{float(np.min(losses[:, -1])):.4f}")
    curves = np.concatenate(curves, axis=1)  # (restarts, steps)
    final = curves[:, -1]
    best = int(np.argmin(final))
    theta = jax.tree_util.tree_map(lambda p: p[best], get_params(state))
    print(f"fitted in {time.time() - t0:.1f}s: -log marginal likelihood per point "
          + ", ".join(f"{v:.4f}" for v in final) + f" (restart {best} kept)")
    lens = np.exp(np.asarray(theta["log_len"]))
    order = np.argsort(lens)
    print("length scales (shortest = most relevant): "
          + ", ".join(f"{names[i]} {lens[i]:.2f}" for i in order[:5]) + ", ...")
    print(f"signal sd {math.exp(float(theta['log_amp'])) * y_sd:.1f}, noise sd "
          f"{math.exp(float(theta['log_noise'])) * y_sd:.1f} (target units)")

    mean, var = posterior(theta, x, y, jnp.asarray(x_te))
    mean = np.asarray(mean) * y_sd + y_mu
    sd = np.sqrt(np.asarray(var)) * y_sd
    rmse = float(np.sqrt(np.mean((mean - y_te) ** 2)))
    baseline = float(np.sqrt(np.mean((y_mu - y_te) ** 2)))
    lpd = float(np.mean(-0.5 * ((y_te - mean) / sd) ** 2 - np.log(sd) - 0.5 * math.log(2 * math.pi)))
    coverage = float(np.mean(np.abs(y_te - mean) <= 1.96 * sd))
    print(f"test RMSE {rmse:.2f} (predicting the training mean: {baseline:.2f}); test log predictive density "
          f"{lpd:.3f} per patient; 95% intervals cover {coverage:.0%} of the test targets")

    if plt is None:
        print("matplotlib is not installed (pip install matplotlib): no figures written")
    else:
        paths = save_figures(args.out, theta, x, y, x_te, y_te, mean, sd, y_mu, y_sd, curves, best, names, rmse)
        print(f"figures written to {os.path.abspath(args.out)}:")
        for p in paths:
            print(f"  {os.path.basename(p)}")
    if not rmse <= args.floor:
        print(f"test RMSE {rmse:.2f} is above the floor {args.floor}", file=sys.stderr)
        return 1
    return 0


def save_figures(out, theta, x, y, x_te, y_te, mean, sd, y_mu, y_sd, curves, best, names, rmse):
    """posterior.png (test predictions with 95% intervals; the posterior along BMI) and fit.png."""
    os.makedirs(out, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
    lo, hi = min(y_te.min(), mean.min()) - 10, max(y_te.max(), mean.max()) + 10
    ax1.errorbar(y_te, mean, yerr=1.96 * sd, fmt="o", ms=3, alpha=0.6, elinewidth=0.7, label="mean, 95% interval")
    ax1.plot([lo, hi], [lo, hi], "k--", lw=1, label="perfect")
    ax1.set_xlabel("true progression")
    ax1.set_ylabel("predicted progression")
    ax1.set_title(f"test patients (RMSE {rmse:.1f})", fontsize=10)
    ax1.legend(fontsize=8, loc="upper left")

    j = names.index("bmi")
    grid = np.linspace(x[:, j].min(), x[:, j].max(), 120)
    x_grid = np.zeros((len(grid), x.shape[1]))
    x_grid[:, j] = grid
    m, v = posterior(theta, x, y, jnp.asarray(x_grid))
    m, s = np.asarray(m) * y_sd + y_mu, np.sqrt(np.asarray(v)) * y_sd
    ax2.scatter(np.asarray(x[:, j]), np.asarray(y) * y_sd + y_mu, s=6, c="0.6", label="training patients")
    ax2.fill_between(grid, m - 1.96 * s, m + 1.96 * s, alpha=0.3, label="95% predictive interval")
    ax2.plot(grid, m, lw=2, label="posterior mean")
    ax2.set_xlabel("BMI (standardised; other features at their mean)")
    ax2.set_ylabel("progression")
    ax2.set_title("the posterior along one feature", fontsize=10)
    ax2.legend(fontsize=8, loc="upper left")
    fig.suptitle("Gaussian-process regression on load_diabetes")
    fig.tight_layout()
    paths = [os.path.join(out, "posterior.png")]
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for r, c in enumerate(curves):
        ax.plot(np.arange(1, len(c) + 1), c, lw=2 if r == best else 1,
                label=f"restart {r}" + (" (kept)" if r == best else ""))
    ax.set_xlabel("Adam step")
    ax.set_ylabel("-log marginal likelihood / point")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(os.path.join(out, "fit.png"))
    fig.savefig(paths[1], dpi=100)
    plt.close(fig)
    return paths


if __name__ == "__main__":
    sys.exit(main())
