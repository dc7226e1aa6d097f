"""Short JAX-style programs, in the manner of JAX's examples/ directory (GP regression, HMM EM, ADVI,
Newton and BFGS, model-predictive control, DP-SGD, PCA, MNIST with stax/optimizers), written against
`jax` and run unchanged on funcgrad through the import shim in tests/jax_shim.py. Each checks its result
against NumPy/SciPy, an analytic value, or convergence."""
from __future__ import annotations

import numpy as np
import pytest

from jax_shim import jax_is_funcgrad, run_program


def test_shim_maps_jax_names_onto_funcgrad():
    import funcgrad
    import funcgrad.example_libraries.optimizers as fopt
    import funcgrad.example_libraries.stax as fstax
    with jax_is_funcgrad():
        import jax
        import jax.numpy as jnp
        from jax.api import grad as api_grad
        from jax.experimental import optimizers, stax
        from jax.experimental.stax import Dense
        from jax.example_libraries import stax as stax2
        from jax.lib import xla_bridge
        import jax.scipy.linalg
        assert jax is funcgrad and jnp is funcgrad.numpy and jax.scipy.linalg is funcgrad.scipy.linalg
        assert api_grad is funcgrad.grad
        assert optimizers is fopt and stax is fstax and stax2 is fstax and Dense is fstax.Dense
        assert xla_bridge.device_count() == jax.device_count() >= 1
    import sys
    assert "jax" not in sys.modules or sys.modules["jax"] is not funcgrad


def test_config_with_absl_applies_command_line_jax_flags(monkeypatch):
    import funcgrad
    monkeypatch.setattr("sys.argv", ["prog", "--jax_log_compiles=true", "--other=1"])
    before = funcgrad.config.read("log_compiles")
    try:
        run_program("""
            from jax.config import config
            config.config_with_absl()
            assert config.read("log_compiles") is True
        """)
    finally:
        funcgrad.config.update("log_compiles", before)


def test_jit_static_argnums_follow_the_signature():
    # as the ADVI example's mesh_eval: a static parameter left at its default, and static_argnames
    # given positionally (the batched PCA of pca_from_scratch), or a static argnum given by keyword
    ns = run_program("""
        from functools import partial
        import jax, jax.numpy as jnp
        calls = []

        @partial(jax.jit, static_argnums=(0, 1, 3))
        def grid(f, lims, params, num=5):
            calls.append(num)
            x = jnp.linspace(*lims, num=num)
            return jax.vmap(f, in_axes=(0, None))(x, params)

        a = grid(lambda x, p: x * p, (0.0, 1.0), 2.0)
        b = grid(lambda x, p: x * p, (0.0, 1.0), 3.0, num=3)
        c = grid(lambda x, p: x * p, (0.0, 1.0), 3.0, 3)

        @partial(jax.jit, static_argnames=["k"])
        def top(x, k=2):
            return jnp.sort(x)[::-1][:k]

        d = top(jnp.array([3.0, 1.0, 4.0, 1.5]), 3)
        e = top(jnp.array([3.0, 1.0, 4.0, 1.5]), k=1)
    """)
    np.testing.assert_allclose(ns["a"], np.linspace(0, 1, 5) * 2, rtol=1e-6)
    np.testing.assert_allclose(ns["b"], np.linspace(0, 1, 3) * 3, rtol=1e-6)
    np.testing.assert_allclose(ns["c"], ns["b"])
    assert ns["calls"] == [5, 3, 3]  # each call traced with its static num (a new lambda each time)
    np.testing.assert_allclose(ns["d"], [4.0, 3.0, 1.5])
    np.testing.assert_allclose(ns["e"], [4.0])
    with pytest.raises(ValueError, match="static_argnums 2 is out of range"):
        run_program("""
            import jax
            jax.jit(lambda x, y: x, static_argnums=2)
        """)


