"""jit: signature cache, static arguments, weak types, the optimisation passes and the generated code."""
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.interpreters import compiler


def test_cache_hits_on_same_signature_and_retraces_on_new_shape():
    traces = []

    def f(x):
        traces.append(x.shape)
        return x * 2.0

    jf = fg.jit(f)
    jf(jnp.ones(3))
    jf(jnp.zeros(3))
    assert len(traces) == 1 and jf._cache_size() == 1
    jf(jnp.ones(4))
    assert len(traces) == 2 and jf._cache_size() == 2
    jf(jnp.ones(3, dtype=jnp.float64))
    assert jf._cache_size() == 3


def test_new_python_scalar_values_do_not_retrace():
    jf = fg.jit(lambda x, s: x * s)
    x = jnp.ones(3)
    for s in [1.0, 2.5, -3.0, 7.0]:
        np.testing.assert_allclose(jf(x, s), np.ones(3) * s)
    assert jf._cache_size() == 1
    assert jf(x, 2.0).dtype == np.float32  # the weak scalar does not promote


def test_static_argnames_and_kwargs():
    def f(x, *, power, scale=1.0):
        return x ** power * scale

    jf = fg.jit(f, static_argnames="power")
    np.testing.assert_allclose(jf(jnp.arange(3.0), power=2, scale=3.0), [0.0, 3.0, 12.0])
    np.testing.assert_allclose(jf(jnp.arange(3.0), power=3, scale=1.0), [0.0, 1.0, 8.0])
    assert jf._cache_size() == 2


def test_pytree_inputs_and_outputs():
    @fg.jit
    def f(p):
        return {"sum": p["a"] + p["b"][0], "prod": p["a"] * p["b"][1]}

    out = f({"a": jnp.ones(2), "b": (jnp.full(2, 2.0), jnp.full(2, 3.0))})
    np.testing.assert_allclose(out["sum"], [3.0, 3.0])
    np.testing.assert_allclose(out["prod"], [3.0, 3.0])


def test_jit_matches_eager_on_mixed_program():
    def f(x, w):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h, axis=1) / jnp.max(jnp.abs(h) + 1.0)

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 5))
    np.testing.assert_allclose(fg.jit(f)(x, w), f(jnp.asarray(x), jnp.asarray(w)), rtol=1e-12)


def test_dead_code_is_eliminated():
    def f(x):
        unused = jnp.exp(x) * 3.0  # noqa: F841
        return jnp.sin(x)

    text = fg.jit(f).lower(jnp.ones(3)).as_text()
    assert "exp" not in text and "sin" in text


def test_common_subexpressions_are_shared():
    def f(x):
        return jnp.sin(x) + jnp.sin(x)

    lowered = fg.jit(f).lower(jnp.ones(3))
    assert lowered.as_text().count("sin") == 1
    np.testing.assert_allclose(fg.jit(f)(jnp.ones(3)), 2 * np.sin(np.ones(3)), rtol=1e-6)


def test_constants_are_folded():
    c = jnp.arange(4.0)

    def f(x):
        return x + jnp.exp(c) * 2.0

    text = fg.jit(f).lower(jnp.ones(4)).as_text()
    assert "exp" not in text and "mul" not in text
    np.testing.assert_allclose(fg.jit(f)(jnp.ones(4)), 1 + np.exp(np.arange(4.0)) * 2, rtol=1e-6)


def test_generated_source_is_straight_line_and_inspectable():
    src = fg.jit(lambda x: jnp.tanh(x) * 2.0).lower(jnp.ones(3)).source()
    assert src.startswith("def compiled(")
    assert "for " not in src and "while " not in src


def test_nested_jit_is_inlined():
    inner = fg.jit(lambda x: jnp.sin(x) * 2.0)
    outer = fg.jit(lambda x: inner(x) + 1.0)
    text = outer.lower(jnp.ones(2)).as_text()
    assert "pjit" not in text and "sin" in text
    np.testing.assert_allclose(outer(jnp.ones(2)), np.sin(1.0) * 2 + 1, rtol=1e-6)


