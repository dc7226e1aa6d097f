"""Eager and traced paths check the same things, as in JAX, and nothing gives a silently wrong answer:

1. converting a traced value to a Python/NumPy value that cannot carry the derivative (float(), complex(),
   math.*, numpy functions, numpy.asarray, tolist()) raises under grad/jvp/vjp/jacfwd/jacrev/hessian as
   under jit/vmap, naming the user's line and the fix; bool()/int()/index/item() of values keep working
   (Python control flow over values under grad), and values with no derivative (stop_gradient, integer
   casts, rounding, comparisons) are plain values that convert. The torch face keeps torch.func's rules.
2. lax.scan/cond/switch/fori_loop/while_loop check carry and branch types eagerly as when traced.
3. every transform's signature rejects unknown keywords (TypeError), as JAX's.

Each case runs on funcgrad with its exact expected outcome, and on JAX 0.10 / torch 2 where installed.
"""
from __future__ import annotations

import copy
import math
import operator
import pickle

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import errors as ferrors
from funcgrad import lax as flax

try:
    import jax
    import jax.numpy as jjnp
    from jax import lax as jlax
except ImportError:  # the reference runs only where JAX is installed
    jax = None


def _libs():
    out = [("funcgrad", funcgrad, fnp, flax, ferrors)]
    if jax is not None:
        out.append(("jax", jax, jjnp, jlax, jax.errors))
    return out


LIBS = _libs()
LIB_IDS = [n for n, *_ in LIBS]


@pytest.fixture(scope="module", autouse=True)
def _jax_default_mode():
    """JAX in its default mode (x64 off), as funcgrad here (tests/conftest.py): the expectations are of that
    mode, whatever another module left JAX's global flag at."""
    if jax is None:
        yield
        return
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", prev)


# --- 1. conversions of traced values ------------------------------------------------------------------

def _transforms(lib):
    return {
        "grad": lambda f: lib.grad(f)(1.5),
        "value_and_grad": lambda f: lib.value_and_grad(f)(1.5),
        "jvp": lambda f: lib.jvp(f, (1.5,), (1.0,)),
        "vjp": lambda f: lib.vjp(f, 1.5)[1](1.0),
        "jacfwd": lambda f: lib.jacfwd(f)(1.5),
        "jacrev": lambda f: lib.jacrev(f)(1.5),
        "hessian": lambda f: lib.hessian(f)(1.5),
        "grad_of_grad": lambda f: lib.grad(lib.grad(f))(1.5),
    }


TRANSFORMS = list(_transforms(funcgrad))

# (name, function of (x, jnp, lax), the error class name both libraries raise)
RAISING = [
    ("float", lambda x, jnp, lax: float(x) * x, "ConcretizationTypeError"),
    ("complex", lambda x, jnp, lax: complex(x).real * x, "ConcretizationTypeError"),
    ("math.exp", lambda x, jnp, lax: math.exp(x) * x, "ConcretizationTypeError"),
    ("math.floor", lambda x, jnp, lax: math.floor(x) * x, "ConcretizationTypeError"),
    ("tolist", lambda x, jnp, lax: x.tolist() * x, "ConcretizationTypeError"),
    ("np.sin", lambda x, jnp, lax: np.sin(x) * x, "TracerArrayConversionError"),
    ("np.asarray", lambda x, jnp, lax: np.asarray(x) * x, "TracerArrayConversionError"),
    ("np.float64", lambda x, jnp, lax: np.float64(x) * x, "TracerArrayConversionError"),
    ("np.array_of_list", lambda x, jnp, lax: np.array([x, x]).sum() * x, "TracerArrayConversionError"),
    ("__array__", lambda x, jnp, lax: x.__array__() * x, "TracerArrayConversionError"),
    ("tobytes", lambda x, jnp, lax: len(x.tobytes()) * x, "ConcretizationTypeError"),
    ("pickle", lambda x, jnp, lax: len(pickle.dumps(x)) * x, "ConcretizationTypeError"),
]


def _error_class(errors, name):
    return getattr(errors, name)


