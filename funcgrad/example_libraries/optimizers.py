"""jax.example_libraries.optimizers for funcgrad: optimisers as (init, update, get_params) triples.

    from funcgrad.example_libraries import optimizers
    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = jit(lambda i, s, g: opt_update(i, g, s))(0, state, grads)
    params = get_params(state)

Each optimiser is written for one array (`init(x0) -> state`, `update(i, g, state) -> state`,
`get_params(state) -> x`); the @optimizer decorator lifts it to pytrees of parameters. The state is an
OptimizerState, a pytree whose leaves are arrays only, so it passes through jit, vmap and grad.
Step sizes are floats or schedules (functions of the integer step i).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

from .. import numpy as jnp
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "clip_grads", "constant",
           "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum", "nesterov",
           "optimizer", "pack_optimizer_state", "piecewise_constant", "polynomial_decay", "rmsprop",
           "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state"]

Schedule = Callable[[Any], Any]
Step = int


class OptimizerState(NamedTuple):
    """Per-leaf optimiser states, flattened: `packed_state[k]` holds the leaves of leaf k's state,
    `tree_def` is the parameters' structure, `subtree_defs[k]` the structure of leaf k's state."""
    packed_state: Any
    tree_def: Any
    subtree_defs: Any


# The structures are static (aux data), so only the state arrays are traced under jit.
register_pytree_node(OptimizerState, lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
                     lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def optimizer(opt_maker: Callable) -> Callable:
    """Decorator: lift `opt_maker(*args) -> (init, update, get_params)` over one array to pytrees."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            flat = [tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState(tuple(s for s, _ in flat), tree, tuple(d for _, d in flat))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(f"optimizer update: the gradient tree {grad_tree_def} does not match the "
                                f"parameter tree {tree} the optimizer state was initialized with")
            new_flat, new_subtrees = [], []
            for g, s, sub in zip(grad_flat, states_flat, subtrees):
                leaves, sub2 = tree_flatten(update(i, g, tree_unflatten(sub, s)))
                if sub2 != sub:
                    raise TypeError(f"optimizer update: the update produced a state of structure {sub2}, "
                                    f"but its input state had structure {sub}")
                new_flat.append(leaves)
                new_subtrees.append(sub2)
            return OptimizerState(tuple(new_flat), tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState):
            states_flat, tree, subtrees = opt_state
            return tree_unflatten(tree, [get_params(tree_unflatten(sub, s)) for sub, s in zip(subtrees, states_flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# -------------------------------------------------------------------------------------------- optimisers

@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x
    return init, update, get_params


def _state_of(buffers: int):
    """The init and get_params of an optimiser whose state is (x, *buffers), the buffers zeros like x."""
    def init(x0):
        return (x0,) + tuple(jnp.zeros_like(x0) for _ in range(buffers))

    def get_params(state):
        return state[0]
    return init, get_params


def _with_velocity(step_size, mass: float, lookahead: bool):
    """The (init, update, get_params) of momentum (lookahead=False) and Nesterov momentum (True)."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(1)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g if lookahead else velocity), velocity
    return init, update, get_params


@optimizer
def momentum(step_size, mass: float):
    """Heavy-ball momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    return _with_velocity(step_size, mass, lookahead=False)


@optimizer
def nesterov(step_size, mass: float):
    """Nesterov momentum: v <- mass * v + g; x <- x - step_size(i) * (mass * v + g)."""
    return _with_velocity(step_size, mass, lookahead=True)


@optimizer
def adagrad(step_size, momentum: float = 0.9):
    """Adagrad with momentum on the normalised gradient g / sqrt(sum of g**2)."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(2)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(jnp.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma: float = 0.9, eps: float = 1e-8):
    """RMSProp: a <- gamma * a + (1 - gamma) * g**2; x <- x - step_size(i) * g / sqrt(a + eps)."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(1)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq
    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9):
    """RMSProp with momentum on the scaled step: m <- momentum * m + step_size(i) * g / sqrt(a + eps)."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(2)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return init, update, get_params


def _bias_correction(b: float, i, dtype):
    """1 - b**(i+1) in the state's dtype (i may be a traced integer)."""
    return 1 - jnp.asarray(b, dtype) ** (i + 1)


@optimizer
def adam(step_size, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """Adam (Kingma & Ba, 2015) with bias-corrected first and second moments."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(2)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / _bias_correction(b1, i, m.dtype)
        vhat = v / _bias_correction(b2, i, m.dtype)
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return init, update, get_params


@optimizer
def adamax(step_size, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """AdaMax: Adam with the infinity norm, u <- max(b2 * u, |g|)."""
    step_size = make_schedule(step_size)
    init, get_params = _state_of(2)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / _bias_correction(b1, i, m.dtype)) * m / (u + eps), m, u
    return init, update, get_params


def _expand_along(ndim: int, v, axis: int):
    """A 1-d vector v laid along `axis` of an ndim-dimensional array (size 1 elsewhere)."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return jnp.reshape(v, shape)


@optimizer
def sm3(step_size, momentum: float = 0.9):
    """SM3 (Anil et al., 2019): memory-efficient adaptive steps with one accumulator per axis."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = tuple(jnp.shape(x0))
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = jnp.reshape(g, x.shape)
        accum = functools.reduce(jnp.minimum, [_expand_along(x.ndim, v, k) for k, v in enumerate(vs)])
        accum = accum + jnp.square(g)
        inv = jnp.where(accum > 0, 1.0 / jnp.sqrt(jnp.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * inv) + momentum * m
        x = x - step_size(i) * m
        vs = [jnp.max(accum, axis=tuple(a for a in range(x.ndim) if a != k)) for k in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        # Only the length of x_shape is static under jit: x was made at least 1-d, nothing else changed.
        return jnp.reshape(x, ()) if len(x_shape) == 0 else x
    return init, update, get_params


# -------------------------------------------------------------------------------------------- schedules

def constant(step_size) -> Schedule:
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), the ratio floored when `staircase`."""
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power: float = 1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps along (1 - i / decay_steps) ** power."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        mult = (1 - step_num / decay_steps) ** power
        return mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values) -> Schedule:
    """values[k] for boundaries[k-1] < i <= boundaries[k] (values[0] up to boundaries[0])."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("piecewise_constant: boundaries and values must be sequences, got shapes "
                         f"{tuple(boundaries.shape)} and {tuple(values.shape)}")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError("piecewise_constant: boundaries must be one shorter than values, got "
                         f"{boundaries.shape[0]} boundaries and {values.shape[0]} values")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule as it is, a scalar as a constant schedule; anything else is a TypeError."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(f"step size must be a scalar or a schedule (a function of the step), got "
                    f"{type(scalar_or_schedule)} of shape {jnp.shape(scalar_or_schedule)}")


# -------------------------------------------------------------------------------------------- utilities

def l2_norm(tree):
    """The l2 norm of all leaves of a pytree taken together."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale a gradient pytree down so that its total l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# -------------------------------------------------------------------------------------------- serialisation

class JoinPoint:
    """Marks where a parameter's own state subtree sits inside the unpacked state (a pytree leaf)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self) -> str:
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state: OptimizerState):
    """The state as the parameters' pytree with a JoinPoint holding each leaf's state (for pickling)."""
    states_flat, tree_def, subtree_defs = opt_state
    return tree_unflatten(tree_def, [JoinPoint(tree_unflatten(sub, s)) for sub, s in zip(subtree_defs, states_flat)])


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """Inverse of unpack_optimizer_state."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint, as made by unpack_optimizer_state")
    flat = [tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState(tuple(s for s, _ in flat), tree_def, tuple(d for _, d in flat))