def test_make_jaxpr_prints_like_jax():
    text = str(fg.make_jaxpr(lambda x, y: jnp.sum(x * y))(jnp.ones(3), jnp.ones(3)))
    assert text.startswith("{ lambda ; a:f32[3] b:f32[3]. let")
    assert "c:f32[3] = mul a b" in text
    assert "d:f32[] = reduce_sum[axes=(0,)] c" in text
    assert text.rstrip().endswith("in (d,) }")


def test_outputs_are_immutable_arrays():
    out = fg.jit(lambda x: x + 1.0)(jnp.ones(3))
    assert isinstance(out, fg.Array)
    with pytest.raises(ValueError):
        np.asarray(out)[0] = 5.0


def test_input_forwarded_to_output_and_constant_output():
    f = fg.jit(lambda x, y: (x, jnp.ones(2), y * 1.0))
    a, b, c = f(jnp.arange(2.0), jnp.arange(2.0))
    np.testing.assert_allclose(a, [0.0, 1.0])
    np.testing.assert_allclose(b, [1.0, 1.0])


def test_cache_is_bounded():
    from funcgrad._src.interpreters.jit import config
    old = config.jit_cache_size
    config.jit_cache_size = 2
    try:
        jf = fg.jit(lambda x: x + 1.0)
        for n in range(1, 6):
            jf(jnp.ones(n))
        assert jf._cache_size() == 2
    finally:
        config.jit_cache_size = old


def test_passes_are_pure_functions_of_jaxprs():
    jaxpr = fg.make_jaxpr(lambda x: jnp.sin(x) + jnp.sin(x))(jnp.ones(2))
    before = str(jaxpr)
    compiler.optimize(jaxpr)
    assert str(jaxpr) == before


def test_dead_buffers_are_reused_and_released():
    def f(x):
        y = jnp.exp(x)
        z = y * 2.0
        w = jnp.tanh(y + z)  # y dies here; its buffer may hold the sum
        return w * w

    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    src = fg.jit(f).lower(x).source()
    in_place = [m for m in re.findall(r"^\s+(v\d+) = _\w+\((?:.*, )?(v\d+)\)$", src, re.M) if m[0] == m[1]]
    assert in_place and "del " in src  # a ufunc writes into a dead buffer (out, passed positionally)
    y = np.exp(np.asarray(x))
    np.testing.assert_allclose(fg.jit(f)(x), np.tanh(y + 2 * y) ** 2, rtol=1e-6)


def test_views_are_never_overwritten():
    def f(x):
        y = jnp.exp(x)
        v = y.reshape(4, 3)  # a view of y's buffer
        z = jnp.sin(y) + 1.0  # y dies here, but v still aliases it
        return z, v

    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    z, v = fg.jit(f)(x)
    np.testing.assert_allclose(v, np.exp(np.asarray(x)).reshape(4, 3), rtol=1e-6)
    np.testing.assert_allclose(z, np.sin(np.exp(np.asarray(x))) + 1, rtol=1e-6)


def test_inputs_are_never_overwritten():
    x = jnp.linspace(0.0, 1.0, 6)
    before = np.asarray(x).copy()
    fg.jit(lambda x: jnp.exp(x) * x + 1.0)(x)
    np.testing.assert_array_equal(np.asarray(x), before)


@pytest.mark.parametrize("window", [(1, 1), (2, 2)])
def test_convolution_and_pooling_results_are_written_in_place_but_inputs_never(window):
    """Convolutions, windowed reductions and pooling's selection cards return new buffers, which a
    later elementwise op reuses when they die; a 1x1 "pooling" (whose result equals its operand) must
    still be a new buffer, never the caller's."""
    import funcgrad.lax as lax
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
    k = jnp.asarray(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))

    def f(a, b):
        pooled = lax.reduce_window(a, -jnp.inf, lax.max, (1, 1) + window, (1, 1) + window, "VALID")
        conv = lax.conv_general_dilated(a, b, (1, 1), "SAME")
        return pooled * 2.0 + 1.0, jnp.maximum(conv + 1.0, 0.0)

    before = [np.asarray(v).copy() for v in (x, k)]
    want = f(x, k)
    jf = fg.jit(f)
    src = jf.lower(x, k).source()
    in_place = [m for m in re.findall(r"^\s+(v\d+) = _\w+\((?:.*, )?(v\d+)\)$", src, re.M) if m[0] == m[1]]
    assert len(in_place) >= 2  # the pooled and the convolved buffers are written again
    for _ in range(2):
        got = jf(x, k)
        for g_, w_ in zip(got, want):
            np.testing.assert_allclose(np.asarray(g_), np.asarray(w_), rtol=1e-6)
    for v, b in zip((x, k), before):
        np.testing.assert_array_equal(np.asarray(v), b)