@pytest.mark.parametrize("lib_name,lib,jnp,lax,errors", LIBS, ids=LIB_IDS)
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("case", RAISING, ids=[c[0] for c in RAISING])
def test_conversions_that_would_drop_the_derivative_raise(lib_name, lib, jnp, lax, errors, transform, case):
    _, fn, err = case
    with pytest.raises(_error_class(errors, err)) as info:
        _transforms(lib)[transform](lambda x: fn(x, jnp, lax))
    assert isinstance(info.value, TypeError)  # JAX's ConcretizationTypeError family are TypeErrors
    if lib_name == "funcgrad":
        msg = str(info.value)
        assert __file__ in msg  # the user's source line
        assert "stop_gradient" in msg  # and the fix
        assert "funcgrad.numpy" in msg or case[0] in ("tobytes", "pickle")


@pytest.mark.parametrize("case", RAISING, ids=[c[0] for c in RAISING])
@pytest.mark.parametrize("how", ["jit", "vmap"])
def test_the_same_conversions_raise_under_jit_and_vmap(case, how):
    _, fn, err = case
    f = (lambda x: fn(x, fnp, flax))
    run = (lambda: funcgrad.jit(f)(1.5)) if how == "jit" else (lambda: funcgrad.vmap(f)(fnp.ones(3)))
    with pytest.raises(getattr(ferrors, err)):
        run()


def _step(x):
    return 1.0 if x > 0 else -1.0  # Python control flow over the value


# (name, function, exact derivative at 1.5): conversions that keep working under grad, as in JAX
WORKING = [
    ("bool_control_flow", lambda x, jnp, lax: x * 2.0 if x > 0 else -x, 2.0),
    ("comparison_value", lambda x, jnp, lax: _step(x) * x ** 2, 3.0),
    ("int", lambda x, jnp, lax: int(x) * x, 1.0),
    ("index", lambda x, jnp, lax: [1.0, 2.0, 3.0][operator.index(x.astype(int))] * x, 2.0),
    ("range", lambda x, jnp, lax: sum(range(x.astype(int) + 1)) * x, 1.0),
    ("item", lambda x, jnp, lax: x.item() * x, 1.5),
    ("float_of_stop_gradient", lambda x, jnp, lax: float(lax.stop_gradient(x) * 2) * x, 3.0),
    ("float_of_floor", lambda x, jnp, lax: float(jnp.floor(x)) * x, 1.0),
    ("float_of_integer_cast", lambda x, jnp, lax: float(x.astype(int)) * x, 1.0),
    ("float_of_sign", lambda x, jnp, lax: float(jnp.sign(x)) * x, 1.0),
    ("float_of_comparison", lambda x, jnp, lax: float(x > 0) * x, 1.0),
    ("float_of_where_constants", lambda x, jnp, lax: float(jnp.where(x > 0, 1.0, 2.0)) * x, 1.0),
    ("float_of_argmax", lambda x, jnp, lax: float(jnp.argmax(jnp.stack([x, 2 * x]))) * x, 1.0),
    ("float_of_independent_value", lambda x, jnp, lax: float(jnp.ones(())) * x, 1.0),
    ("deepcopy", lambda x, jnp, lax: copy.deepcopy({"a": x})["a"] * x, 3.0),
    ("shape_from_data", lambda x, jnp, lax: jnp.sum(jnp.ones(x.astype(int) + 1)) * x, 2.0),
    ("index_array_from_data", lambda x, jnp, lax: jnp.arange(5.0)[x.astype(int)] * x, 1.0),
]


@pytest.mark.parametrize("lib_name,lib,jnp,lax,errors", LIBS, ids=LIB_IDS)
@pytest.mark.parametrize("case", WORKING, ids=[c[0] for c in WORKING])
def test_conversions_of_values_keep_working_under_grad(lib_name, lib, jnp, lax, errors, case):
    _, fn, want = case
    f = lambda x: fn(x, jnp, lax)  # noqa: E731
    assert float(lib.grad(f)(1.5)) == pytest.approx(want, rel=1e-6)
    _, t = lib.jvp(f, (1.5,), (1.0,))
    assert float(t) == pytest.approx(want, rel=1e-6)
    assert float(lib.jacrev(f)(1.5)) == pytest.approx(want, rel=1e-6)


