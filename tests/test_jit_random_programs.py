"""jit == eager on random programs, with every pass, with each pass disabled, with fusion forced on tiny
blocks (and threads), and without buffer reuse.

Hypothesis builds a program as a list of steps over a pool of values (the inputs first); each step
applies one operation from a menu of funcgrad.numpy / lax operations (unary and binary elementwise,
reductions, reshape / transpose / broadcast, dot, select, slicing, concatenate, dtype round trips and
the algebraic identities the simplifier rewrites) to values drawn from the pool. The program returns a
few pool values (possibly an input itself, to exercise forwarding).
"""
import contextlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import numexpr_eval

SHAPE = (3, 4)

# --- the menu: name -> (arity, fn); every op maps values of shape SHAPE (or scalars) to SHAPE ---------


def _unary(f):
    return 1, f


def _binary(f):
    return 2, f


MENU = {
    "sin": _unary(jnp.sin),
    "tanh": _unary(jnp.tanh),
    "exp_tanh": _unary(lambda x: jnp.exp(jnp.tanh(x))),
    "neg": _unary(lambda x: -x),
    "neg_neg": _unary(lambda x: lax.neg(lax.neg(x))),
    "abs": _unary(jnp.abs),
    "sqrt_abs": _unary(lambda x: jnp.sqrt(jnp.abs(x) + 1.0)),
    "log1p_abs": _unary(lambda x: jnp.log1p(jnp.abs(x))),
    "square": _unary(lambda x: x ** 2),
    "relu": _unary(lambda x: jnp.maximum(x, 0.0)),
    "scale": _unary(lambda x: x * 0.5 + 0.25),
    "times_one_plus_zero": _unary(lambda x: x * 1.0 + 0.0),
    "times_zero": _unary(lambda x: x * 0.0),
    "int_times_zero": _unary(lambda x: (x.astype(jnp.int32) * 0).astype(x.dtype) + x),
    "round_trip": _unary(lambda x: x.astype(jnp.float64).astype(x.dtype)),
    "transpose_twice": _unary(lambda x: x.T.T),
    "reshape_chain": _unary(lambda x: x.reshape(-1).reshape(2, -1).reshape(SHAPE)),
    "center_rows": _unary(lambda x: x - jnp.sum(x, axis=1, keepdims=True) / SHAPE[1]),
    "max_cols": _unary(lambda x: x - jnp.max(x, axis=0)),
    "softmax": _unary(lambda x: jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
                      / jnp.sum(jnp.exp(x - jnp.max(x, axis=1, keepdims=True)), axis=1, keepdims=True)),
    "mean_all": _unary(lambda x: x * 0.0 + jnp.mean(x)),
    "rev": _unary(lambda x: x[::-1]),
    "slice_concat": _unary(lambda x: jnp.concatenate([x[1:], x[:1]], axis=0)),
    "strided": _unary(lambda x: jnp.concatenate([x[:, ::2], x[:, 1::2]], axis=1)),
    "gram": _unary(lambda x: x @ (x.T @ x) / 10.0),
    "stop_gradient": _unary(lambda x: fg.stop_gradient(x) + x),
    "add": _binary(lambda x, y: x + y),
    "sub": _binary(lambda x, y: x - y),
    "mul": _binary(lambda x, y: x * y),
    "div": _binary(lambda x, y: x / (jnp.abs(y) + 1.0)),
    "max": _binary(jnp.maximum),
    "min": _binary(jnp.minimum),
    "where": _binary(lambda x, y: jnp.where(x > y, x, y * 2.0)),
    "eq_select": _binary(lambda x, y: (x == y).astype(x.dtype) / (1.0 + (y == 0.0).astype(x.dtype))),
    "dot": _binary(lambda x, y: x @ y.T @ x / 10.0),
    "dot_t": _binary(lambda x, y: (x.T @ y).T[:SHAPE[0]] / 10.0),
    "concat_rows": _binary(lambda x, y: jnp.concatenate([x, y], axis=0)[1:1 + SHAPE[0]]),
    "bias_row": _binary(lambda x, y: x + y[0]),
    "bias_col": _binary(lambda x, y: x * y[:, :1]),
}
NAMES = sorted(MENU)


@st.composite
def programs(draw):
    n_in = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    steps = []
    for k in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from(NAMES))
        arity = MENU[name][0]
        args = tuple(draw(st.integers(0, n_in + k - 1)) for _ in range(arity))
        steps.append((name, args))
    n_pool = n_in + len(steps)
    outs = draw(st.lists(st.integers(0, n_pool - 1), min_size=1, max_size=3))
    if outs[0] < n_in and n_pool > n_in:
        outs.append(n_pool - 1)
    seed = draw(st.integers(0, 2 ** 16))
    return n_in, dtype, steps, tuple(outs), seed


def build(program):
    n_in, dtype, steps, outs, seed = program

    def f(*xs):
        pool = list(xs)
        for name, args in steps:
            pool.append(MENU[name][1](*[pool[i] for i in args]))
        return tuple(pool[i] for i in outs)

    rng = np.random.default_rng(seed)
    inputs = [jnp.asarray(rng.standard_normal(SHAPE).astype(dtype)) for _ in range(n_in)]
    return f, inputs


@contextlib.contextmanager
def compiler_settings(passes=None, **codegen):
    cg = compiler.config.codegen
    old_passes = compiler.config.passes
    old = {k: getattr(cg, k) for k in codegen}
    try:
        if passes is not None:
            compiler.config.passes = tuple(passes)
        for k, v in codegen.items():
            setattr(cg, k, v)
        yield
    finally:
        compiler.config.passes = old_passes
        for k, v in old.items():
            setattr(cg, k, v)


