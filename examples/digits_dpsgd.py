"""Differentially private training (DP-SGD) on real handwritten digits, written as ordinary JAX code.

    pip install -e ".[examples]"        # scikit-learn (the data), tqdm (progress), matplotlib (figures)
    python examples/digits_dpsgd.py [--epochs N] [--quick] [--noise SIGMA] [--clip C] [--out DIR]

DP-SGD (Abadi et al., 2016) bounds what the trained model can reveal about any one training example: each
step samples a batch (every example independently, with probability q), takes the gradient of EACH example
separately (`vmap(grad(loss))`, jitted), clips each to norm C, sums them, adds Gaussian noise of standard
deviation sigma*C drawn with an explicit random key, and divides by the expected batch size. The privacy
spent is tracked with the Renyi-DP accountant of the sampled Gaussian mechanism (Mironov et al., 2019) and
printed as (epsilon, delta). Same data and figures as examples/digits_cnn.py, written to --out (default
./digits_dpsgd_out). Exits with status 1 if the test accuracy is below --floor (0.9).
Only the imports differ from JAX (`import jax`, `jax.numpy`, `jax.random`, `jax.nn`).
"""
from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    # Small matrices: one BLAS thread is fastest (set before NumPy is imported; an explicit setting wins).
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad as jax  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad import grad, jit, nn, random, vmap  # noqa: E402
from funcgrad.tree_util import tree_map  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _digits  # noqa: E402  (the data split, progress bar and figures shared with digits_cnn.py)


def init_params(key, sizes=(64, 128, 10)):
    """An MLP's weights (LeCun-normal) and zero biases, as a list of (w, b) pairs (a pytree)."""
    params = []
    for k, (n_in, n_out) in zip(random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append((random.normal(k, (n_in, n_out)) / math.sqrt(n_in), jnp.zeros(n_out)))
    return params


def predict(params, x):
    """Logits of one flattened image (or a batch): tanh hidden layers (bounded activations suit DP-SGD)."""
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss(params, x, y):
    """Cross-entropy of one example."""
    return -nn.log_softmax(predict(params, x))[y]


# One gradient per example: grad of the one-example loss, vectorised over the batch axis of x and y.
per_example_grads = vmap(grad(loss), in_axes=(None, 0, 0))


@jit
def private_grad(params, x, y, weight, key, clip, noise, expected_batch):
    """The DP-SGD gradient: per-example gradients clipped to norm `clip`, summed over the sampled examples
    (weight 1; padding slots have weight 0), plus N(0, (noise*clip)^2) noise, over the expected batch size."""
    grads = per_example_grads(params, x, y)
    leaves = jax.tree_util.tree_leaves(grads)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))
    scale = weight * jnp.minimum(1.0, clip / (norms + 1e-12))
    keys = iter(random.split(key, len(leaves)))
    def noisy_sum(g):
        s = jnp.tensordot(scale, g, axes=1)
        return (s + noise * clip * random.normal(next(keys), s.shape)) / expected_batch
    return tree_map(noisy_sum, grads)


@jit
def evaluate(params, x, y):
    """(mean cross-entropy, accuracy, predictions) over a batch."""
    logits = predict(params, x)
    logp = nn.log_softmax(logits)
    pred = jnp.argmax(logits, axis=1)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1)), jnp.mean(pred == y), pred


def rdp_sampled_gaussian(q: float, sigma: float, alpha: int) -> float:
    """Renyi DP of order alpha (an integer >= 2) of one step of the Poisson-sampled Gaussian mechanism with
    sampling rate q and noise multiplier sigma (Mironov, Talwar & Zhang 2019, Sec. 3.3, integer orders)."""
    terms = [math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1)
             + k * math.log(q) + ((alpha - k) * math.log1p(-q) if k < alpha else 0.0) + (k * k - k) / (2 * sigma ** 2)
             for k in range(alpha + 1) if k == alpha or q < 1]  # log C(alpha, k) q^k (1-q)^(alpha-k) e^((k^2-k)/2s^2)
    top = max(terms)
    return (top + math.log(sum(math.exp(t - top) for t in terms))) / (alpha - 1)


def epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    """The (epsilon, delta)-DP guarantee after `steps` steps: min over orders of T*RDP(alpha) +
    log(1/delta)/(alpha-1) (the standard RDP-to-DP conversion)."""
    if sigma == 0:
        return math.inf
    return min(steps * rdp_sampled_gaussian(q, sigma, a) + math.log(1 / delta) / (a - 1) for a in range(2, 257))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="a short run (8 epochs): a smoke test")
    ap.add_argument("--batch-size", type=int, default=256, help="expected batch size (q = batch / n)")
    ap.add_argument("--lr", type=float, default=2.0)
    ap.add_argument("--clip", type=float, default=1.0, help="per-example gradient norm bound C")
    ap.add_argument("--noise", type=float, default=3.0, help="noise multiplier sigma (0: no privacy)")
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "digits_dpsgd_out"),
                    help="folder for the figures (default ./digits_dpsgd_out)")
    ap.add_argument("--floor", type=float, default=None,
                    help="exit 1 if the test accuracy is below this (default 0.9; 0.85 with --quick)")
    args = ap.parse_args(argv)
    epochs = 8 if args.quick else args.epochs
    floor = args.floor if args.floor is not None else (0.85 if args.quick else 0.9)

    x_tr, y_tr, x_te, y_te = _digits.load_digits_split(args.seed)
    xtr, ytr = jnp.asarray(x_tr.reshape(len(x_tr), -1)), jnp.asarray(y_tr)
    xte, yte = jnp.asarray(x_te.reshape(len(x_te), -1)), jnp.asarray(y_te)
    n = len(y_tr)
    q = args.batch_size / n
    steps_per_epoch = round(1 / q)
    # Poisson sampling draws a batch of random size; it is padded to a fixed capacity (weight 0) so that the
    # jitted step keeps one shape. The capacity is the mean plus 6 standard deviations: never exceeded in
    # practice (and if it were, the extra examples would be dropped, which only lowers the sensitivity).
    capacity = int(math.ceil(n * q + 6 * math.sqrt(n * q * (1 - q))))
    print(f"digits: {n} training and {len(y_te)} test images; DP-SGD with q={q:.4f} (expected batch "
          f"{args.batch_size}), clip {args.clip}, noise multiplier {args.noise}, {steps_per_epoch} steps/epoch")

    key = random.PRNGKey(args.seed)
    key, init_key = random.split(key)
    params = init_params(init_key)
    history = {"loss": [], "train_acc": [], "test_acc": []}
    t0 = time.time()
    step = 0
    for epoch in range(1, epochs + 1):
        for _ in _digits.progress(range(steps_per_epoch), desc=f"epoch {epoch}/{epochs}"):
            key, sample_key, noise_key = random.split(key, 3)
            chosen = random.bernoulli(sample_key, q, (n,))
            (idx,) = jnp.nonzero(chosen, size=capacity, fill_value=0)
            weight = (jnp.arange(capacity) < jnp.sum(chosen)).astype(jnp.float32)
            g = private_grad(params, xtr[idx], ytr[idx], weight, noise_key, args.clip, args.noise,
                             float(args.batch_size))
            params = tree_map(lambda p, d: p - args.lr * d, params, g)
            step += 1
        train_loss, train_acc, _ = evaluate(params, xtr, ytr)
        _, test_acc, _ = evaluate(params, xte, yte)
        history["loss"].append(float(train_loss))
        history["train_acc"].append(float(train_acc))
        history["test_acc"].append(float(test_acc))
        eps = epsilon(q, args.noise, step, args.delta)
        print(f"epoch {epoch}: loss {float(train_loss):.4f}  train accuracy {float(train_acc):.3f}  "
              f"test accuracy {float(test_acc):.3f}  epsilon {eps:.2f} (delta {args.delta:g})  "
              f"({time.time() - t0:.1f}s)", flush=True)

    _, acc, preds = evaluate(params, xte, yte)
    acc = float(acc)
    eps = epsilon(q, args.noise, step, args.delta)
    print(f"final: test accuracy {acc:.3f} " + (f"at ({eps:.2f}, {args.delta:g})-differential privacy"
                                                if args.noise > 0 else "without privacy (noise 0)"))
    privacy = f"epsilon={eps:.2f}, delta={args.delta:g}" if args.noise > 0 else "no privacy"
    paths = _digits.save_figures(args.out, history, x_te, y_te, np.asarray(preds),
                                 title=f"digits DP-SGD (sigma={args.noise:g}, C={args.clip:g}: {privacy})")
    _digits.report(paths, args.out)
    if acc < floor:
        print(f"test accuracy {acc:.3f} is below the floor {floor}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