def test_print_of_a_value_inside_grad_works_only_without_derivative(capsys):
    def loss(w):
        y = fnp.sum(w ** 2)
        print(f"loss {float(funcgrad.lax.stop_gradient(y)):.2f}")  # a logged value, no derivative through it
        return y
    g = funcgrad.grad(loss)(fnp.asarray([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(g), [2.0, 4.0])
    assert "loss 5.00" in capsys.readouterr().out
    with pytest.raises(ferrors.ConcretizationTypeError):
        funcgrad.grad(lambda w: fnp.sum(w ** 2) * float(fnp.sum(w)))(fnp.asarray([1.0, 2.0]))


def test_the_zero_derivative_through_python_is_never_returned_silently():
    # the reported bug: these returned 0.0 with no error
    with pytest.raises(ferrors.TracerArrayConversionError, match="numpy"):
        funcgrad.grad(lambda x: np.sin(x))(1.0)
    with pytest.raises(ferrors.ConcretizationTypeError, match="float"):
        funcgrad.grad(lambda x: float(x))(1.0)


# --- the torch face: torch.func's rules --------------------------------------------------------------

def _torch_libs():
    out = [("funcgrad", funcgrad)]
    try:
        import torch
        out.append(("torch", torch))
    except ImportError:
        pass
    return out


TORCH_LIBS = _torch_libs()


@pytest.mark.parametrize("name,torch", TORCH_LIBS, ids=[n for n, _ in TORCH_LIBS])
@pytest.mark.parametrize("conv", ["float", "int", "item", "tolist", "math.exp"])
def test_torch_func_grad_converts_values_as_torch(name, torch, conv):
    f = {"float": lambda x: float(x) * x, "int": lambda x: int(x) * x, "item": lambda x: x.item() * x,
         "tolist": lambda x: x.tolist() * x, "math.exp": lambda x: math.exp(x) * x}[conv]
    x = torch.tensor(1.5, dtype=torch.float64)
    want = {"float": 1.5, "int": 1.0, "item": 1.5, "tolist": 1.5, "math.exp": math.exp(1.5)}[conv]
    assert float(torch.func.grad(f)(x)) == pytest.approx(want, rel=1e-12)
    with pytest.raises(RuntimeError):  # no value under vmap
        torch.func.vmap(f)(x.reshape(1))


@pytest.mark.parametrize("name,torch", TORCH_LIBS, ids=[n for n, _ in TORCH_LIBS])
@pytest.mark.parametrize("how", ["grad", "jvp", "vmap"])
def test_torch_func_numpy_of_a_traced_tensor_raises_runtime_error(name, torch, how):
    f = lambda x: torch.tensor(np.sin(x.numpy())) * x  # noqa: E731
    x = torch.tensor(1.5, dtype=torch.float64)
    run = {"grad": lambda: torch.func.grad(f)(x), "jvp": lambda: torch.func.jvp(f, (x,), (x,)),
           "vmap": lambda: torch.func.vmap(f)(x.reshape(1))}[how]
    with pytest.raises(RuntimeError):
        run()


def test_torch_item_and_float_outside_transforms_are_unchanged():
    t = funcgrad.tensor([2.5], requires_grad=True)
    assert t.item() == 2.5 and float(t) == 2.5 and int(t) == 2
    assert funcgrad.tensor(3).__index__() == 3


# --- 2. control flow: carry and branch types ------------------------------------------------------------

def _z(jnp, n):
    return jnp.zeros(n, dtype=jnp.float32)


# (name, call(jnp, lax), words the funcgrad message must hold); each must raise TypeError eagerly and traced
CF_ERRORS = [
    ("scan_shape", lambda jnp, lax: lax.scan(lambda c, x: (_z(jnp, 4), x), _z(jnp, 3), jnp.ones(5)),
     ["scan", "f32[3]", "f32[4]", "shapes"]),
    ("scan_dtype", lambda jnp, lax: lax.scan(lambda c, x: (c.astype(jnp.int32), x), _z(jnp, 3), jnp.ones(5)),
     ["scan", "f32[3]", "i32[3]", "dtypes"]),
    ("scan_structure", lambda jnp, lax: lax.scan(lambda c, x: ([c[0], c[1]], x), (_z(jnp, 3), _z(jnp, 3)),
                                                 jnp.ones(5)), ["scan", "structure"]),
    ("scan_weak_float_carry_int_out", lambda jnp, lax: lax.scan(lambda c, x: (jnp.int32(1), x), 0.0,
                                                                 _z(jnp, 3)), ["scan", "dtypes"]),
    ("cond_shape", lambda jnp, lax: lax.cond(True, lambda x: x, lambda x: _z(jnp, 4), _z(jnp, 3)),
     ["cond", "true_fun", "false_fun", "f32[3]", "f32[4]"]),
    ("cond_dtype", lambda jnp, lax: lax.cond(False, lambda x: x, lambda x: x.astype(jnp.int32), _z(jnp, 3)),
     ["cond", "i32[3]"]),
    ("cond_structure", lambda jnp, lax: lax.cond(True, lambda x: (x, x), lambda x: [x, x], _z(jnp, 3)),
     ["cond", "structure"]),
    ("switch_shape", lambda jnp, lax: lax.switch(1, [lambda x: x, lambda x: _z(jnp, 4)], _z(jnp, 3)),
     ["switch", "branch 1", "f32[4]"]),
    ("switch_float_index", lambda jnp, lax: lax.switch(1.0, [lambda x: x, lambda x: x], _z(jnp, 3)),
     ["switch", "integer"]),
    ("fori_shape", lambda jnp, lax: lax.fori_loop(0, 3, lambda i, c: _z(jnp, 4), _z(jnp, 3)),
     ["fori_loop", "f32[3]", "f32[4]"]),
    ("fori_dtype", lambda jnp, lax: lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), _z(jnp, 3)),
     ["fori_loop", "i32[3]"]),
    ("fori_zero_trips", lambda jnp, lax: lax.fori_loop(0, 0, lambda i, c: _z(jnp, 4), _z(jnp, 3)),
     ["fori_loop", "f32[4]"]),
    ("fori_structure", lambda jnp, lax: lax.fori_loop(0, 3, lambda i, c: [c[0]], (_z(jnp, 3),)),
     ["fori_loop", "structure"]),
    ("fori_float_bound", lambda jnp, lax: lax.fori_loop(0.0, 3, lambda i, c: c, _z(jnp, 3)),
     ["fori_loop", "lower and upper"]),
    ("while_shape", lambda jnp, lax: lax.while_loop(lambda c: c.sum() < 3, lambda c: _z(jnp, 4) + 5, _z(jnp, 3)),
     ["while_loop", "f32[3]", "f32[4]"]),
    ("while_zero_trips", lambda jnp, lax: lax.while_loop(lambda c: False, lambda c: _z(jnp, 4), _z(jnp, 3)),
     ["while_loop", "f32[4]"]),
    ("while_cond_not_bool", lambda jnp, lax: lax.while_loop(lambda c: c.sum(), lambda c: c + 1, _z(jnp, 3)),
     ["while_loop", "boolean scalar", "f32[]"]),
    ("while_cond_not_scalar", lambda jnp, lax: lax.while_loop(lambda c: c < 3, lambda c: c + 1, _z(jnp, 3)),
     ["while_loop", "boolean scalar", "bool[3]"]),
]


