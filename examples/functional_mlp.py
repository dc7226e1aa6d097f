"""A pure-functional MLP trained on two spirals with funcgrad.

The parameters are a pytree (a list of {"w", "b"} dicts), the loss is a pure function of
(params, x, y), and one SGD step is `tree_map` over the parameters and their gradients. The
loss and gradient are computed by `jit(value_and_grad(loss))`, traced once and then reused.

    python examples/functional_mlp.py

Exits with status 1 if the final training accuracy is below 95%.
"""
from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    # The matrices here are tiny: one BLAS thread is fastest, and multi-threaded OpenBLAS on a busy
    # machine can spin-wait itself 10-50x slower. Set before NumPy is imported; an explicit setting wins.
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad.tree_util import tree_map  # noqa: E402


def make_spirals(n_per_class: int = 500, noise: float = 0.2, seed: int = 0):
    """Two interleaved spirals in the plane: x float32 (2n, 2), labels int (2n,)."""
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.0, 1.0, n_per_class)) * 3.0 * np.pi  # angle, up to 1.5 turns
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3.0 * np.pi)  # radius in [0, 1]
    x = np.concatenate([arm, -arm]) + noise / (3.0 * np.pi) * rng.standard_normal((2 * n_per_class, 2))
    labels = np.concatenate([np.zeros(n_per_class, np.int64), np.ones(n_per_class, np.int64)])
    perm = rng.permutation(2 * n_per_class)
    return x[perm].astype(np.float32), labels[perm]


def init_params(sizes, seed: int = 0):
    """He-initialised weights and zero biases, as a list of dicts (a pytree)."""
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        w = rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)
        params.append({"w": jnp.asarray(w.astype(np.float32)), "b": jnp.zeros((n_out,), jnp.float32)})
    return params


def forward(params, x):
    h = x
    for layer in params[:-1]:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    last = params[-1]
    return h @ last["w"] + last["b"]  # logits


def log_softmax(logits):
    # Subtract the row maximum so exp() cannot overflow; it is a constant for the gradient.
    shifted = logits - funcgrad.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def loss(params, x, y_onehot):
    """Mean softmax cross-entropy of the logits against one-hot labels."""
    return -jnp.mean(jnp.sum(y_onehot * log_softmax(forward(params, x)), axis=-1))


def sgd(params, grads, lr):
    return tree_map(lambda p, g: p - lr * g, params, grads)


def accuracy(params, x, labels) -> float:
    logits = np.asarray(forward(params, x))
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def main(epochs: int = 1000, lr: float = 1.0, print_every: int = 100) -> float:
    x_np, labels = make_spirals()
    y_onehot = np.eye(2, dtype=np.float32)[labels]  # one-hot labels built in NumPy up front
    x, y = jnp.asarray(x_np), jnp.asarray(y_onehot)
    params = init_params([2, 32, 32, 2])
    loss_and_grad = funcgrad.jit(funcgrad.value_and_grad(loss))

    start = time.perf_counter()
    for epoch in range(1, epochs + 1):  # full-batch gradient descent
        value, grads = loss_and_grad(params, x, y)
        params = sgd(params, grads, lr)
        if epoch % print_every == 0 or epoch == 1:
            print(f"epoch {epoch:5d}  loss {float(value):.4f}")
    elapsed = time.perf_counter() - start

    acc = accuracy(params, x, labels)
    print(f"trained {epochs} epochs on {len(labels)} points in {elapsed:.1f} s")
    print(f"final accuracy: {acc:.4f}")
    return acc


if __name__ == "__main__":
    sys.exit(0 if main() >= 0.95 else 1)