def _check(program):
    f, inputs = build(program)
    with np.errstate(all="ignore"):
        want = f(*inputs)
        before = [np.asarray(x).copy() for x in inputs]
        got = fg.jit(f)(*inputs)
        again = fg.jit(f)(*inputs)
    rtol = 2e-5 if program[1] == np.float32 else 1e-11
    assert len(got) == len(want)
    for g, a, w in zip(got, again, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol, equal_nan=True)
        np.testing.assert_allclose(np.asarray(a), np.asarray(w), rtol=rtol, atol=rtol, equal_nan=True)
    for x, b in zip(inputs, before):  # buffer reuse never touches an input
        np.testing.assert_array_equal(np.asarray(x), b)


CONFIGS = {
    "all passes": {},
    **{f"without {p}": {"passes": [q for q in compiler.ALL_PASSES if q != p]} for p in compiler.ALL_PASSES},
    "no passes": {"passes": []},
    "no fusion": {"fusion": False},
    "no buffer reuse": {"donate": False},
    # every elementwise chain fused, 5-element blocks (partial last blocks), blocks shared by threads
    "fusion on tiny blocks, threaded": {"fusion": True, "fusion_min_size": 1, "fusion_block_size": 5,
                                        "fusion_threads": 2, "fusion_parallel_min_size": 1},
    "fusion without buffer reuse": {"fusion": True, "fusion_min_size": 1, "fusion_block_size": 7,
                                    "donate": False},
    # every pair of independent matrix products run on two threads
    "parallel ops": {"parallel_ops": True, "parallel_min_flops": 0},
    # every eligible group evaluated by numexpr (skipped when numexpr is not installed)
    "numexpr evaluator": {"fusion": True, "fusion_min_size": 1, "fusion_evaluator": "numexpr"},
}


def _skip_unavailable(config):
    if CONFIGS[config].get("fusion_evaluator") == "numexpr" and not numexpr_eval.available():
        pytest.skip("numexpr is not installed")


@pytest.mark.parametrize("config", list(CONFIGS), ids=list(CONFIGS))
@given(programs())
def test_jit_matches_eager_on_random_programs(config, program):
    _skip_unavailable(config)
    with compiler_settings(**CONFIGS[config]):
        _check(program)


@given(programs())
def test_jit_of_value_and_grad_matches_eager_on_random_programs(program):
    f, inputs = build(program)

    def loss(*xs):
        return sum(jnp.sum(jnp.tanh(o)) for o in f(*xs))

    vg = fg.value_and_grad(loss, argnums=tuple(range(len(inputs))))
    with np.errstate(all="ignore"):
        want_v, want_g = vg(*inputs)
        with compiler_settings(fusion_min_size=1, fusion_block_size=5):
            got_v, got_g = fg.jit(vg)(*inputs)
    rtol = 2e-4 if program[1] == np.float32 else 1e-9
    np.testing.assert_allclose(float(got_v), float(want_v), rtol=rtol, atol=rtol, equal_nan=True)
    for g, w in zip(got_g, want_g):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=rtol, equal_nan=True)


@given(programs())
def test_optimised_jaxpr_evaluates_like_the_original(program):
    """optimize() is semantics-preserving as a jaxpr (what pjit differentiates and batches)."""
    from funcgrad._src.core.jaxpr import eval_jaxpr
    f, inputs = build(program)
    jaxpr = fg.make_jaxpr(f)(*inputs)
    before = str(jaxpr)
    opt = compiler.optimize(jaxpr)
    assert str(jaxpr) == before  # passes are pure
    assert len(opt.eqns) <= len(jaxpr.eqns)
    with np.errstate(all="ignore"):
        want = eval_jaxpr(jaxpr, *inputs)
        got = eval_jaxpr(opt, *inputs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6, equal_nan=True)


# --- integer and boolean programs (where x * 0 and x - x do fold to 0) -----------------------------

INT_MENU = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "self_sub": lambda x, y: x - x + y,
    "times_zero": lambda x, y: x * 0 + y,
    "times_one": lambda x, y: 1 * x * 1,
    "max": lambda x, y: jnp.maximum(x, y),
    "min": lambda x, y: jnp.minimum(x, y),
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "mask": lambda x, y: jnp.where((x > y) & True | False, x, y),
    "rem": lambda x, y: x % 7,
    "neg_neg": lambda x, y: -(-x),
    "transpose": lambda x, y: (x.T + y.T).T,
    "sum_rows": lambda x, y: x - jnp.sum(y, axis=1, keepdims=True),
    "dot": lambda x, y: (x % 3) @ (y % 3).T @ (x % 2),
}
INT_NAMES = sorted(INT_MENU)


@pytest.mark.parametrize("config", ["all passes", "no passes", "fusion on tiny blocks, threaded",
                                    "numexpr evaluator"])
@given(st.lists(st.tuples(st.sampled_from(INT_NAMES), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=6), st.integers(0, 2 ** 16))
def test_jit_matches_eager_on_random_integer_programs(config, steps, seed):
    _skip_unavailable(config)
    def f(a, b):
        pool = [a, b]
        for name, i, j in steps:
            pool.append(INT_MENU[name](pool[i % len(pool)], pool[j % len(pool)]))
        return pool[-1], pool[len(pool) // 2]

    rng = np.random.default_rng(seed)
    a, b = (jnp.asarray(rng.integers(-5, 6, SHAPE).astype(np.int32)) for _ in range(2))
    with compiler_settings(**CONFIGS[config]):
        got = fg.jit(f)(a, b)
    for g, w in zip(got, f(a, b)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