@pytest.mark.parametrize("lib_name,lib,jnp,lax,errors", LIBS, ids=LIB_IDS)
@pytest.mark.parametrize("case", CF_ERRORS, ids=[c[0] for c in CF_ERRORS])
@pytest.mark.parametrize("how", ["eager", "jit", "grad"])
def test_control_flow_type_errors_eager_and_traced(lib_name, lib, jnp, lax, errors, case, how):
    _, call, words = case
    if how == "eager":
        run = lambda: call(jnp, lax)  # noqa: E731
    elif how == "jit":
        run = lambda: lib.jit(lambda: call(jnp, lax))()  # noqa: E731
    else:  # inside a differentiated function (funcgrad's value-carrying trace)
        run = lambda: lib.grad(lambda y: y * jnp.sum(jnp.asarray(  # noqa: E731
            lib.tree_util.tree_leaves(call(jnp, lax))[0], dtype=jnp.float32)))(1.0)
    with pytest.raises(TypeError) as info:
        run()
    if lib_name == "funcgrad":
        for w in words:
            assert w in str(info.value)


def _describe(tree):
    leaves = funcgrad.tree_util.tree_leaves(tree)
    return [(str(np.dtype(x.dtype)), tuple(x.shape), bool(getattr(x, "weak_type", False))) for x in leaves]