# --- cache behaviour -----------------------------------------------------------------------------

def test_cache_is_an_lru_bounded_by_config_update():
    old = fg.config.read("jit_cache_size")
    fg.config.update("jit_cache_size", 2)
    try:
        traces = []
        jf = fg.jit(lambda x: traces.append(x.shape) or x + 1.0)
        jf(jnp.ones(1))
        jf(jnp.ones(2))
        jf(jnp.ones(1))           # a hit: size 1 becomes the most recently used
        jf(jnp.ones(3))           # evicts size 2, the least recently used
        assert jf._cache_size() == 2 and len(traces) == 3
        jf(jnp.ones(1))
        assert len(traces) == 3   # still cached
        jf(jnp.ones(2))
        assert len(traces) == 4   # was evicted: traced again
    finally:
        fg.config.update("jit_cache_size", old)
    with pytest.raises(ValueError, match="jit_cache_size"):
        fg.config.update("jit_cache_size", 0)


def test_clear_cache_and_cache_size():
    jf = fg.jit(lambda x: x * 2.0)
    jf(jnp.ones(2))
    jf(jnp.ones(3))
    assert jf._cache_size() == 2
    jf.clear_cache()
    assert jf._cache_size() == 0
    np.testing.assert_allclose(jf(jnp.ones(2)), [2.0, 2.0])
    assert jf._cache_size() == 1


def test_static_argument_hits_misses_and_unhashable_error():
    traces = []

    def f(x, n):
        traces.append(n)
        return x * n

    jf = fg.jit(f, static_argnums=1)
    jf(jnp.ones(2), 2)
    jf(jnp.zeros(2), 2)
    assert traces == [2]
    jf(jnp.ones(2), 3)
    assert traces == [2, 3] and jf._cache_size() == 2
    with pytest.raises(ValueError, match=r"static argument 1 of type list is not hashable"):
        jf(jnp.ones(2), [1, 2])
    jg = fg.jit(lambda x, *, opts: x, static_argnames="opts")
    with pytest.raises(ValueError, match=r"static argument 'opts' of type dict"):
        jg(jnp.ones(2), opts={"a": 1})


def test_weak_types_are_part_of_the_signature_but_values_are_not():
    jf = fg.jit(lambda x, s: x * s)
    x = jnp.ones(3, dtype=jnp.float32)
    for s in (1.0, 2.0, -0.5):
        jf(x, s)
    assert jf._cache_size() == 1
    jf(x, 2)                         # a Python int: weak, but another dtype
    assert jf._cache_size() == 2
    out = jf(x, np.float32(2.0))      # a NumPy scalar is strongly typed
    assert jf._cache_size() == 3 and out.dtype == np.float32
    weak_two = fg.jit(lambda s: s * 1.0)(2.0)
    assert weak_two.weak_type
    assert jf(weak_two, 3.0).weak_type  # weak times weak stays weak
    assert jf._cache_size() == 4


def test_numpy_and_funcgrad_arguments_share_a_cache_entry():
    jf = fg.jit(lambda x, y: x + y)
    jf(np.ones(3, np.float32), jnp.ones(3, dtype=jnp.float32))
    jf(jnp.ones(3, dtype=jnp.float32), np.ones(3, np.float32))
    assert jf._cache_size() == 1


