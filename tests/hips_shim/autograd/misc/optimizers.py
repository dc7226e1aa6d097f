"""HIPS's autograd.misc.optimizers (sgd with momentum, rmsprop, adam) over funcgrad.numpy.

Each takes grad(x, i) and a starting point x0 of any nested container of arrays: the optimizer runs on the
flattened vector and callback(x, i, g) and the gradient function see the container, as in HIPS.
"""
import functools

import funcgrad.numpy as np

from .flatten import flatten


def unflatten_optimizer(optimize):
    """Lets optimize(grad, x0 vector, callback, ...) take and return a container of arrays."""
    @functools.wraps(optimize)
    def _optimize(grad, x0, callback=None, *args, **kwargs):
        flat_x0, unflatten = flatten(x0)

        def flat_grad(x, i):
            return flatten(grad(unflatten(x), i))[0]
        flat_callback = None if callback is None else (lambda x, i, g: callback(unflatten(x), i, unflatten(g)))
        return unflatten(optimize(flat_grad, flat_x0, flat_callback, *args, **kwargs))
    return _optimize


@unflatten_optimizer
def sgd(grad, x, callback=None, num_iters=200, step_size=0.1, mass=0.9):
    """Stochastic gradient descent with momentum: the velocity is a mass-weighted average of -gradients."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad, x, callback=None, num_iters=100, step_size=0.1, gamma=0.9, eps=10**-8):
    """Root mean squared prop: steps scaled by a running average of the squared gradient."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g**2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad, x, callback=None, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10**-8):
    """Adam (Kingma and Ba, 2014), bias-corrected first and second moment estimates."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g**2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