# (name, call, expected leaves (dtype, shape, weak_type) as JAX gives them with x64 off)
CF_ACCEPTED = [
    ("scan_weak_float_carry", lambda jnp, lax: lax.scan(lambda c, x: (c + x, x), 0.0, _z(jnp, 5) + 1),
     [("float32", (), False), ("float32", (5,), False)]),
    ("scan_weak_int_carry_promoted", lambda jnp, lax: lax.scan(lambda c, x: (c + x, x), 0, _z(jnp, 5) + 1)[0],
     [("float32", (), False)]),
    ("scan_strong_carry_weak_out", lambda jnp, lax: lax.scan(lambda c, x: (1.0, x), jnp.float32(0), _z(jnp, 5))[0],
     [("float32", (), True)]),
    ("scan_zero_length", lambda jnp, lax: lax.scan(lambda c, x: (c, x * 2.0), _z(jnp, 3), jnp.ones((0, 2))),
     [("float32", (3,), False), ("float32", (0, 2), False)]),
    ("cond_weak_branch_0", lambda jnp, lax: lax.cond(True, lambda x: x[0], lambda x: 1.0, _z(jnp, 3)),
     [("float32", (), True)]),
    ("switch_strong_branch_0", lambda jnp, lax: lax.switch(1, [lambda x: x[0], lambda x: 1.0], _z(jnp, 3)),
     [("float32", (), False)]),
    ("fori_weak_float_carry", lambda jnp, lax: lax.fori_loop(0, 3, lambda i, c: c + _z(jnp, 3)[0], 0.0),
     [("float32", (), False)]),
    ("fori_weak_int_carry_promoted", lambda jnp, lax: lax.fori_loop(0, 3, lambda i, c: c + _z(jnp, 3)[0], 0),
     [("float32", (), False)]),
    ("fori_zero_trips_weak", lambda jnp, lax: lax.fori_loop(0, 0, lambda i, c: c + 1.5, 0),
     [("float32", (), False)]),
    ("while_weak_int_carry_promoted", lambda jnp, lax: lax.while_loop(lambda c: c < 3, lambda c: c + _z(jnp, 3)[0] + 1,
                                                                      0), [("float32", (), False)]),
    ("while_python_bool_cond", lambda jnp, lax: lax.while_loop(lambda c: False, lambda c: c, _z(jnp, 3)),
     [("float32", (3,), False)]),
    ("fori_python_int_and_int32_bounds", lambda jnp, lax: lax.fori_loop(0, jnp.int32(3), lambda i, c: c + 1.0,
                                                                        _z(jnp, 2)), [("float32", (2,), False)]),
]


@pytest.mark.parametrize("lib_name,lib,jnp,lax,errors", LIBS, ids=LIB_IDS)
@pytest.mark.parametrize("case", CF_ACCEPTED, ids=[c[0] for c in CF_ACCEPTED])
def test_control_flow_accepts_what_jax_accepts(lib_name, lib, jnp, lax, errors, case):
    _, call, want = case
    assert _describe(call(jnp, lax)) == want
    assert [(d, s) for d, s, _ in _describe(lib.jit(lambda: call(jnp, lax))())] == [(d, s) for d, s, _ in want]


def test_eager_loops_compute_the_traced_loops_values():
    body = lambda i, c: c * 1.5 + i  # noqa: E731
    eager = flax.fori_loop(0, 4, body, fnp.ones(3))
    traced = funcgrad.jit(lambda c: flax.fori_loop(0, 4, body, c))(fnp.ones(3))
    want = np.ones(3)
    for i in range(4):
        want = want * 1.5 + i
    np.testing.assert_allclose(np.asarray(eager), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(traced), want, rtol=1e-6)
    c, ys = flax.scan(lambda c, x: (c + x, c * x), 0.0, fnp.arange(4.0))
    assert float(c) == 6.0
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 0.0, 2.0, 9.0])  # y = c * x before c += x


def test_eager_scan_rejects_ys_whose_type_changes_between_steps():
    with pytest.raises(TypeError, match="different types"):
        flax.scan(lambda c, x: (c, fnp.ones(2) if float(x) > 1 else fnp.ones(3)), 0.0, fnp.arange(3.0))


# --- 3. signatures: unknown keywords raise TypeError -------------------------------------------------------

def _f(x, n=1):
    return x * n


