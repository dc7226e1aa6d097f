"""funcgrad.testing: check_grads / check_jvp / check_vjp catch wrong derivatives; the strategies deliver."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as jnp
import funcgrad.testing as fgt
from funcgrad.testing import check_grads, check_jvp, check_vjp

X = np.array([0.3, 1.2, -0.7])
Y = np.array([[1.0, 2.0, 3.0], [0.5, -0.1, 2.0]])


# --- functions with deliberately wrong rules ------------------------------------------------------

@funcgrad.custom_jvp
def sin_bad_jvp(x):
    return jnp.sin(x)


@sin_bad_jvp.defjvp
def _sin_bad_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), 2 * jnp.cos(x) * t          # first derivative wrong by a factor 2


@funcgrad.custom_jvp
def sin_bad_second_jvp(x):
    return jnp.sin(x)


@sin_bad_second_jvp.defjvp
def _sin_bad_second_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), jnp.cos(funcgrad.stop_gradient(x)) * t  # right first, zero second derivative


@funcgrad.custom_jvp
def sin_good_jvp(x):
    return jnp.sin(x)


@sin_good_jvp.defjvp
def _sin_good_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.sin(x), jnp.cos(x) * t


def _custom_vjp(bwd):
    @funcgrad.custom_vjp
    def f(x):
        return jnp.sin(x)
    f.defvjp(lambda x: (jnp.sin(x), x), bwd)
    return f


sin_good_vjp = _custom_vjp(lambda x, g: (jnp.cos(x) * g,))
sin_bad_vjp = _custom_vjp(lambda x, g: (1.5 * jnp.cos(x) * g,))
sin_bad_second_vjp = _custom_vjp(lambda x, g: (jnp.cos(funcgrad.stop_gradient(x)) * g,))


# --- check_grads passes on correct functions ------------------------------------------------------

@pytest.mark.parametrize("order", [1, 2, 3])
def test_check_grads_passes_on_correct_functions(order):
    check_grads(lambda a, b: jnp.sin(a) * b + jnp.exp(a), (X, Y), order=order)
    check_grads(lambda a: jnp.sum(jnp.tanh(a) ** 2), (X,), order=order)
    check_grads(lambda a: a @ a.T, (Y,), order=order)


def test_check_grads_pytrees_in_and_out():
    def f(params, x):
        h = jnp.tanh(params["w"] @ x + params["b"])
        return {"out": h, "norm": (jnp.sum(h * h), jnp.max(h))}
    params = {"w": Y, "b": np.array([0.1, -0.2])}
    check_grads(f, (params, X), order=2)


def test_check_grads_correct_custom_rules():
    check_grads(sin_good_jvp, (X,), order=2)
    check_grads(sin_good_vjp, (X,), order=2, modes=("rev",))


def test_check_grads_ignores_integer_arguments_and_outputs():
    def f(x, n):
        return x * n.astype(x.dtype), jnp.argmax(x)
    check_grads(f, (X, np.array([1, 2, 3])), order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_check_grads_low_precision_defaults(dtype):
    x = X.astype(dtype)
    check_grads(lambda a: jnp.sin(a) * a + a, (x,), order=2)
    with pytest.raises(AssertionError):
        check_grads(lambda a: sin_bad_jvp(a) * a, (x,), order=1, modes=("fwd",))


# --- and raises AssertionError on wrong rules, at order 1 and order 2 -----------------------------

def test_wrong_jvp_rule_fails_at_order_1():
    with pytest.raises(AssertionError) as e:
        check_grads(sin_bad_jvp, (X,), order=1, modes=("fwd",))
    msg = str(e.value)
    assert "forward mode" in msg and "order 1" in msg
    assert "index (" in msg and "expected" in msg and "got" in msg
    # reverse mode transposes the same wrong rule: caught there too
    with pytest.raises(AssertionError, match="reverse mode.*order 1"):
        check_grads(sin_bad_jvp, (X,), order=1, modes=("rev",))


def test_wrong_vjp_rule_fails_at_order_1():
    with pytest.raises(AssertionError) as e:
        check_grads(sin_bad_vjp, (X,), order=1, modes=("rev",))
    msg = str(e.value)
    assert "reverse mode (VJP)" in msg and "order 1" in msg
    assert "worst cotangent entry at index (" in msg and "expected" in msg and "got" in msg


def test_wrong_second_derivative_of_custom_jvp_fails_at_order_2_only():
    check_grads(sin_bad_second_jvp, (X,), order=1)
    with pytest.raises(AssertionError, match="order 2"):
        check_grads(sin_bad_second_jvp, (X,), order=2)
    with pytest.raises(AssertionError, match=r"forward mode \(JVP of JVP\), order 2"):
        check_grads(sin_bad_second_jvp, (X,), order=2, modes=("fwd",))
    with pytest.raises(AssertionError, match=r"reverse mode \(VJP of VJP\), order 2"):
        check_grads(sin_bad_second_jvp, (X,), order=2, modes=("rev",))


def test_wrong_second_derivative_of_custom_vjp_fails_at_order_2_only():
    check_grads(sin_bad_second_vjp, (X,), order=1, modes=("rev",))
    with pytest.raises(AssertionError, match=r"reverse mode \(VJP of VJP\), order 2"):
        check_grads(sin_bad_second_vjp, (X,), order=2, modes=("rev",))


def test_wrong_rule_inside_a_larger_function_with_pytrees():
    def f(p):
        return {"y": sin_bad_vjp(p["a"]) * p["b"]}
    p = {"a": X, "b": np.array([2.0, -1.0, 0.5])}
    check_grads(lambda p: {"y": jnp.sin(p["a"]) * p["b"]}, (p,), order=2)
    with pytest.raises(AssertionError, match="reverse mode"):
        check_grads(f, (p,), order=1, modes=("rev",))


def test_check_grads_rejects_bad_modes():
    with pytest.raises(ValueError):
        check_grads(jnp.sin, (X,), modes=("sideways",))


# --- check_jvp / check_vjp with user-supplied derivative functions --------------------------------

def test_check_jvp_with_supplied_jvp():
    f = jnp.sin

    def good(primals, tangents):
        return jnp.sin(primals[0]), jnp.cos(primals[0]) * tangents[0]

    def bad(primals, tangents):
        return jnp.sin(primals[0]), -jnp.cos(primals[0]) * tangents[0]
    check_jvp(f, good, (X,))
    with pytest.raises(AssertionError, match="check_jvp"):
        check_jvp(f, bad, (X,))


def test_check_vjp_with_supplied_vjp():
    f = jnp.sin

    def good(x):
        return jnp.sin(x), lambda g: (jnp.cos(x) * g,)

    def bad(x):
        return jnp.sin(x), lambda g: (jnp.sin(x) * g,)
    check_vjp(f, good, (X,))
    with pytest.raises(AssertionError, match="check_vjp"):
        check_vjp(f, bad, (X,))


def test_check_jvp_reports_wrong_primal_output():
    with pytest.raises(AssertionError, match="primal output"):
        check_jvp(jnp.sin, lambda p, t: (jnp.cos(p[0]), jnp.cos(p[0]) * t[0]), (X,))


# --- import behaviour -----------------------------------------------------------------------------

def test_import_does_not_need_hypothesis():
    code = ("import sys; import funcgrad.testing as t; t.check_grads; "
            "assert 'hypothesis' not in sys.modules, 'hypothesis imported eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_strategies_are_reexported():
    from funcgrad.testing import strategies
    for name in ("arrays", "shapes", "broadcastable_shapes", "mutually_broadcastable_shapes",
                 "broadcastable_shape_pairs", "float_dtypes", "dtypes"):
        assert getattr(fgt, name) is getattr(strategies, name)
    with pytest.raises(AttributeError):
        fgt.no_such_strategy


# --- the strategies produce what they promise -----------------------------------------------------

@given(fgt.arrays(np.float64, (2, 3)))
def test_arrays_fixed_dtype_and_shape(a):
    assert isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == (2, 3)
    assert np.all(np.isfinite(a)) and np.all(np.abs(a) <= 10)


@given(fgt.arrays(fgt.float_dtypes(), fgt.shapes(max_dims=2)))
def test_arrays_from_strategies(a):
    assert isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim <= 2
    assert np.all(np.isfinite(a))


@given(fgt.arrays(np.float32, fgt.shapes(), elements=st.floats(0.5, 2.0)))
def test_arrays_custom_elements(a):
    assert a.dtype == np.float32
    assert np.all(a >= np.float32(0.5)) and np.all(a <= np.float32(2.0))


@given(fgt.arrays(fgt.dtypes("bi"), (4,)))
def test_arrays_bool_and_integer(a):
    assert a.shape == (4,) and (a.dtype == np.bool_ or a.dtype.kind in "iu")


@given(fgt.arrays(np.complex128, (3,)))
def test_arrays_complex(a):
    assert a.dtype == np.complex128 and np.all(np.abs(a) <= 10 + 1e-9)


@given(fgt.shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
def test_shapes_within_bounds(s):
    assert isinstance(s, tuple) and 1 <= len(s) <= 3 and all(2 <= n <= 4 for n in s)


@given(fgt.shapes())
def test_shapes_defaults(s):
    assert 0 <= len(s) <= 3 and all(1 <= n <= 5 for n in s)


@given(st.data())
def test_broadcastable_shapes_broadcast_with_the_shape(data):
    base = data.draw(fgt.shapes(min_side=2))
    s = data.draw(fgt.broadcastable_shapes(base))
    assert len(s) <= len(base)
    assert np.broadcast_shapes(s, base) == base


@given(fgt.broadcastable_shape_pairs())
def test_broadcastable_shape_pairs(pair):
    a, b = pair
    np.broadcast_shapes(a, b)  # raises if they do not broadcast
    assert len(a) <= 3 and len(b) <= 3


@given(fgt.mutually_broadcastable_shapes(num_shapes=3, max_dims=2))
def test_mutually_broadcastable_shapes(shapes):
    assert len(shapes) == 3
    np.broadcast_shapes(*shapes)


@given(fgt.float_dtypes())
def test_float_dtypes(dt):
    assert dt in (np.float16, np.float32, np.float64)


@given(fgt.float_dtypes(sizes=(32,)))
def test_float_dtypes_sizes(dt):
    assert dt == np.float32


@given(fgt.dtypes("c"))
def test_dtypes_kinds(dt):
    assert dt.kind == "c"


@given(fgt.arrays(np.float64, fgt.shapes(max_dims=2), elements=st.floats(-1, 1)))
def test_strategies_drive_check_grads(a):
    check_grads(lambda x: jnp.sin(x) * x, (a,), order=1)


# --- the special-points family --------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["real", "nonnegative", "positive", "unit", "nonzero"])
@given(data=st.data())
def test_special_points_hold_special_values_of_their_kind(kind, data):
    dt = data.draw(st.sampled_from([np.float64, np.float32]))
    x = data.draw(fgt.special_points(dt, (3, 2), kind=kind, bounds=(0.25,) if kind != "positive" else ()))
    assert x.dtype == dt and x.shape == (3, 2)
    fi = np.finfo(dt)
    expected = {0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, float(fi.tiny), -float(fi.tiny), float(fi.eps),
                1.0 - float(fi.epsneg)}
    assert any(float(v) in expected for v in x.ravel())  # at least one special entry
    lo, hi = {"real": (-3, 3), "nonnegative": (0, 3), "positive": (0, 3), "unit": (-1, 1),
              "nonzero": (-3, 3)}[kind]
    assert np.all((x >= min(lo, -1.25)) & (x <= max(hi, 1.25)))  # inside the kind's domain (+- bounds)
    if kind == "positive":
        assert np.all(x > 0)
    if kind == "nonzero":
        assert np.all(x != 0)


def test_special_points_reach_every_special_value():
    seen = set()

    @given(fgt.special_points(np.float64, (4,), kind="unit", bounds=(0.75,)))
    def collect(x):
        seen.update(float(v) for v in x)
    collect()
    assert {0.0, 1.0, -1.0, 0.75} <= seen
    assert any(math.copysign(1.0, v) < 0 and v == 0 for v in seen) or -0.0 in seen


@given(fgt.special_points(np.float64, (3,), allow_nan=True, allow_infinity=True, huge=True, min_special=3))
def test_special_points_min_special_and_nonfinite(x):
    fi = np.finfo(np.float64)
    specials = [0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, fi.tiny, -fi.tiny, fi.eps, fi.max ** 0.25,
                -fi.max ** 0.25, np.inf, -np.inf]
    assert all(np.isnan(v) or v in specials for v in x)


@pytest.mark.parametrize("which", ["max", "min", "both"])
@given(data=st.data())
def test_ties_repeat_the_extreme(which, data):
    x = data.draw(fgt.ties(np.float64, fgt.shapes(min_dims=1, max_dims=2, min_side=2), which=which))
    if which in ("max", "both"):
        assert int(np.sum(x == x.max())) >= 2
    if which in ("min", "both"):
        assert int(np.sum(x == x.min())) >= 2


def test_ties_need_two_entries():
    with pytest.raises(ValueError, match="fewer than two"):
        fgt.ties(np.float64, (1,)).example()


@given(fgt.arrays_with_zeros(np.float64, (5,), min_zeros=1, max_zeros=3))
def test_arrays_with_zeros_count(x):
    assert 1 <= int(np.sum(x == 0)) <= 3
    assert np.prod(x) == 0


@pytest.mark.parametrize("n,rank", [(2, 0), (2, 1), (3, 1), (3, 2), (4, 3)])
@given(data=st.data())
def test_singular_matrices_have_their_rank(n, rank, data):
    sym = data.draw(st.booleans())
    m = data.draw(fgt.singular_matrices(n, rank=rank, batch_shape=(2,), symmetric=sym))
    assert m.shape == (2, n, n)
    for a in m:
        assert np.linalg.matrix_rank(a) == rank
        assert np.linalg.det(a) == pytest.approx(0.0, abs=1e-9)
        if sym:
            np.testing.assert_array_equal(a, a.T)
            assert np.all(np.linalg.eigvalsh(a) > -1e-9)


def test_singular_matrices_reject_full_rank():
    with pytest.raises(ValueError, match="rank must be in"):
        fgt.singular_matrices(3, rank=3).example()


def test_special_strategies_are_exported():
    import funcgrad.testing.strategies as s
    for name in ("special_values", "special_points", "ties", "arrays_with_zeros", "singular_matrices"):
        assert getattr(fgt, name) is getattr(s, name) and name in s.__all__
        assert ">>>" in getattr(s, name).__doc__