def test_gaussian_process_marginal_likelihood_gradient_with_cho_solve():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import grad, jit, vmap
        import jax.scipy as scipy

        def cov(params, x):
            amp, ls = jnp.exp(params[0]), jnp.exp(params[1])
            d = vmap(lambda a: vmap(lambda b: jnp.sum((a - b) ** 2))(x))(x)
            return amp * jnp.exp(-0.5 * d / ls ** 2) + 0.1 * jnp.eye(x.shape[0])

        def neg_log_marginal(params, x, y):
            k = cov(params, x)
            c, low = scipy.linalg.cho_factor(k, lower=True)
            alpha = scipy.linalg.cho_solve((c, low), y)
            return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(c)))

        x = jnp.linspace(0.0, 3.0, 6)[:, None]
        y = jnp.sin(x[:, 0])
        p = jnp.array([0.2, -0.3])
        val = neg_log_marginal(p, x, y)
        g = jit(grad(neg_log_marginal))(p, x, y)
        for _ in range(60):
            p = p - 0.05 * grad(neg_log_marginal)(p, x, y)
        final = neg_log_marginal(p, x, y)
    """)
    import scipy.linalg as sl

    def ref(p):
        x = np.linspace(0.0, 3.0, 6)[:, None].astype(np.float64)
        y = np.sin(x[:, 0])
        d = (x - x.T) ** 2
        k = np.exp(p[0]) * np.exp(-0.5 * d / np.exp(p[1]) ** 2) + 0.1 * np.eye(6)
        c = sl.cho_factor(k, lower=True)
        return 0.5 * y @ sl.cho_solve(c, y) + np.sum(np.log(np.diag(c[0])))

    p0 = np.array([0.2, -0.3])
    np.testing.assert_allclose(float(ns["val"]), ref(p0), rtol=1e-4)
    fd = [(ref(p0 + e) - ref(p0 - e)) / 2e-4 for e in np.eye(2) * 1e-4]
    np.testing.assert_allclose(np.asarray(ns["g"]), fd, rtol=2e-3, atol=1e-4)
    assert float(ns["final"]) < float(ns["val"]) - 0.05


def test_hmm_em_step_with_scan_logsumexp_and_grad():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import lax, grad, jit, random
        from jax.scipy.special import logsumexp

        def log_normalizer(params, seq):
            log_pi, log_A, log_B = params
            def step(log_alpha, obs):
                return logsumexp(log_alpha[:, None] + log_A, axis=0) + log_B[:, obs], None
            log_alpha, _ = lax.scan(step, log_pi, seq)
            return logsumexp(log_alpha)

        @jit
        def em(params, seq, num_steps):
            def update(i, params):
                moments = grad(log_normalizer)(params, seq)
                return [jnp.log(m / m.sum(-1, keepdims=True)) for m in moments]
            return lax.fori_loop(0, num_steps, update, params)

        k = random.split(random.PRNGKey(0), 3)
        params = [jax.nn.log_softmax(random.normal(k[0], (3,))),
                  jax.nn.log_softmax(random.normal(k[1], (3, 3)), axis=-1),
                  jax.nn.log_softmax(random.normal(k[2], (3, 4)), axis=-1)]
        seq = jnp.array([0, 1, 1, 3, 2, 0, 0, 3, 1, 2, 2, 3])
        ll0 = log_normalizer(params, seq)
        new = em(params, seq, 5)
        ll5 = log_normalizer(new, seq)
        counts = grad(log_normalizer)(params, seq)
    """)
    pi, A, B = (np.exp(np.asarray(p, np.float64)) for p in ns["new"])
    seq = [0, 1, 1, 3, 2, 0, 0, 3, 1, 2, 2, 3]

    def forward(pi, A, B):  # the forward algorithm in probability space
        alpha = pi.copy()
        for o in seq:
            alpha = (alpha @ A) * B[:, o]
        return np.log(alpha.sum())

    np.testing.assert_allclose(float(ns["ll5"]), forward(pi, A, B), rtol=1e-4)
    p0 = [np.exp(np.asarray(p, np.float64)) for p in (ns["params"])]
    np.testing.assert_allclose(float(ns["ll0"]), forward(*p0), rtol=1e-4)
    assert float(ns["ll5"]) > float(ns["ll0"])  # EM never decreases the likelihood
    for row in (pi[None], A, B):
        np.testing.assert_allclose(row.sum(-1), 1.0, rtol=1e-5)
    # the gradient w.r.t. log_B counts each observation once (expected emission counts)
    np.testing.assert_allclose(float(np.asarray(ns["counts"][2]).sum()), len(seq), rtol=1e-4)


