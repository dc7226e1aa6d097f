"""A classic stax + optimizers training script (after jax/examples/mnist_classifier.py), run on funcgrad.

The code below is ordinary JAX example code: only the imports name funcgrad. The data set is generated
(no download): 10 classes of 12x12 one-channel "glyphs", each a fixed random template seen shifted by up
to one pixel and under Gaussian noise, so a small convnet must learn shift-tolerant features.

    python examples/stax_mnist_classifier.py

Exits with status 1 if the final test accuracy is below 95%.
"""
from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    # Tiny matrices: one BLAS thread is fastest (set before NumPy is imported; an explicit setting wins).
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import itertools  # noqa: E402

import numpy as np  # noqa: E402

import funcgrad as jax  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad import grad, jit, random  # noqa: E402
from funcgrad.example_libraries import optimizers, stax  # noqa: E402
from funcgrad.example_libraries.stax import (Conv, Dense, Dropout, Flatten, LogSoftmax, MaxPool,  # noqa: E402
                                              Relu)

TARGET_ACCURACY = 0.95


def make_glyphs(n_train: int = 2000, n_test: int = 500, size: int = 12, noise: float = 1.0, seed: int = 0):
    """(train_images, train_labels, test_images, test_labels): NHWC float32 images, one-hot float32 labels."""
    rng = np.random.default_rng(seed)
    # Smooth-ish templates: random blobs, blurred once by averaging with their 4 neighbours.
    t = (rng.uniform(size=(10, size, size)) < 0.3).astype(np.float32)
    t = (t + np.roll(t, 1, 1) + np.roll(t, -1, 1) + np.roll(t, 1, 2) + np.roll(t, -1, 2)) / 5.0
    t = (t - t.mean(axis=(1, 2), keepdims=True)) / t.std(axis=(1, 2), keepdims=True)

    def sample(n):
        labels = rng.integers(0, 10, n)
        dy, dx = rng.integers(-1, 2, n), rng.integers(-1, 2, n)
        rows = (np.arange(size)[None, :] - dy[:, None]) % size      # shift by (dy, dx), wrapping around
        cols = (np.arange(size)[None, :] - dx[:, None]) % size
        images = t[labels[:, None, None], rows[:, :, None], cols[:, None, :]]
        images = images + noise * rng.standard_normal(images.shape)
        return images[..., None].astype(np.float32), np.eye(10, dtype=np.float32)[labels]

    return (*sample(n_train), *sample(n_test))


def loss(params, batch, rng):
    inputs, targets = batch
    preds = predict(params, inputs, rng=rng)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    predicted_class = jnp.argmax(predict(params, inputs, mode="test", rng=random.PRNGKey(0)), axis=1)
    return float(jnp.mean(predicted_class == jnp.argmax(targets, axis=1)))


init_random_params, predict = stax.serial(
    Conv(16, (3, 3), padding="SAME"), Relu,
    MaxPool((2, 2), strides=(2, 2)),
    Flatten,
    Dense(64), Relu,
    Dropout(0.9),
    Dense(10), LogSoftmax)


def main() -> float:
    rng = random.PRNGKey(0)
    step_size = 0.01
    num_epochs = 8
    batch_size = 100
    momentum_mass = 0.9

    train_images, train_labels, test_images, test_labels = make_glyphs()
    num_train = train_images.shape[0]
    num_batches = num_train // batch_size

    def data_stream():
        perm_rng = np.random.RandomState(0)
        while True:
            perm = perm_rng.permutation(num_train)
            for i in range(num_batches):
                idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[idx], train_labels[idx]
    batches = data_stream()

    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=momentum_mass)

    @jit
    def update(i, opt_state, batch, rng):
        params = get_params(opt_state)
        return opt_update(i, grad(loss)(params, batch, rng), opt_state)

    _, init_params = init_random_params(rng, (-1, 12, 12, 1))
    opt_state = opt_init(init_params)
    itercount = itertools.count()

    print("\nStarting training...")
    test_acc = 0.0
    for epoch in range(num_epochs):
        start_time = time.time()
        for _ in range(num_batches):
            rng, step_rng = random.split(rng)
            opt_state = update(next(itercount), opt_state, next(batches), step_rng)
        epoch_time = time.time() - start_time

        params = get_params(opt_state)
        train_acc = accuracy(params, (train_images, train_labels))
        test_acc = accuracy(params, (test_images, test_labels))
        print(f"Epoch {epoch} in {epoch_time:0.2f} sec")
        print(f"Training set accuracy {train_acc}")
        print(f"Test set accuracy {test_acc}")
    return test_acc


if __name__ == "__main__":
    t0 = time.time()
    acc = main()
    print(f"final test accuracy {acc:.3f} (target {TARGET_ACCURACY}) in {time.time() - t0:.1f} s")
    sys.exit(0 if acc >= TARGET_ACCURACY else 1)
