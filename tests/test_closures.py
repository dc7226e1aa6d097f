"""Functions passed to control flow, jit and checkpoint that close over tracers of an enclosing transform.

A table of constructs (cond with and without operands, switch, while_loop, fori_loop, scan, map,
associative_scan, jit, nested jit, checkpoint, and nestings of them), each a scalar function f(x)
whose inner function reads x (or a value computed from x) from its closure, is run under a table of
transforms (vmap, grad, jvp, jacfwd, jacrev, hessian, jit and their compositions). Each result is
compared with the same transform of a reference written with plain array operations and Python loops,
in float64. custom_jvp / custom_vjp follow JAX: closing over tracers works under vmap and jit, and
differentiating with respect to a closed-over value raises.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import lax

ARR = np.array([0.3, -0.2, 0.5, 0.1])


# --- constructs: (closed-over version, reference) -------------------------------------------------

def cond_ops(x):
    return lax.cond(x > 0.4, lambda y: jnp.sin(y * x), lambda y: y - x ** 2, 2.0)


def cond_ops_ref(x):
    return jnp.where(x > 0.4, jnp.sin(2.0 * x), 2.0 - x ** 2)


def cond_no_ops(x):
    s = jnp.sin(x)  # a value computed from the tracer, not the tracer itself
    return lax.cond(x > 0.4, lambda: s * 3.0, lambda: jnp.cos(x) * s)


def cond_no_ops_ref(x):
    return jnp.where(x > 0.4, jnp.sin(x) * 3.0, jnp.cos(x) * jnp.sin(x))


def switch(x):
    i = jnp.clip(jnp.floor(x * 2.0), 0, 2).astype(jnp.int32)
    return lax.switch(i, [lambda y: y * x, lambda y: jnp.exp(x) + y, lambda y: x ** 3 - y], 1.5)


def switch_ref(x):
    i = jnp.clip(jnp.floor(x * 2.0), 0, 2)
    return jnp.where(i == 0, 1.5 * x, jnp.where(i == 1, jnp.exp(x) + 1.5, x ** 3 - 1.5))


def while_loop(x):
    # both cond_fun and body_fun close over x (the trip count, 3, does not depend on it)
    _, c = lax.while_loop(lambda c: c[0] < 3.0 + 0.0 * x, lambda c: (c[0] + 1.0, c[1] * x + jnp.sin(x)),
                          (0.0, 1.0))
    return c


def while_ref(x):
    c = 1.0
    for _ in range(3):
        c = c * x + jnp.sin(x)
    return c


def fori(x):
    return lax.fori_loop(0, 3, lambda i, c: c * jnp.cos(x) + x * i, 0.5)


def fori_ref(x):
    c = 0.5
    for i in range(3):
        c = c * jnp.cos(x) + x * i
    return c


def scan(x):
    c, ys = lax.scan(lambda c, a: (c * x + a * jnp.sin(x), c * a), 1.0, jnp.asarray(ARR))
    return c + ys.sum()


def scan_ref(x):
    c, total = 1.0, 0.0
    for a in ARR:
        c, y = c * x + a * jnp.sin(x), c * a
        total = total + y
    return c + total


def lax_map(x):
    return lax.map(lambda a: jnp.sin(a * x) * x, jnp.asarray(ARR)).sum()


def lax_map_ref(x):
    return sum(jnp.sin(a * x) * x for a in ARR)


def assoc_scan(x):
    # a (+) b = a + b + x is associative: prefix i is sum(elems[:i+1]) + i * x
    out = lax.associative_scan(lambda a, b: a + b + x, jnp.asarray(ARR) * x)
    return (out * jnp.asarray(ARR)).sum()


def assoc_scan_ref(x):
    return sum((np.cumsum(ARR)[i] * x + i * x) * ARR[i] for i in range(len(ARR)))


def jit_closure(x):
    return fg.jit(lambda y: jnp.sin(y * x))(2.0)


def jit_closure_ref(x):
    return jnp.sin(2.0 * x)


def nested_jit(x):
    s = x * x
    return fg.jit(lambda y: fg.jit(lambda z: z * s + jnp.cos(x))(y * 2.0) + x)(1.5)


def nested_jit_ref(x):
    return 3.0 * x * x + jnp.cos(x) + x


def checkpoint(x):
    return fg.checkpoint(lambda y: jnp.sin(y * x) * x)(2.0)


def checkpoint_ref(x):
    return jnp.sin(2.0 * x) * x


def scan_of_cond(x):
    def body(c, a):
        c = lax.cond(a > 0.0, lambda u: u * x + a, lambda u: u - x * a, c)
        return c, None
    return lax.scan(body, 1.0, jnp.asarray(ARR))[0]


def scan_of_cond_ref(x):
    c = 1.0
    for a in ARR:
        c = c * x + a if a > 0 else c - x * a
    return c


def cond_of_scan_of_jit(x):
    def branch(y):
        return lax.scan(lambda c, a: (fg.jit(lambda u: u * x)(c) + a, None), y, jnp.asarray(ARR))[0]
    return lax.cond(x > -10.0, branch, lambda y: y * 0.0 * x, 1.0)


def cond_of_scan_of_jit_ref(x):
    c = 1.0
    for a in ARR:
        c = c * x + a
    return c


def while_in_jit(x):
    return fg.jit(lambda y: lax.fori_loop(0, jnp.asarray(2, jnp.int32) + 0 * y.astype(jnp.int32),
                                          lambda i, c: c * x + y, y))(0.5)


def while_in_jit_ref(x):
    c = 0.5
    for _ in range(2):
        c = c * x + 0.5
    return c


FWD_ONLY = {"while_loop", "while_in_jit"}  # while_loop has no reverse mode (as in JAX)

CONSTRUCTS = {
    "cond_ops": (cond_ops, cond_ops_ref),
    "cond_no_ops": (cond_no_ops, cond_no_ops_ref),
    "switch": (switch, switch_ref),
    "while_loop": (while_loop, while_ref),
    "fori_loop": (fori, fori_ref),
    "scan": (scan, scan_ref),
    "map": (lax_map, lax_map_ref),
    "associative_scan": (assoc_scan, assoc_scan_ref),
    "jit": (jit_closure, jit_closure_ref),
    "nested_jit": (nested_jit, nested_jit_ref),
    "checkpoint": (checkpoint, checkpoint_ref),
    "scan_of_cond": (scan_of_cond, scan_of_cond_ref),
    "cond_of_scan_of_jit": (cond_of_scan_of_jit, cond_of_scan_of_jit_ref),
    "while_in_jit": (while_in_jit, while_in_jit_ref),
}


# --- transforms: each maps a scalar function to an array-valued function of a float64 array ----------

XS = np.array([0.1, 0.35, 0.45, 0.8, 1.3])
SCALES = np.array([0.5, 1.0, 1.5])


def _grad_of_vmap(f):
    # an inner vmap (whose tracers the construct closes over) under an outer grad
    return fg.vmap(fg.grad(lambda x: fg.vmap(lambda s: f(x * s))(jnp.asarray(SCALES)).sum()))


TRANSFORMS = {
    "none": (lambda f: lambda xs: jnp.stack([f(x) for x in xs]), False),
    "jit": (lambda f: fg.vmap(fg.jit(f)), False),
    "vmap": (lambda f: fg.vmap(f), False),
    "jit_vmap": (lambda f: fg.jit(fg.vmap(f)), False),
    "jvp": (lambda f: fg.vmap(lambda x: fg.jvp(f, (x,), (jnp.ones_like(x),))[1]), False),
    "jacfwd": (lambda f: fg.vmap(fg.jacfwd(f)), False),
    "jvp_of_jvp": (lambda f: fg.vmap(lambda x: fg.jvp(lambda u: fg.jvp(f, (u,), (jnp.ones_like(u),))[1],
                                                      (x,), (jnp.ones_like(x),))[1]), False),
    "grad": (lambda f: fg.vmap(fg.grad(f)), True),
    "jacrev": (lambda f: fg.vmap(fg.jacrev(f)), True),
    "hessian": (lambda f: fg.vmap(fg.hessian(f)), True),
    "jacfwd_jacrev": (lambda f: fg.vmap(fg.jacfwd(fg.jacrev(f))), True),
    "jit_grad": (lambda f: fg.jit(fg.vmap(fg.grad(f))), True),
    "grad_jit": (lambda f: fg.vmap(fg.grad(fg.jit(f))), True),
    "grad_of_vmap": (_grad_of_vmap, True),
    "grad_each": (lambda f: lambda xs: jnp.stack([fg.grad(f)(x) for x in xs]), True),
}


def _cases():
    for c in CONSTRUCTS:
        for t, (_, rev) in TRANSFORMS.items():
            if rev and c in FWD_ONLY:
                continue
            yield c, t


@pytest.mark.parametrize("construct,transform", list(_cases()))
def test_closure_matches_reference(construct, transform):
    f, ref = CONSTRUCTS[construct]
    make = TRANSFORMS[transform][0]
    xs = jnp.asarray(XS)
    got = np.asarray(make(f)(xs))
    want = np.asarray(make(ref)(xs))
    assert got.dtype == np.float64, got.dtype
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("construct", sorted(c for c in CONSTRUCTS if c not in FWD_ONLY))
def test_closure_gradient_matches_finite_differences(construct):
    """The references above are checked too: the gradient of each construct against central
    differences of its plain NumPy evaluation."""
    f, _ = CONSTRUCTS[construct]
    for x in (0.35, 0.8):
        g = float(fg.grad(f)(np.float64(x)))
        eps = 1e-6
        fd = (float(f(np.float64(x + eps))) - float(f(np.float64(x - eps)))) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_reference_values_are_independent():
    # A few closed forms, so the table cannot pass with construct and reference wrong together.
    x = np.float64(0.8)
    np.testing.assert_allclose(float(cond_ops(x)), np.sin(1.6), rtol=1e-14)
    np.testing.assert_allclose(float(fg.grad(cond_ops)(x)), 2 * np.cos(1.6), rtol=1e-14)
    np.testing.assert_allclose(float(fg.grad(jit_closure)(x)), 2 * np.cos(1.6), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(fg.vmap(jit_closure)(jnp.asarray(XS))), np.sin(2 * XS), rtol=1e-14)
    np.testing.assert_allclose(float(fg.hessian(checkpoint)(x)),
                               -4 * np.sin(1.6) * x + 4 * np.cos(1.6), rtol=1e-12)


# --- several levels: a construct closing over tracers of two different enclosing transforms -------

@pytest.mark.parametrize("construct", ["cond", "jit", "scan", "checkpoint"])
def test_closure_over_two_levels(construct):
    """f(x)(y) closes over x (outer grad/vmap) and y (inner vmap) at once."""
    def inner(x, y):
        if construct == "cond":
            return lax.cond(y > 0.4, lambda z: z * x * y, lambda z: z + x - y, 2.0)
        if construct == "jit":
            return fg.jit(lambda z: jnp.sin(z * x * y))(2.0)
        if construct == "scan":
            return lax.scan(lambda c, a: (c * x + a * y, None), 1.0, jnp.asarray(ARR))[0]
        return fg.checkpoint(lambda z: jnp.sin(z * x) * y)(2.0)

    def ref(x, y):
        if construct == "cond":
            return jnp.where(y > 0.4, 2.0 * x * y, 2.0 + x - y)
        if construct == "jit":
            return jnp.sin(2.0 * x * y)
        if construct == "scan":
            c = 1.0
            for a in ARR:
                c = c * x + a * y
            return c
        return jnp.sin(2.0 * x) * y

    ys = jnp.asarray(XS)
    got = fg.vmap(fg.grad(lambda x: fg.vmap(lambda y: inner(x, y))(ys).sum()))(jnp.asarray(SCALES))
    want = fg.vmap(fg.grad(lambda x: fg.vmap(lambda y: ref(x, y))(ys).sum()))(jnp.asarray(SCALES))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)
    got = fg.jacfwd(fg.jacrev(lambda x: fg.vmap(lambda y: inner(x, y))(ys)))(np.float64(0.7))
    want = fg.jacfwd(fg.jacrev(lambda x: fg.vmap(lambda y: ref(x, y))(ys)))(np.float64(0.7))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)


@given(x=st.floats(-2.0, 2.0, allow_nan=False), depth=st.integers(1, 4))
def test_nested_cond_chain_closing_over_every_level(x, depth):
    """cond inside cond inside ... (depth levels), each branch closing over the value of the level
    above; grad matches the closed form d/dx of x**(depth + 1)."""
    def f(x):
        def level(v, d):
            if d == 0:
                return v * x
            return lax.cond(v > -100.0, lambda: level(v * 1.0, d - 1) * 1.0, lambda: v * 0.0)
        return level(x, depth) * x ** (depth - 1) / x ** (depth - 1)

    x = np.float64(x if abs(x) > 1e-3 else 0.5)
    np.testing.assert_allclose(float(fg.grad(f)(x)), 2 * x, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fg.vmap(fg.grad(f))(jnp.asarray(XS))), 2 * XS, rtol=1e-12)


def test_jit_closing_over_a_tracer_is_not_cached_across_calls():
    seen = []

    def outer(x):
        @fg.jit
        def g(y):
            return y * x
        seen.append(g)
        return g(2.0)

    np.testing.assert_allclose(np.asarray(fg.vmap(outer)(jnp.asarray(XS))), 2 * XS)
    np.testing.assert_allclose(np.asarray(fg.vmap(outer)(jnp.asarray(XS[::-1]))), 2 * XS[::-1])
    # one jitted function reused by two transforms closing over different tracers
    x_box = {}

    @fg.jit
    def h(y):
        return y * x_box["x"]

    def use(x):
        x_box["x"] = x
        return h(3.0)

    np.testing.assert_allclose(np.asarray(fg.vmap(use)(jnp.asarray(XS))), 3 * XS)
    np.testing.assert_allclose(float(fg.grad(use)(np.float64(0.3))), 3.0)
    np.testing.assert_allclose(np.asarray(fg.vmap(fg.grad(use))(jnp.asarray(XS))), 3.0 * np.ones(5))


def test_jit_closing_over_a_tracer_cannot_be_lowered_alone():
    def outer(x):
        with pytest.raises(TypeError, match="closes over traced values"):
            fg.jit(lambda y: y * x).lower(2.0)
        return x

    fg.vmap(outer)(jnp.asarray(XS))


# --- custom_jvp / custom_vjp closing over tracers (JAX's semantics) ---------------------------------

def _custom_vjp_closing_over(x):
    @fg.custom_vjp
    def f(y):
        return jnp.sin(y) * x

    f.defvjp(lambda y: (jnp.sin(y) * x, jnp.cos(y)), lambda c, g: (g * c * x * 10.0,))  # a marked rule
    return f


def _custom_jvp_closing_over(x):
    @fg.custom_jvp
    def f(y):
        return jnp.sin(y) * x

    f.defjvp(lambda p, t: (jnp.sin(p[0]) * x, jnp.cos(p[0]) * t[0] * x * 10.0))
    return f


MAKERS = {"custom_vjp": _custom_vjp_closing_over, "custom_jvp": _custom_jvp_closing_over}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_custom_rules_closing_over_tracers_work_under_vmap_and_jit(kind):
    make = MAKERS[kind]
    xs, y = jnp.asarray(XS), np.float64(0.6)
    np.testing.assert_allclose(np.asarray(fg.vmap(lambda x: make(x)(y))(xs)), np.sin(0.6) * XS, rtol=1e-14)
    np.testing.assert_allclose(float(fg.jit(lambda x: make(x)(y))(np.float64(0.3))), np.sin(0.6) * 0.3,
                               rtol=1e-14)
    # differentiating with respect to the explicit argument uses the custom rule (10x the true value),
    # with the closed-over value batched, traced by jit, or differentiated by an outer grad
    want = np.cos(0.6) * XS * 10.0
    np.testing.assert_allclose(np.asarray(fg.vmap(lambda x: fg.grad(lambda u: make(x)(u))(y))(xs)), want,
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fg.jit(fg.vmap(lambda x: fg.grad(lambda u: make(x)(u))(y)))(xs)),
                               want, rtol=1e-12)
    ys = jnp.asarray(XS + 0.2)
    np.testing.assert_allclose(np.asarray(fg.vmap(lambda x, u: fg.grad(lambda v: make(x)(v))(u))(xs, ys)),
                               np.cos(XS + 0.2) * XS * 10.0, rtol=1e-12)
    np.testing.assert_allclose(float(fg.grad(lambda y: fg.vmap(lambda x: make(x)(y))(xs).sum())(y)),
                               np.cos(0.6) * XS.sum() * 10.0, rtol=1e-12)
    # an outer grad through the rule's output: d/dx of (10 cos(y) x) is 10 cos(y)
    np.testing.assert_allclose(float(fg.grad(lambda x: fg.grad(lambda u: make(x)(u))(y))(np.float64(0.3))),
                               np.cos(0.6) * 10.0, rtol=1e-12)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_differentiating_custom_rules_wrt_a_closed_over_value_raises(kind):
    """As in JAX: the custom rule only covers the explicit arguments."""
    make = MAKERS[kind]
    with pytest.raises(fg.UnexpectedTracerError, match="closes over"):
        fg.grad(lambda x: make(x)(np.float64(0.6)))(np.float64(0.3))
    with pytest.raises(fg.UnexpectedTracerError, match="closes over"):
        fg.vmap(fg.grad(lambda x: make(x)(x)))(jnp.asarray(XS))
    if kind == "custom_jvp":
        with pytest.raises(fg.UnexpectedTracerError, match="closes over"):
            fg.jvp(lambda x: make(x)(np.float64(0.6)), (np.float64(0.3),), (np.float64(1.0),))


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("where", ["jit", "jit_cond", "scan"])
def test_custom_rules_closing_over_values_held_fixed_by_an_inner_derivative(kind, where):
    """grad of a jitted function (or jitted cond, or scan) calling a custom rule that closes over a tracer of an
    enclosing vmap or grad: jit, cond and scan differentiate only the operands that need it, so the closed-over
    value is held fixed rather than reported as differentiated."""
    make = MAKERS[kind]

    def inner(x):
        if where == "jit":
            return fg.jit(lambda y: make(x)(y))
        if where == "scan":  # one step, so the rule's factor 10 appears once
            return lambda y: lax.scan(lambda c, a: (make(x)(c) + a, None), y, jnp.zeros(1))[0]
        return fg.jit(lambda y: lax.cond(y > 0, lambda z: make(x)(z), lambda z: z, y))

    y = np.float64(0.6)
    np.testing.assert_allclose(np.asarray(fg.vmap(lambda x: fg.grad(inner(x))(y))(jnp.asarray(XS))),
                               np.cos(0.6) * XS * 10.0, rtol=1e-12)
    np.testing.assert_allclose(float(fg.grad(lambda x: fg.grad(inner(x))(y))(np.float64(0.3))),
                               np.cos(0.6) * 10.0, rtol=1e-12)


FG = SimpleNamespace(grad=fg.grad, vmap=fg.vmap, jit=fg.jit, checkpoint=fg.checkpoint, np=jnp, lax=lax)


def _sg_cases(L, make):
    """Custom rules closing over stop_gradient values under transforms of x, in library L: (name, function of
    x, its exact value: the rule's derivative cos(u) * c * 10 with the closed-over c held fixed)."""
    sg = L.lax.stop_gradient
    return [
        ("grad", lambda x: L.grad(lambda u: make(sg(u))(u))(x), lambda x: np.cos(x) * x * 10.0),
        ("vmap_grad", lambda x: L.vmap(L.grad(lambda u: make(sg(u))(u)))(x), lambda x: np.cos(x) * x * 10.0),
        ("jit_grad", lambda x: L.jit(L.grad(lambda u: make(sg(u))(u)))(x), lambda x: np.cos(x) * x * 10.0),
        ("grad_grad", lambda x: L.grad(L.grad(lambda u: make(sg(u))(u)))(x), lambda x: -np.sin(x) * x * 10.0),
        ("of_a_value", lambda x: L.grad(lambda u: make(sg(L.np.sin(u)))(u))(x),
         lambda x: np.cos(x) * np.sin(x) * 10.0),
        ("scaled", lambda x: L.grad(lambda u: make(sg(u * 2.0))(u))(x), lambda x: np.cos(x) * 2 * x * 10.0),
    ]


def _sg_arg(L, name):
    return L.np.asarray(XS) if name == "vmap_grad" else np.float64(0.3)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_custom_rules_closing_over_a_stop_gradient_value(kind):
    """A closed-over stop_gradient value is not differentiated, so it is no error to differentiate the
    function (as in JAX): the rule gives the derivative with respect to the explicit argument."""
    for name, f, exact in _sg_cases(FG, MAKERS[kind]):
        x = _sg_arg(FG, name)
        np.testing.assert_allclose(np.asarray(f(x)), exact(np.asarray(x)), rtol=1e-12, err_msg=name)


Y = np.float64(0.6)


def _two_steps(x):
    """d/dx of (10 x cos(y)) (10 x cos(sin(y) x)): two steps of the rule, the second at the first's primal."""
    c1 = np.sin(Y) * x
    return 100 * np.cos(Y) * (2 * x * np.cos(c1) - x * x * np.sin(c1) * np.sin(Y))


def _square_exact(x):
    """d/dx of d/dy (sin(y) x)^2 by the rule, 20 x^2 sin(y) cos(y)."""
    return 40 * x * np.sin(Y) * np.cos(Y)


# where -> (inner derivative's function of y given make(x), closed form of d/dx of that derivative at Y)
NESTED = {
    "direct": (lambda L, m: m, lambda x: np.cos(Y) * 10.0),
    "square": (lambda L, m: lambda u: m(u) ** 2, _square_exact),
    "scan1": (lambda L, m: lambda y0: L.lax.scan(lambda c, a: (m(c) + a, None), y0, L.np.zeros(1))[0],
              lambda x: np.cos(Y) * 10.0),
    "scan2": (lambda L, m: lambda y0: L.lax.scan(lambda c, a: (m(c) + a, None), y0, L.np.zeros(2))[0], _two_steps),
    "fori2": (lambda L, m: lambda y0: L.lax.fori_loop(0, 2, lambda i, c: m(c), y0), _two_steps),
    "map": (lambda L, m: lambda y0: L.lax.map(m, L.np.stack([y0, 2 * y0])).sum(),
            lambda x: 10 * np.cos(Y) + 20 * np.cos(2 * Y)),
    "jit": (lambda L, m: L.jit(lambda u: m(u) ** 2), _square_exact),
    "cond": (lambda L, m: lambda u: L.lax.cond(u > 0, lambda z: m(z) ** 2, lambda z: z, u), _square_exact),
    "checkpoint": (lambda L, m: L.checkpoint(lambda u: m(u) ** 2), _square_exact),
}


def _nested(L, make, where):
    """x -> d/dy of NESTED[where]'s construct calling make(x), at Y."""
    return lambda x: L.grad(NESTED[where][0](L, make(x)))(Y)


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("where", sorted(NESTED))
def test_outer_grad_of_an_inner_derivative_of_a_custom_rule_closing_over_its_tracer(kind, where):
    """As JAX, whose inner JVP of the call runs the rule: the outer grad differentiates the rule's own
    operations on the closed-over tracer (its primal output and its derivative), through scan's residuals,
    fori_loop, map, jit, cond and checkpoint alike."""
    got = float(fg.grad(_nested(FG, MAKERS[kind], where))(np.float64(0.3)))
    np.testing.assert_allclose(got, NESTED[where][1](0.3), rtol=1e-12)


# where JAX 0.10 gives a value (its custom_vjp raises under scan, fori_loop and map, and both kinds under jit
# and cond, in its own closure handling)
_JAX_NESTED = {"custom_jvp": ["direct", "square", "scan1", "scan2", "fori2", "map", "checkpoint"],
               "custom_vjp": ["direct", "square", "checkpoint"]}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_closed_over_custom_rules_match_jax(kind):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp
    from jax import lax as jlax
    J = SimpleNamespace(grad=jax.grad, vmap=jax.vmap, jit=jax.jit, checkpoint=jax.checkpoint, np=jjnp, lax=jlax)

    def jmake(x):
        if kind == "custom_jvp":
            f = jax.custom_jvp(lambda y: jjnp.sin(y) * x)
            f.defjvp(lambda p, t: (jjnp.sin(p[0]) * x, jjnp.cos(p[0]) * t[0] * x * 10.0))
        else:
            f = jax.custom_vjp(lambda y: jjnp.sin(y) * x)
            f.defvjp(lambda y: (jjnp.sin(y) * x, jjnp.cos(y)), lambda c, g: (g * c * x * 10.0,))
        return f

    for (name, f, _), (_, jf, _) in zip(_sg_cases(FG, MAKERS[kind]), _sg_cases(J, jmake)):
        np.testing.assert_allclose(np.asarray(f(_sg_arg(FG, name))), np.asarray(jf(_sg_arg(J, name))), rtol=1e-12,
                                   err_msg=name)
    for where in _JAX_NESTED[kind]:
        want = float(jax.grad(_nested(J, jmake, where))(0.3))
        np.testing.assert_allclose(float(fg.grad(_nested(FG, MAKERS[kind], where))(np.float64(0.3))), want,
                                   rtol=1e-12, err_msg=where)


def test_custom_rule_closing_over_a_batched_value_in_while_under_jvp():
    """while_loop's jvp differentiates only the body constants with a tangent: a custom rule in the body
    closing over a vmap tracer is differentiated with respect to its explicit argument only. (custom_vjp
    has no forward mode, as in JAX.)"""
    make = MAKERS["custom_jvp"]

    def f(x, y):
        return lax.while_loop(lambda c: c[0] < 1 + 0 * c[1].astype(jnp.int32),
                              lambda c: (c[0] + 1, make(x)(c[1])), (0, y))[1]

    y = np.float64(0.6)
    got = fg.vmap(lambda x: fg.jvp(lambda u: f(x, u), (y,), (np.float64(1.0),))[1])(jnp.asarray(XS))
    np.testing.assert_allclose(np.asarray(got), np.cos(0.6) * XS * 10.0, rtol=1e-12)