def test_python_scalar_signature_follows_enable_x64():
    jf = fg.jit(lambda s: s * 2)
    assert jf(1.5).dtype == np.float32
    old = fg.config.read("enable_x64")
    fg.config.update("enable_x64", True)
    try:
        assert jf(1.5).dtype == np.float64
    finally:
        fg.config.update("enable_x64", old)
    assert jf._cache_size() == 2


def test_log_compiles_names_what_changed(caplog):
    import logging
    old = fg.config.read("log_compiles")
    fg.config.update("log_compiles", True)
    try:
        def f(x, n=1, *, scale=1.0):
            return x * n * scale

        jf = fg.jit(f, static_argnums=1)
        weak_one = fg.jit(lambda s: s * 1.0)(1.0)
        with caplog.at_level(logging.WARNING, logger="funcgrad.jit"):
            jf(jnp.ones(3), 2)
            jf(jnp.ones(3), 2)                          # a hit: no log
            jf(jnp.ones(4), 2)                          # shape
            jf(jnp.ones(4, dtype=jnp.float64), 2)       # dtype
            jf(weak_one, 2)                             # shape and weak type
            jf(jnp.ones(4), 3)                          # static value
            jf(jnp.ones(4), 3, scale=2.0)               # tree structure (a new keyword argument)
        msgs = [r.getMessage() for r in caplog.records
                if r.name == "funcgrad.jit" and r.getMessage().startswith("Compiling f ")]
        assert len(msgs) == 6, msgs
        assert "first compile" in msgs[0]
        assert "shapes changed" in msgs[1] and "float32[3] -> float32[4]" in msgs[1]
        assert "dtypes changed" in msgs[2] and "float64" in msgs[2]
        assert "weak types changed" in msgs[3]
        assert "static argument values changed" in msgs[4] and "2 -> 3" in msgs[4]
        assert "tree structure changed" in msgs[5]
    finally:
        fg.config.update("log_compiles", old)


def test_grad_and_vmap_of_jit_stay_compiled():
    f = fg.jit(lambda x: jnp.sum(jnp.sin(x) * x))
    x = jnp.linspace(0.0, 1.0, 5)
    assert "pjit" in str(fg.make_jaxpr(fg.grad(f))(x))
    assert "pjit" in str(fg.make_jaxpr(fg.vmap(f))(jnp.ones((2, 5))))
    np.testing.assert_allclose(fg.grad(f)(x), np.sin(np.asarray(x)) + np.asarray(x) * np.cos(np.asarray(x)),
                               rtol=1e-6)
    np.testing.assert_allclose(fg.vmap(f)(jnp.stack([x, 2 * x])),
                               [np.sum(np.sin(x) * x), np.sum(np.sin(2 * x) * 2 * x)], rtol=1e-6)


def test_disable_jit_runs_eagerly():
    seen = []
    jf = fg.jit(lambda x: seen.append(type(x).__name__) or x + 1)
    old = fg.config.read("disable_jit")
    fg.config.update("disable_jit", True)
    try:
        jf(jnp.ones(2))
        assert seen == ["Array"]
    finally:
        fg.config.update("disable_jit", old)


def test_lower_compile_is_callable_for_the_lowered_signature():
    f = fg.jit(lambda x, n, scale=1.0: x * n * scale, static_argnums=1)
    compiled = f.lower(jnp.ones(2), 3, scale=2.0).compile()
    np.testing.assert_allclose(np.asarray(compiled(jnp.arange(2.0), scale=0.5)), [0.0, 1.5])
    assert compiled.compile() is compiled and "mul" in compiled.as_text()
    with pytest.raises(TypeError, match="argument types differ"):
        compiled(jnp.ones(3), scale=2.0)
    with pytest.raises(TypeError, match="static arguments are fixed"):
        compiled(jnp.ones(2), 3, scale=2.0)