def test_advi_fits_a_gaussian_with_vmapped_reparameterised_elbo():
    ns = run_program("""
        from functools import partial
        import jax.numpy as jnp
        from jax import jit, grad, vmap, random
        from jax.example_libraries import optimizers
        import jax.scipy.stats.norm as norm

        def target(z):  # an unnormalised N([1, -2], diag(0.5^2, 2^2))
            return jnp.sum(norm.logpdf(z, jnp.array([1.0, -2.0]), jnp.array([0.5, 2.0])))

        def elbo(rng, mean, log_std):
            z = mean + jnp.exp(log_std) * random.normal(rng, mean.shape)
            return target(z) - jnp.sum(vmap(norm.logpdf)(z, mean, jnp.exp(log_std)))

        @jit
        def objective(params, t):
            rngs = random.split(random.PRNGKey(t), 64)
            return -jnp.mean(vmap(elbo, in_axes=(0, None, None))(rngs, *params))

        opt_init, opt_update, get_params = optimizers.adam(0.05)

        @jit
        def update(i, state):
            return opt_update(i, grad(objective)(get_params(state), i), state)

        state = opt_init((jnp.zeros(2), jnp.zeros(2)))
        for t in range(300):
            state = update(t, state)
        mean, log_std = get_params(state)
    """)
    np.testing.assert_allclose(np.asarray(ns["mean"]), [1.0, -2.0], atol=0.25)
    np.testing.assert_allclose(np.exp(np.asarray(ns["log_std"])), [0.5, 2.0], rtol=0.25)


def test_newton_with_hessian_and_bfgs_via_scipy_optimize_minimize():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax.scipy.optimize import minimize

        def rosen(x):
            return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

        x = jnp.array([-1.2, 1.0, 0.8])
        for _ in range(30):  # damped Newton
            g, H = jax.grad(rosen)(x), jax.hessian(rosen)(x)
            step = jnp.linalg.solve(H + 1e-6 * jnp.eye(3), g)
            while rosen(x - step) > rosen(x):
                step = step / 2
            x = x - step
        newton_x = x
        res = minimize(rosen, jnp.array([-1.2, 1.0, 0.8]), method="BFGS")
        J = jax.jacobian(lambda v: jnp.stack([v[0] * v[1], jnp.sin(v[2])]))(jnp.array([1.0, 2.0, 0.5]))
    """)
    np.testing.assert_allclose(np.asarray(ns["newton_x"]), np.ones(3), atol=1e-3)
    assert bool(ns["res"].success)
    np.testing.assert_allclose(np.asarray(ns["res"].x), np.ones(3), atol=1e-3)
    np.testing.assert_allclose(np.asarray(ns["J"]), [[2.0, 1.0, 0.0], [0.0, 0.0, np.cos(0.5)]], rtol=1e-6)


def test_lqr_control_by_linearising_with_jacobian_and_rolling_out_with_scan():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import lax, jacobian, jacfwd, grad, vmap

        T = 20
        def dynamics(t, x, u):  # a discretised double integrator
            return jnp.array([x[0] + 0.1 * x[1], x[1] + 0.1 * u[0]])

        def cost(t, x, u):
            return jnp.dot(x, x) + 0.1 * jnp.dot(u, u)

        x0 = jnp.array([1.0, 0.0])
        A, B = jacobian(dynamics, argnums=(1, 2))(0, x0, jnp.zeros(1))
        Q = jacfwd(grad(cost, argnums=1), argnums=1)(0, x0, jnp.zeros(1))
        R = jacfwd(grad(cost, argnums=2), argnums=2)(0, x0, jnp.zeros(1))

        def riccati(P, _):
            K = jnp.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
            return Q + A.T @ P @ (A - B @ K), K
        _, Ks = lax.scan(riccati, Q, None, length=T)
        Ks = Ks[::-1]

        def rollout(x, K):
            u = -K @ x
            return dynamics(0, x, u), (x, u)
        xT, (xs, us) = lax.scan(rollout, x0, Ks)
        total = jnp.sum(vmap(cost, in_axes=(None, 0, 0))(0, xs, us)) + cost(0, xT, jnp.zeros(1))
    """)
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    B = np.array([[0.0], [0.1]])
    np.testing.assert_allclose(np.asarray(ns["A"]), A)
    np.testing.assert_allclose(np.asarray(ns["B"]), B)
    np.testing.assert_allclose(np.asarray(ns["Q"]), 2 * np.eye(2))
    # reference: the same finite-horizon LQR in NumPy
    Q, R, P, Ks = 2 * np.eye(2), 0.2 * np.eye(1), 2 * np.eye(2), []
    for _ in range(20):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
        Ks.append(K)
    x, total = np.array([1.0, 0.0]), 0.0
    for K in Ks[::-1]:
        u = -K @ x
        total += x @ x + 0.1 * u @ u
        x = A @ x + B @ u
    total += x @ x
    np.testing.assert_allclose(float(ns["total"]), total, rtol=1e-4)
    assert np.linalg.norm(np.asarray(ns["xT"])) < 0.5