SIGNATURE_CALLS = [
    ("jit", lambda lib, lax, x: lib.jit(_f, static_argnum=1)),
    ("jit_decorator", lambda lib, lax, x: lib.jit(static_argnumss=1)),
    ("grad", lambda lib, lax, x: lib.grad(_f, argnum=0)),
    ("value_and_grad", lambda lib, lax, x: lib.value_and_grad(_f, has_auxx=True)),
    ("vmap", lambda lib, lax, x: lib.vmap(_f, in_axis=0)),
    ("jvp", lambda lib, lax, x: lib.jvp(_f, (x,), (x,), hasaux=True)),
    ("vjp", lambda lib, lax, x: lib.vjp(_f, x, hasaux=True)),
    ("jacfwd", lambda lib, lax, x: lib.jacfwd(_f, argnum=0)),
    ("jacrev", lambda lib, lax, x: lib.jacrev(_f, argnum=0)),
    ("hessian", lambda lib, lax, x: lib.hessian(_f, argnum=0)),
    ("checkpoint", lambda lib, lax, x: lib.checkpoint(_f, polcy=None)),
    ("custom_jvp", lambda lib, lax, x: lib.custom_jvp(_f, nondiff_argnum=(1,))),
    ("custom_vjp", lambda lib, lax, x: lib.custom_vjp(_f, nondiff_argnum=(1,))),
    ("pmap", lambda lib, lax, x: lib.pmap(_f, axisname="i")),
    ("make_jaxpr", lambda lib, lax, x: lib.make_jaxpr(_f, static_argnum=1)),
    ("linearize", lambda lib, lax, x: lib.linearize(_f, x, hasaux=True)),
    ("scan", lambda lib, lax, x: lax.scan(lambda c, y: (c, y), x, None, length=1, revers=True)),
    ("cond", lambda lib, lax, x: lax.cond(True, _f, _f, x, operands=x)),
    ("switch", lambda lib, lax, x: lax.switch(0, [_f], x, operands=x)),
    ("while_loop", lambda lib, lax, x: lax.while_loop(lambda c: False, _f, x, max_iter=1)),
    ("fori_loop", lambda lib, lax, x: lax.fori_loop(0, 1, lambda i, c: c, x, unrol=1)),
    ("map", lambda lib, lax, x: lax.map(_f, x, batchsize=1)),
]


@pytest.mark.parametrize("lib_name,lib,jnp,lax,errors", LIBS, ids=LIB_IDS)
@pytest.mark.parametrize("case", SIGNATURE_CALLS, ids=[c[0] for c in SIGNATURE_CALLS])
def test_unknown_keywords_raise_type_error(lib_name, lib, jnp, lax, errors, case):
    _, call = case
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        call(lib, lax, jnp.ones(1))


def test_jax_keywords_are_accepted():
    x = fnp.asarray(2.0)
    f = funcgrad.jit(_f, static_argnames="n", donate_argnames="x", keep_unused=True, inline=True,
                     compiler_options={}, backend=None, device=None)
    assert float(f(x, n=3)) == 6.0
    assert float(funcgrad.jit(static_argnums=1)(_f)(x, 4)) == 8.0
    assert float(funcgrad.grad(funcgrad.checkpoint(_f, static_argnames="n", prevent_cse=False))(x, 3)) == 3.0
    g = funcgrad.custom_jvp(_f, nondiff_argnames=("n",))
    g.defjvp(lambda n, primals, tangents: (_f(primals[0], n), tangents[0] * n * 10))
    assert float(funcgrad.grad(g)(x, 2)) == 20.0
    jaxpr, shapes = funcgrad.make_jaxpr(lambda a: (a * 2, a.sum()), return_shape=True)(fnp.ones(3))
    assert [(s.shape, str(s.dtype)) for s in shapes] == [((3,), "float32"), ((), "float32")]
    out, f_jvp, aux = funcgrad.linearize(lambda a: (fnp.sin(a), a * 3), x, has_aux=True)
    assert float(f_jvp(1.0)) == pytest.approx(math.cos(2.0), rel=1e-6) and float(aux) == 6.0
    assert float(funcgrad.vjp(_f, x, reduce_axes=())[1](1.0)[0]) == 1.0
    with pytest.raises(TypeError):  # checkpoint's options are keyword-only, as in JAX
        funcgrad.checkpoint(_f, True)