def test_jit_dot_general_keeps_preferred_element_type():
    """A dot_general with preferred_element_type wider than its operands is not compiled to a plain matmul
    (which would return the operands' dtype): jit gives eager's float64 for float32 operands."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    b = np.arange(4, dtype=np.float32) / 3
    for rhs, dims in ((b, (((1,), (0,)), ((), ()))), (a.T.copy(), (((1,), (0,)), ((), ())))):
        f = lambda x, y, dims=dims: fg.lax.dot_general(x, y, dims, preferred_element_type=np.float64)  # noqa: E731
        eager, jitted = f(a, rhs), fg.jit(f)(a, rhs)
        assert eager.dtype == jitted.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))


def test_nested_list_and_tuple_arguments_take_the_fast_path(monkeypatch):
    """A training step's parameters (lists / tuples of Arrays, Python scalars among them): after the call
    that traces, calls with the same structure and leaf signatures find their code without building the
    full signature (the pytree flattening and PyTreeDef hashing it costs ~20 us a call)."""
    traces = []

    def step(params, x, lr):
        traces.append(1)
        return [(w - lr * (x @ w), b * 2) for w, b in params], x.sum()

    jf = fg.jit(step)
    p = [(jnp.ones((3, 3)), jnp.zeros(3)), (jnp.full((3, 3), 2.0), jnp.ones(3))]
    x = jnp.arange(9.0, dtype=jnp.float32).reshape(3, 3)
    want = step(p, x, 0.5)
    jf(p, x, 0.5)
    calls = []
    sig = type(jf)._signature

    def counting(self, *a):
        calls.append(1)
        return sig(self, *a)

    monkeypatch.setattr(type(jf), "_signature", counting)
    got = jf(p, x, 0.25 + 0.25)
    assert calls == [] and len(traces) == 2  # (one trace by `want` eagerly, one by jit)
    for a, b in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert isinstance(got[0], list) and isinstance(got[0][1], tuple)
    # another structure, leaf shape, dtype or weak type is another signature: traced, then fast again
    for q in ([list(wb) for wb in p], p[:1], [(w, b.astype(jnp.float64)) for w, b in p],
              [(w, jnp.ones(4)) for w, _ in p]):
        n = len(calls)
        jf(q, x, 0.5)
        assert len(calls) == n + 1
        jf(q, x, 0.5)
        assert len(calls) == n + 1
    assert jf._cache_size() == 5 and len(traces) == 6
    jf(p, x, 1)  # a Python int where a float was: its own signature
    assert jf._cache_size() == 6
    jf.clear_cache()
    n = len(calls)
    jf(p, x, 0.5)
    assert len(calls) == n + 1 and len(traces) == 8


def test_fast_path_of_nested_arguments_survives_eviction():
    old = fg.config.read("jit_cache_size")
    fg.config.update("jit_cache_size", 1)
    try:
        jf = fg.jit(lambda ps: [a * 2.0 for a in ps])
        small, big = [jnp.ones(2), jnp.ones(2)], [jnp.ones(3)]
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(jf(small)[1]), [2.0, 2.0])
            np.testing.assert_array_equal(np.asarray(jf(big)[0]), [2.0, 2.0, 2.0])
        assert jf._cache_size() == 1
    finally:
        fg.config.update("jit_cache_size", old)



@pytest.mark.parametrize("name,fn,x", [
    ("sum", lambda np_, x: np_.sum(x), [np.inf, -np.inf]),
    ("prod", lambda np_, x: np_.prod(x), [np.inf, 0.0]),
    ("sum over leading and trailing axes", lambda np_, x: np_.sum(x.reshape(2, 1, 2, 1) * 1.0, axis=(0, 2, 3)),
     [np.inf, -np.inf, 1.0, -np.inf]),
])
def test_reductions_to_nan_warn_nothing_eager_or_jitted(name, fn, x):
    # inf - inf and inf * 0 are nan without a NumPy RuntimeWarning, as in JAX (the ADVI example's objective
    # goes to nan inside a jitted sum and warned through NumPy's sum wrapper)
    import functools
    import warnings
    x = np.array(x, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", append=True)  # after funcgrad's filter for its own frames
        eager, jitted = fn(jnp, jnp.asarray(x)), fg.jit(functools.partial(fn, jnp))(jnp.asarray(x))
    assert np.isnan(np.asarray(eager)).all() and np.isnan(np.asarray(jitted)).all()
    jax = pytest.importorskip("jax")
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(jax.jit(functools.partial(fn, jax.numpy))(x)))


def test_non_array_argument_error_names_its_path_as_jax():
    # JAX's docs (custom pytrees, Common Gotchas) call a jitted function with a string or an object inside its
    # arguments and show JAX's TypeError: which argument, at which path, and to mark it static
    jax = pytest.importorskip("jax")

    def f(x, y):
        return y

    def g(n, x, *rest, **kw):
        return x

    cases = [(f, ("moc", 1), {}, {}), (f, (1, {"a": [2, "z"]}), {}, {}), (g, (3, 1.0, 2.0, "s"), {}, {}),
             (g, (3, 1.0), {"z": ["s"]}, {}), (g, (3, "s"), {}, {"static_argnums": 0})]
    for fun, args, kwargs, opts in cases:
        with pytest.raises(TypeError) as ours:
            fg.jit(fun, **opts)(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            jax.jit(fun, **opts)(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)


# --- one cache per function (as JAX's): jit(f) made again finds f's compiled signatures -------------------

def test_jit_of_the_same_function_shares_its_cache():
    traces = []

    def f(x):
        traces.append(1)
        return x * 2

    x = jnp.arange(3.0)
    for _ in range(5):
        np.testing.assert_array_equal(np.asarray(fg.jit(f)(x)), [0.0, 2.0, 4.0])
    assert len(traces) == 1  # (JAX's Common Gotchas: jax.jit(f)(x) in a loop compiles once)
    fg.jit(f)(jnp.arange(4.0))  # another signature: traced, and then known to every jit(f)
    fg.jit(f)(jnp.arange(4.0))
    assert len(traces) == 2


def test_shared_cache_keeps_options_and_settings_apart():
    traces = []

    def f(x, n):
        traces.append(n)
        return x * n

    x = jnp.arange(3.0)
    fg.jit(f, static_argnums=1)(x, 2)
    fg.jit(f, static_argnums=1)(x, 2)
    assert traces == [2]
    fg.jit(f, static_argnames="n")(x, 2)  # (the same static argument: resolved through the signature)
    assert traces == [2]
    fg.jit(f)(x, jnp.asarray(2.0))  # n dynamic: other options, its own cache
    assert len(traces) == 2
    old = fg.config.read("jit_fusion")
    try:
        fg.config.update("jit_fusion", not old)  # code generation's settings changed: compiled anew
        fg.jit(f, static_argnums=1)(x, 2)
    finally:
        fg.config.update("jit_fusion", old)
    assert len(traces) == 3


def test_shared_cache_lives_with_its_function():
    import gc
    import weakref

    import importlib
    jit_mod = importlib.import_module("funcgrad._src.interpreters.jit")

    def make():
        def g(x):
            return x + 1
        return g

    g = make()
    fg.jit(g)(jnp.arange(2.0))
    assert g in jit_mod._SHARED
    ref = weakref.ref(g)
    del g
    gc.collect()
    assert ref() is None  # (the cache does not keep the function alive)
    # bound methods and partials are new objects at each jit(...): they work, each with its own cache
    import functools

    class M:
        def h(self, x):
            return x * 3
    m = M()
    np.testing.assert_array_equal(np.asarray(fg.jit(m.h)(jnp.arange(2.0))), [0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(fg.jit(functools.partial(M.h, m))(jnp.arange(2.0))), [0.0, 3.0])


def test_a_jit_made_before_a_setting_changed_compiles_under_the_new_one():
    def f(x):
        return x @ x.T

    x = jnp.ones((4, 4))
    a = fg.jit(f)
    a(x)
    b = fg.jit(f)  # made under the old settings; its first compile happens under the new ones
    old = fg.config.read("jit_fusion")
    try:
        fg.config.update("jit_fusion", not old)
        c = fg.jit(f)
        c(x)
        assert c._cache is not a._cache  # (other settings: f's other cache)
        b(jnp.ones((3, 4)))  # a new signature, compiled now: into the cache of the settings in force
        assert b._cache is c._cache
    finally:
        fg.config.update("jit_fusion", old)