def test_dp_sgd_clipped_per_example_gradients_with_tree_utilities():
    ns = run_program("""
        from functools import partial
        import jax, jax.numpy as jnp
        from jax import grad, jit, vmap, random, tree_util
        from jax.lax import stop_gradient
        from jax.example_libraries import stax, optimizers

        init, predict = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))

        def loss(params, batch):
            x, y = batch
            return -jnp.mean(jnp.sum(stax.logsoftmax(predict(params, x)) * y, axis=-1))

        def clipped_grad(params, example, clip):
            grads = grad(loss)(params, example)
            leaves, tree = tree_util.tree_flatten(grads)
            total = jnp.linalg.norm([jnp.linalg.norm(g.ravel()) for g in leaves])
            divisor = stop_gradient(jnp.amax((total / clip, 1.)))
            return tree_util.tree_unflatten(tree, [g / divisor for g in leaves]), total

        @partial(jit, static_argnums=3)
        def private_grad(params, batch, rng, clip):
            per_ex, norms = vmap(partial(clipped_grad, params, clip=clip))(
                (batch[0][:, None], batch[1][:, None]))
            summed = tree_util.tree_map(lambda g: jnp.sum(g, 0), per_ex)
            noisy = tree_util.tree_map(lambda g: g + 0.0 * random.normal(rng, g.shape), summed)
            return tree_util.tree_map(lambda g: g / batch[0].shape[0], noisy), norms, per_ex

        key = random.PRNGKey(0)
        _, params = init(key, (-1, 3))
        x = random.normal(random.PRNGKey(1), (16, 3))
        y = jax.nn.one_hot((x[:, 0] > 0).astype(jnp.int32), 2)
        g, norms, per_ex = private_grad(params, (x, y), key, 0.5)
        unclipped = [grad(loss)(params, (x[i:i + 1], y[i:i + 1])) for i in range(16)]
        opt_init, opt_update, get_params = optimizers.sgd(0.5)
        state = opt_init(params)
        for i in range(100):
            state = opt_update(i, private_grad(get_params(state), (x, y), random.fold_in(key, i), 0.5)[0], state)
        acc = jnp.mean(jnp.argmax(predict(get_params(state), x), -1) == jnp.argmax(y, -1))
    """)
    flat = [np.concatenate([np.ravel(np.asarray(v)) for v in _leaves(u)]) for u in ns["unclipped"]]
    want_norms = np.array([np.linalg.norm(f) for f in flat])
    np.testing.assert_allclose(np.asarray(ns["norms"]), want_norms, rtol=1e-4)
    scale = np.maximum(want_norms / 0.5, 1.0)
    want_mean = sum(f / s for f, s in zip(flat, scale)) / 16
    got_mean = np.concatenate([np.ravel(np.asarray(v)) for v in _leaves(ns["g"])])
    np.testing.assert_allclose(got_mean, want_mean, rtol=1e-4, atol=1e-6)
    per_norms = np.sqrt(sum(np.sum(np.asarray(v).reshape(16, -1) ** 2, 1) for v in _leaves(ns["per_ex"])))
    assert np.all(per_norms <= 0.5 + 1e-5)
    assert float(ns["acc"]) >= 0.85


