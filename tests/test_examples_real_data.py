"""The examples on real data (examples/digits_cnn.py, digits_dpsgd.py, gp_diabetes.py): each runs with its short
settings in a subprocess, meets its quality floor, says where its figures went and writes them there as PNGs;
the pieces with a known answer are checked against it (the DP accountant against the exact Renyi divergence and a
published value, the clipped per-example gradients against hand-derived ones, the GP's likelihood, gradient and
posterior against closed forms and scikit-learn). Skips without scikit-learn (the `examples` extra)."""
import importlib.util
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")

JAX_X64 = True  # the float64 comparisons below

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
PNG = b"\x89PNG\r\n\x1a\n"
FIGURES = {"digits_cnn": ["curves.png", "confusion_matrix.png", "misclassified.png"],
           "digits_dpsgd": ["curves.png", "confusion_matrix.png", "misclassified.png"],
           "gp_diabetes": ["posterior.png", "fit.png"]}


def _run(name, *args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, f"{name}.py"), *args], capture_output=True,
                       text=True, env=env, cwd=cwd, timeout=600)
    return r


def _check_figures(name, out, stdout):
    """Every figure is a PNG in out, and the example printed out's path."""
    pytest.importorskip("matplotlib")
    assert f"figures written to {out}" in stdout, stdout
    for fig in FIGURES[name]:
        path = os.path.join(out, fig)
        with open(path, "rb") as f:
            assert f.read(8) == PNG, path
        assert os.path.getsize(path) > 5000, path  # a drawn figure, not an empty canvas


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_example_{name}", os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------------------------ digits_cnn
def test_digits_cnn_quick_then_resume(tmp_path):
    out = str(tmp_path / "out")
    r = _run("digits_cnn", "--quick", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    epochs = re.findall(r"^epoch (\d+): loss ([0-9.]+) .* test accuracy ([0-9.]+)", r.stdout, re.M)
    assert [int(e) for e, _, _ in epochs] == [1, 2, 3, 4]
    losses = [float(v) for _, v, _ in epochs]
    assert losses[-1] < losses[0] / 2, losses
    acc = float(re.search(r"checkpoint .*\(epoch 4\): test accuracy ([0-9.]+)", r.stdout).group(1))
    assert acc >= 0.9
    assert acc == float(epochs[-1][2])  # the reloaded checkpoint is the trained model
    assert os.path.isfile(os.path.join(out, "checkpoint.pt"))
    _check_figures("digits_cnn", out, r.stdout)
    assert sorted(os.listdir(tmp_path)) == ["out"]  # nothing written into the current directory

    # --resume continues from the checkpoint: nothing left to train, the same model evaluated again
    r2 = _run("digits_cnn", "--quick", "--resume", "--out", out, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr[-3000:]
    assert "resumed from" in r2.stdout and not re.search(r"^epoch \d+:", r2.stdout, re.M)
    assert float(re.search(r"\(epoch 4\): test accuracy ([0-9.]+)", r2.stdout).group(1)) == acc


# ---------------------------------------------------------------------------------------------- digits_dpsgd
def test_digits_dpsgd_quick_default_out(tmp_path):
    r = _run("digits_dpsgd", "--quick", cwd=tmp_path)  # no --out: ./digits_dpsgd_out under the current directory
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    m = re.search(r"final: test accuracy ([0-9.]+) at \(([0-9.]+), 1e-05\)", r.stdout)
    assert float(m.group(1)) >= 0.85
    dp = _load("digits_dpsgd")
    q, steps = 256 / 1347, 8 * round(1347 / 256)
    assert float(m.group(2)) == pytest.approx(dp.epsilon(q, 3.0, steps, 1e-5), abs=0.006)
    _check_figures("digits_dpsgd", str(tmp_path / "digits_dpsgd_out"), r.stdout)


def test_digits_dpsgd_without_tqdm_and_matplotlib(tmp_path):
    """The plain fallbacks: no progress bar, no figures (said so), the same training."""
    code = ("import runpy, sys; sys.modules['tqdm'] = None; sys.modules['matplotlib'] = None; "
            f"sys.argv = ['digits_dpsgd.py', '--quick', '--out', 'figs']; "
            f"runpy.run_path({os.path.join(EXAMPLES, 'digits_dpsgd.py')!r}, run_name='__main__')")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert len(re.findall(r"^epoch \d+:", r.stdout, re.M)) == 8
    assert "matplotlib is not installed" in r.stdout and "figures written to" not in r.stdout
    assert not os.path.exists(tmp_path / "figs" / "curves.png")


def test_example_exits_nonzero_below_its_floor(tmp_path):
    r = _run("digits_dpsgd", "--quick", "--floor", "1.01", "--out", str(tmp_path), cwd=tmp_path)
    assert r.returncode == 1 and "below the floor 1.01" in r.stderr


def test_dp_accountant_exact_values():
    dp = _load("digits_dpsgd")
    # q = 1 (no subsampling) is the Gaussian mechanism: RDP of order alpha is alpha / (2 sigma^2)
    for sigma, alpha in [(1.0, 2), (0.7, 5), (3.0, 32)]:
        assert dp.rdp_sampled_gaussian(1.0, sigma, alpha) == pytest.approx(alpha / (2 * sigma ** 2), rel=1e-12)
    # TensorFlow Privacy's tutorial: MNIST (N=60000), batch 250, noise 1.3, 15 epochs, delta 1e-5 -> epsilon 1.18
    assert dp.epsilon(250 / 60000, 1.3, 15 * 60000 // 250, 1e-5) == pytest.approx(1.18, abs=0.005)
    assert dp.epsilon(0.1, 2.0, 100, 1e-5) < dp.epsilon(0.1, 1.0, 100, 1e-5)  # more noise, more privacy


def test_dp_accountant_matches_the_renyi_divergence():
    """For q < 1: log E_{z ~ N(0, s^2)}[((1 - q) + q N(z; 1, s^2) / N(z; 0, s^2))^alpha] / (alpha - 1), by quadrature
    (the definition of the sampled Gaussian mechanism's Renyi divergence)."""
    integrate = pytest.importorskip("scipy.integrate")
    dp = _load("digits_dpsgd")
    for q, sigma, alpha in [(0.05, 1.0, 8), (0.01, 2.0, 20), (0.3, 0.8, 3)]:
        def f(z):
            ratio = (1 - q) + q * math.exp((2 * z - 1) / (2 * sigma ** 2))
            return math.exp(-z * z / (2 * sigma ** 2)) / math.sqrt(2 * math.pi * sigma ** 2) * ratio ** alpha
        a, _ = integrate.quad(f, -60, 60, limit=400, epsabs=0, epsrel=1e-12)
        assert dp.rdp_sampled_gaussian(q, sigma, alpha) == pytest.approx(math.log(a) / (alpha - 1), rel=1e-8)


def test_dp_gradient_clips_each_example():
    """private_grad with noise 0: the per-example gradients (derived by hand for the tanh MLP), each clipped to
    norm C, weighted, summed and divided by the expected batch size."""
    import funcgrad.numpy as jnp
    from funcgrad import random
    dp = _load("digits_dpsgd")
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((64, 16)) * 0.5, rng.standard_normal(16) * 0.1),
              (rng.standard_normal((16, 10)) * 0.5, rng.standard_normal(10) * 0.1)]
    x, y = rng.uniform(0, 1, (6, 64)), rng.integers(0, 10, 6)
    weight = np.array([1, 1, 1, 1, 0, 0], float)
    clip, expected = 0.5, 4.0
    got = dp.private_grad([(jnp.asarray(w), jnp.asarray(b)) for w, b in params], jnp.asarray(x), jnp.asarray(y),
                          jnp.asarray(weight), random.PRNGKey(0), clip, 0.0, expected)
    (w1, b1), (w2, b2) = params
    want = [np.zeros_like(w1), np.zeros_like(b1), np.zeros_like(w2), np.zeros_like(b2)]
    norms = []
    for xi, yi, wi in zip(x, y, weight):
        h = np.tanh(xi @ w1 + b1)
        logits = h @ w2 + b2
        d_logits = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
        d_logits[yi] -= 1.0
        d_h = (w2 @ d_logits) * (1 - h ** 2)
        g = [np.outer(xi, d_h), d_h, np.outer(h, d_logits), d_logits]
        norm = math.sqrt(sum(float(np.sum(t ** 2)) for t in g))
        norms.append(norm)
        for acc, t in zip(want, g):
            acc += wi * min(1.0, clip / norm) * t / expected
    assert max(norms) > clip  # the clipping is exercised
    flat = [t for pair in got for t in pair]
    for a, b in zip(flat, want):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------------------------------------------------- gp_diabetes
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # irrelevant features' length scales
def test_gp_diabetes_quick_reaches_the_likelihood_optimum(tmp_path):
    out = str(tmp_path / "gp")
    r = _run("gp_diabetes", "--quick", "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    rmse = float(re.search(r"test RMSE ([0-9.]+)", r.stdout).group(1))
    baseline = float(re.search(r"predicting the training mean: ([0-9.]+)", r.stdout).group(1))
    assert rmse <= 60.0 and rmse < 0.85 * baseline
    kept = min(float(v) for v in re.search(r"per point ([0-9., ]+) \(restart", r.stdout).group(1).split(", "))
    _check_figures("gp_diabetes", out, r.stdout)

    # scikit-learn's GP with the same model (ARD RBF times a constant, plus white noise), fitted by L-BFGS
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
    gp = _load("gp_diabetes")
    x_tr, y_tr, *_ = gp.load_data()
    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(np.full(10, 3.0), (1e-2, 1e4)) + WhiteKernel(0.25, (1e-4, 10))
    ref = GaussianProcessRegressor(kernel, alpha=gp.JITTER, random_state=0).fit(x_tr, y_tr)
    assert kept <= -ref.log_marginal_likelihood_value_ / len(y_tr) + 2e-3


def _theta(gp, d, seed=1):
    import funcgrad.numpy as jnp
    rng = np.random.default_rng(seed)
    return {"log_len": jnp.asarray(rng.normal(1.0, 0.3, d)), "log_amp": jnp.asarray(rng.normal(0.0, 0.2)),
            "log_noise": jnp.asarray(rng.normal(-0.7, 0.2))}


def test_gp_likelihood_gradient_and_posterior_closed_forms():
    pytest.importorskip("scipy")
    from scipy.stats import multivariate_normal
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    import funcgrad as fg
    import funcgrad.numpy as jnp
    gp = _load("gp_diabetes")
    x_tr, y_tr, x_te, *_ = gp.load_data()
    x, y = x_tr[:80], y_tr[:80]
    theta = _theta(gp, x.shape[1])
    lens, amp2 = np.exp(np.asarray(theta["log_len"])), math.exp(2 * float(theta["log_amp"]))
    noise2 = math.exp(2 * float(theta["log_noise"]))
    d2 = (((x[:, None, :] - x[None, :, :]) / lens) ** 2).sum(-1)
    k = amp2 * np.exp(-0.5 * d2)
    cov = k + (noise2 + gp.JITTER) * np.eye(len(y))

    value, g = fg.value_and_grad(gp.neg_log_marginal_likelihood)(theta, jnp.asarray(x), jnp.asarray(y))
    assert float(value) == pytest.approx(-multivariate_normal(np.zeros(len(y)), cov).logpdf(y) / len(y), rel=1e-10)
    # d(-log p)/d theta = -tr((a a^T - K^-1) dK/d theta) / 2, with a = K^-1 y; per point
    inv = np.linalg.inv(cov)
    a = inv @ y
    m = np.outer(a, a) - inv
    want_noise = -0.5 * np.trace(m @ (2 * noise2 * np.eye(len(y)))) / len(y)
    want_amp = -0.5 * np.sum(m * (2 * k)) / len(y)
    want_len = [-0.5 * np.sum(m * (k * ((x[:, None, j] - x[None, :, j]) ** 2) / lens[j] ** 2)) / len(y)
                for j in range(x.shape[1])]
    assert float(g["log_noise"]) == pytest.approx(want_noise, rel=1e-7)
    assert float(g["log_amp"]) == pytest.approx(want_amp, rel=1e-7)
    np.testing.assert_allclose(np.asarray(g["log_len"]), want_len, rtol=1e-7, atol=1e-12)

    # the posterior predictive against scikit-learn's with the same, fixed, hyperparameters
    mean, var = gp.posterior(theta, jnp.asarray(x), jnp.asarray(y), jnp.asarray(x_te[:20]))
    kernel = ConstantKernel(amp2, "fixed") * RBF(lens, "fixed") + WhiteKernel(noise2, "fixed")
    ref = GaussianProcessRegressor(kernel, alpha=gp.JITTER, optimizer=None).fit(x, y)
    ref_mean, ref_sd = ref.predict(x_te[:20], return_std=True)
    np.testing.assert_allclose(np.asarray(mean), ref_mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.asarray(var)), ref_sd, rtol=1e-6)