def _leaves(tree):
    import funcgrad
    return funcgrad.tree_util.tree_leaves(tree)


def test_pca_by_svd_jitted_with_static_argnames_and_vmapped():
    ns = run_program("""
        from functools import partial
        import jax, jax.numpy as jnp

        @partial(jax.jit, static_argnames=["n_components"])
        def pca(X, n_components=2):
            Xc = X - X.mean(0)
            _, S, Vt = jnp.linalg.svd(Xc, full_matrices=False)
            ev = S ** 2 / (X.shape[0] - 1)
            return Xc @ Vt[:n_components].T, ev[:n_components] / jnp.sum(ev)

        batched = jax.jit(jax.vmap(pca, in_axes=(0, None)), static_argnames=["n_components"])
        key = jax.random.PRNGKey(0)
        X = jax.random.normal(key, (3, 200, 5)) * jnp.array([5.0, 2.0, 1.0, 1.0, 1.0])
        proj, ratio = batched(X, 2)
        proj0, ratio0 = pca(X[0], n_components=2)
    """)
    X = np.asarray(ns["X"], np.float64)
    assert ns["proj"].shape == (3, 200, 2)
    np.testing.assert_allclose(np.asarray(ns["ratio"][0]), np.asarray(ns["ratio0"]), rtol=1e-5)
    for b in range(3):
        Xc = X[b] - X[b].mean(0)
        ev = np.linalg.svd(Xc, compute_uv=False) ** 2
        np.testing.assert_allclose(np.asarray(ns["ratio"][b]), ev[:2] / ev.sum(), rtol=1e-4)
        np.testing.assert_allclose(np.abs(np.asarray(ns["proj"][b])).std(0),
                                   np.abs(Xc @ np.linalg.svd(Xc)[2][:2].T).std(0), rtol=1e-3)


def test_mnist_style_stax_classifier_learns_with_legacy_module_names():
    ns = run_program("""
        import itertools
        import numpy.random as npr
        import jax.numpy as jnp
        from jax.config import config
        from jax import jit, grad, random
        from jax.experimental import optimizers
        from jax.experimental import stax
        from jax.experimental.stax import Dense, Relu, LogSoftmax

        init_random_params, predict = stax.serial(Dense(32), Relu, Dense(3), LogSoftmax)

        def loss(params, batch):
            inputs, targets = batch
            return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))

        rs = npr.RandomState(0)
        centers = rs.randn(3, 10) * 3
        labels = rs.randint(0, 3, 300)
        images = (centers[labels] + rs.randn(300, 10)).astype("float32")
        onehot = (labels[:, None] == jnp.arange(3)).astype("float32")
        opt_init, opt_update, get_params = optimizers.momentum(0.01, mass=0.9)

        @jit
        def update(i, opt_state, batch):
            return opt_update(i, grad(loss)(get_params(opt_state), batch), opt_state)

        _, params = init_random_params(random.PRNGKey(0), (-1, 10))
        state = opt_init(params)
        count = itertools.count()
        for epoch in range(5):
            for b in range(0, 300, 50):
                state = update(next(count), state, (images[b:b + 50], onehot[b:b + 50]))
        acc = jnp.mean(jnp.argmax(predict(get_params(state), images), 1) == labels)
    """)
    assert float(ns["acc"]) > 0.95
