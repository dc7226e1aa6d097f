"""Small programs in the style of JAX's documentation tutorials (autodiff, custom derivative rules,
pytrees, jaxpr interpreters, control flow, random numbers, ...), written against `jax` and run unchanged on
funcgrad through the import shim in tests/jax_shim.py. Each checks analytic values, finite differences, or
(where real JAX is installed) JAX's own answers."""
from __future__ import annotations

import numpy as np
import pytest

from jax_shim import run_program


def test_jax_test_util_check_grads_is_importable_and_catches_a_wrong_rule():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax.test_util import check_grads, check_jvp, check_vjp

        def f(w, b):
            return jnp.sum(jnp.tanh(w * 2.0 + b) ** 2)

        check_grads(f, (jnp.array([0.3, -0.2, 0.5]), jnp.array(0.1)), order=2)

        @jax.custom_jvp
        def wrong(x):
            return jnp.sin(x)
        wrong.defjvps(lambda t, ans, x: 2.0 * jnp.cos(x) * t)
        try:
            check_grads(wrong, (jnp.array([0.4, 0.9]),), order=1, modes=["fwd"])
            caught = False
        except AssertionError:
            caught = True
    """)
    assert ns["caught"]


def test_holomorphic_grad_through_a_complex_cholesky():
    ns = run_program("""
        import jax, jax.numpy as jnp
        import numpy as np

        a = jnp.array([[5.0, 2.0 + 3j, 5j], [2.0 - 3j, 7.0, 1.0 + 7j], [-5j, 1.0 - 7j, 12.0]])

        def f(x):
            low = jnp.linalg.cholesky(x)
            return jnp.sum((low - jnp.sin(low)) ** 2)

        g = jax.grad(f, holomorphic=True)(a)
        rng = np.random.default_rng(0)
        t = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
        t = jnp.asarray(((t + t.conj().T) / 2).astype(np.complex64))   # a Hermitian direction
        _, df = jax.jvp(f, (a,), (t,))
        low, dlow = jax.jvp(jnp.linalg.cholesky, (a,), (t,))
    """)
    a = np.asarray(ns["a"], np.complex128)
    t = np.asarray(ns["t"], np.complex128)
    low = np.linalg.cholesky(a)
    np.testing.assert_allclose(np.asarray(ns["low"]), low, rtol=1e-5, atol=1e-5)
    eps = 1e-6
    fd_low = (np.linalg.cholesky(a + eps * t) - np.linalg.cholesky(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(ns["dlow"]), fd_low, rtol=1e-3, atol=1e-4)

    def f(x):
        c = np.linalg.cholesky(x)
        return np.sum((c - np.sin(c)) ** 2)

    fd = (f(a + eps * t) - f(a - eps * t)) / (2 * eps)
    np.testing.assert_allclose(complex(ns["df"]), fd, rtol=1e-3)
    # the reverse rule is JAX's transpose of the forward one (conj transposes to conj, so for this
    # non-holomorphic f the pairing agrees in its real part): Re sum(g * t) == Re(jvp along t)
    np.testing.assert_allclose(np.real(np.sum(np.asarray(ns["g"]) * t)), fd.real, rtol=1e-3)


def test_complex_cholesky_and_triangular_solve_vjps_match_jax():
    jax = pytest.importorskip("jax")
    import funcgrad as fg
    from funcgrad.lax import linalg as fla
    from jax.lax import linalg as jla
    rng = np.random.default_rng(1)
    a = (np.tril(rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))) + 3 * np.eye(3)).astype(np.complex64)
    b = (rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))).astype(np.complex64)
    u = (rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))).astype(np.complex64)
    for transpose_a, conjugate_a in [(True, True), (False, True), (True, False)]:
        kw = dict(left_side=True, lower=True, transpose_a=transpose_a, conjugate_a=conjugate_a)
        want = jax.vjp(lambda x: jla.triangular_solve(x, b, **kw), a)[1](u)[0]
        got = fg.vjp(lambda x: fla.triangular_solve(x, b, **kw), a)[1](u)[0]
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)
    h = a @ a.conj().T
    ct = np.tril(u[:, :1] @ u[:, 1:].T)
    want = jax.vjp(jax.numpy.linalg.cholesky, h)[1](ct)[0]
    got = fg.vjp(fg.numpy.linalg.cholesky, h)[1](ct)[0]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, atol=1e-4)


def test_triangular_solve_with_conjugate_a_differentiates_complex_input():
    import funcgrad as fg
    from funcgrad.lax import linalg as lla
    rng = np.random.default_rng(1)
    a = np.tril(rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))) + 3 * np.eye(3)
    b = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    ta = np.tril(rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)))

    def solve(x):
        return lla.triangular_solve(x, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True)

    def ref(x):
        return np.linalg.solve(x.conj().T, b)

    _, t = fg.jvp(solve, (a,), (ta,))
    fd = (ref(a + 1e-6 * ta) - ref(a - 1e-6 * ta)) / 2e-6
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-6, atol=1e-8)
    u = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    _, pull = fg.vjp(solve, a)
    # a -> solve is antilinear here: JAX's transpose pairs with the jvp in the real part
    np.testing.assert_allclose(np.real(np.sum(np.asarray(pull(u)[0]) * ta)), np.real(np.sum(u * fd)), rtol=1e-6)


def test_custom_rules_may_use_python_control_flow_under_grad():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from functools import partial

        @jax.custom_jvp
        def piecewise(x):
            if x > 0:
                return jnp.sin(x)
            return jnp.cos(x)

        @piecewise.defjvp
        def piecewise_jvp(primals, tangents):
            (x,), (dx,) = primals, tangents
            return piecewise(x), (2.0 if x > 0 else 3.0) * dx

        @jax.custom_vjp
        def relu_like(x):
            return x if x > 0 else 0.0 * x

        relu_like.defvjp(lambda x: (relu_like(x), x > 0), lambda pos, g: (jnp.where(pos, g, 0.5 * g),))

        grads = [jax.grad(piecewise)(1.0), jax.grad(piecewise)(-1.0)]
        vals = [piecewise(1.0), jax.value_and_grad(piecewise)(-1.0)[0]]
        vgrads = [jax.grad(relu_like)(2.0), jax.grad(relu_like)(-2.0)]
        second = jax.grad(lambda x: jax.grad(piecewise)(x) * x)(1.5)
        try:
            jax.jit(jax.grad(piecewise))(1.0)
            jit_error = None
        except jax.errors.ConcretizationTypeError as e:
            jit_error = e
    """)
    np.testing.assert_allclose([float(g) for g in ns["grads"]], [2.0, 3.0])
    np.testing.assert_allclose([float(v) for v in ns["vals"]], [np.sin(1.0), np.cos(-1.0)], rtol=1e-6)
    np.testing.assert_allclose([float(g) for g in ns["vgrads"]], [1.0, 0.5])
    np.testing.assert_allclose(float(ns["second"]), 2.0)
    assert ns["jit_error"] is not None  # under jit the value is abstract, as in JAX


def test_eager_loops_carry_arrays_and_index_arrays():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import lax

        seen = []
        def body(i, c):
            seen.append((i.dtype, i.shape))
            return c + i

        total = lax.fori_loop(0, 4, body, 0.5)
        root = lax.while_loop(lambda c: jnp.abs(c[0] - c[1]) > 1e-6,
                              lambda c: (c[1], 0.5 * (c[1] + 2.0 / c[1])), (2.0, 1.5))[1]
        count = lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.int8(0))
    """)
    assert ns["seen"] == [(np.dtype("int32"), ())] * 4
    assert ns["total"].dtype == np.float32 and float(ns["total"]) == 6.5
    assert ns["root"].dtype == np.float32 and abs(float(ns["root"]) - np.sqrt(2)) < 1e-6
    assert ns["count"].dtype == np.int8 and int(ns["count"]) == 3


def test_pytree_treedef_children_and_dataclass_key_paths():
    ns = run_program("""
        import dataclasses
        import jax, jax.numpy as jnp

        td = jax.tree.structure({"w": 1, "opt": (2, [3, 4])})
        kids = td.children()
        kid_leaves = [k.num_leaves for k in kids]

        @dataclasses.dataclass
        class Layer:
            kernel: object
            bias: object
            act: str

        jax.tree_util.register_dataclass(Layer, data_fields=["kernel", "bias"], meta_fields=["act"])
        layer = Layer(jnp.ones((2, 2)), jnp.zeros(2), "relu")
        paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path([layer])[0]]
        grads = jax.grad(lambda l: jnp.sum(l.kernel * 3.0) + jnp.sum(l.bias))(layer)
    """)
    assert ns["kid_leaves"] == [3, 1]
    assert ns["paths"] == ["[0].kernel", "[0].bias"]
    assert ns["grads"].act == "relu"
    np.testing.assert_allclose(np.asarray(ns["grads"].kernel), np.full((2, 2), 3.0))


def test_a_jaxpr_interpreter_written_against_jax_core_runs_and_composes():
    ns = run_program("""
        from functools import wraps
        import jax, jax.numpy as jnp
        from jax import lax
        from jax.extend import core
        from jax._src.util import safe_map

        def run(jaxpr, consts, *args):
            env = {}
            def read(v):
                return v.val if isinstance(v, core.Literal) else env[v]
            def write(v, x):
                env[v] = x
            safe_map(write, jaxpr.invars, args)
            safe_map(write, jaxpr.constvars, consts)
            for eqn in jaxpr.eqns:
                outs = eqn.primitive.bind(*safe_map(read, eqn.invars), **eqn.params)
                safe_map(write, eqn.outvars, outs if eqn.primitive.multiple_results else [outs])
            return safe_map(read, jaxpr.outvars)

        undo = {lax.exp_p: jnp.log, lax.sinh_p: jnp.arcsinh}

        def invert(fun):
            @wraps(fun)
            def wrapped(y):
                closed = jax.make_jaxpr(fun)(y)
                jaxpr, env = closed.jaxpr, {}
                env[jaxpr.outvars[0]] = y
                for eqn in jaxpr.eqns[::-1]:
                    env[eqn.invars[0]] = undo[eqn.primitive](env[eqn.outvars[0]])
                return env[jaxpr.invars[0]]
            return wrapped

        f = lambda x: jnp.exp(jnp.sinh(x))
        scale = jnp.array([1.0, 2.0, 3.0])
        closed = jax.make_jaxpr(lambda x: jnp.sin(x) * scale + 1.0)(jnp.ones(3))
        names = [e.primitive.name for e in closed.jaxpr.eqns]
        ran = run(closed.jaxpr, closed.literals, jnp.array([0.5, 1.0, 1.5]))
        via_core = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, jnp.array([0.5, 1.0, 1.5]))
        as_fun = core.jaxpr_as_fun(closed)(jnp.array([0.5, 1.0, 1.5]))
        back = invert(f)(f(0.7))
        slopes = jax.jit(jax.vmap(jax.grad(invert(f))))(jnp.array([1.5, 2.0, 4.0]))
        is_prim = isinstance(closed.jaxpr.eqns[0].primitive, core.Primitive)
        from jax.extend.core import primitives
        same = primitives.exp_p is lax.exp_p and primitives.while_p is not None
    """)
    assert ns["names"] == ["sin", "mul", "add"] and ns["is_prim"] and ns["same"]
    x = np.array([0.5, 1.0, 1.5])
    want = np.sin(x) * [1.0, 2.0, 3.0] + 1.0
    for got in (ns["ran"], ns["via_core"], ns["as_fun"]):
        np.testing.assert_allclose(np.asarray(got[0]), want, rtol=1e-6)
    np.testing.assert_allclose(float(ns["back"]), 0.7, rtol=1e-5)
    y = np.array([1.5, 2.0, 4.0])  # d/dy arcsinh(log y) = 1 / (y sqrt(1 + log(y)^2))
    np.testing.assert_allclose(np.asarray(ns["slopes"]), 1 / (y * np.sqrt(1 + np.log(y) ** 2)), rtol=1e-5)


def test_a_user_primitive_from_jax_extend_evaluates_eagerly_under_jit_and_in_jaxprs():
    ns = run_program("""
        import numpy as np
        import jax, jax.numpy as jnp
        from jax.extend.core import Primitive

        fma_p = Primitive("fused_multiply_add")
        fma_p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
        fma_p.def_abstract_eval(lambda x, y, z: jax.core.ShapedArray(x.shape, x.dtype))
        fma = lambda x, y, z: fma_p.bind(x, y, z)

        eager = fma(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]), jnp.array([0.5, 0.5]))
        jitted = jax.jit(fma)(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]), jnp.array([0.5, 0.5]))
        names = [e.primitive.name for e in jax.make_jaxpr(fma)(1.0, 2.0, 3.0).jaxpr.eqns]
        bare = Primitive("no_rules")
        try:
            bare.bind(jnp.ones(2))
            missing = None
        except NotImplementedError as e:
            missing = str(e)
    """)
    np.testing.assert_allclose(np.asarray(ns["eager"]), [3.5, 8.5])
    np.testing.assert_allclose(np.asarray(ns["jitted"]), [3.5, 8.5])
    assert ns["names"] == ["fused_multiply_add"]
    assert "no_rules" in ns["missing"]


def test_control_flow_on_python_scalars_returns_arrays_and_while_grad_is_a_value_error():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import lax

        both = lax.cond(True, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0)
        picked = lax.switch(5, [lambda x: x + 1.0, lambda x: x * 10.0], 3.0)   # clamped to the last
        doubled, history = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
        evens = lax.fori_loop(0, 6, lambda i, c: c + (i % 2 == 0) * i, 0, unroll=3)
        squares = lax.map(lambda x: x ** 2, jnp.arange(5.0), batch_size=2)
        try:
            jax.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0))(2.0)
            error = None
        except ValueError as e:
            error = e
    """)
    for name, value in [("both", 3.0), ("picked", 30.0), ("doubled", 16.0)]:
        assert ns[name].dtype == np.float32 and float(ns[name]) == value, name
    np.testing.assert_array_equal(np.asarray(ns["history"]), [1.0, 2.0, 4.0, 8.0])
    assert int(ns["evens"]) == 6
    np.testing.assert_allclose(np.asarray(ns["squares"]), np.arange(5.0) ** 2)
    assert "while_loop" in str(ns["error"])


def test_traced_slice_bounds_and_masks_raise_index_errors_and_at_apply():
    ns = run_program("""
        import jax, jax.numpy as jnp

        caught = []
        for fn in (lambda x: x[:x[0]], lambda x: x[x > 2.0]):
            try:
                jax.jit(fn)(jnp.arange(5.0))
                caught.append(None)
            except IndexError as e:
                caught.append(type(e).__name__)
        ok = jax.jit(lambda x, i: jax.lax.dynamic_slice(x, (i,), (2,)))(jnp.arange(5.0), 2)
        applied = jnp.arange(4.0).at[1:3].apply(jnp.exp)
    """)
    assert ns["caught"] == ["NonConcreteSliceError", "NonConcreteBooleanIndexError"]
    import funcgrad
    assert issubclass(funcgrad.errors.NonConcreteBooleanIndexError, funcgrad.errors.ConcretizationTypeError)
    np.testing.assert_allclose(np.asarray(ns["ok"]), [2.0, 3.0])
    np.testing.assert_allclose(np.asarray(ns["applied"]), [0.0, np.e, np.e ** 2, 3.0], rtol=1e-6)


def test_ad_checkpoint_names_policies_and_saved_residuals():
    ns = run_program("""
        import io, contextlib
        import jax, jax.numpy as jnp
        from jax.ad_checkpoint import checkpoint_name, print_saved_residuals

        def net(params, x):
            for i, w in enumerate(params):
                x = checkpoint_name(jnp.tanh(w @ x), name=f"h{i}")
            return jnp.sum(x ** 2)

        params = [jnp.full((3, 3), 0.2), jnp.full((2, 3), -0.3)]
        x = jnp.array([1.0, 2.0, -1.0])
        plain = jax.grad(net)(params, x)
        policies = [jax.checkpoint_policies.save_only_these_names("h0"),
                    jax.checkpoint_policies.save_and_offload_only_these_names(
                        names_which_can_be_saved=[], names_which_can_be_offloaded=["h1"],
                        offload_src="device", offload_dst="pinned_host"),
                    jax.checkpoint_policies.nothing_saveable]
        remat = [jax.grad(jax.checkpoint(net, policy=p))(params, x) for p in policies]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            print_saved_residuals(net, params, x)
        printed = out.getvalue()
    """)
    for r in ns["remat"]:
        for a, b in zip(r, ns["plain"]):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert "f32[3,3] from the argument" in ns["printed"]


def test_saved_residuals_name_arguments_as_jax():
    """print_saved_residuals names argument leaves by parameter and path as JAX does (JAX's autodiff_remat and
    gradient-checkpointing pages print `from the argument W1`; funcgrad printed `from the argument 0`)."""
    import contextlib
    import io
    jax = pytest.importorskip("jax")
    jax_print = pytest.importorskip("jax.ad_checkpoint").print_saved_residuals
    import funcgrad
    from funcgrad.ad_checkpoint import print_saved_residuals

    def argument_lines(printer, f, *args, **kw):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            printer(f, *args, **kw)
        return [line for line in out.getvalue().splitlines() if "from the argument" in line]

    def make(np_):
        def g(a, *rest, k=None, **kw):
            return np_.sum(np_.sin(a * rest[0][0] * rest[1] * k["u"] * kw["z"]))

        def net(W1, p):
            return np_.sum(np_.sin(np_.sin(W1 @ p[0]) * p[1]["b"]))
        return g, net

    one, two = np.ones(2, np.float32), np.ones((2, 2), np.float32)
    for ours, theirs in zip(make(funcgrad.numpy), make(jax.numpy)):
        args, kw = ((one, (one,), one), dict(k={"u": one}, z=one)) if ours.__name__ == "g" else \
            ((two, (one, {"b": one})), {})
        want = argument_lines(jax_print, theirs, *args, **kw)
        assert len(want) == 5 if ours.__name__ == "g" else 3
        assert argument_lines(print_saved_residuals, ours, *args, **kw) == want


def test_custom_jvp_symbolic_zeros_mark_the_undifferentiated_arguments():
    ns = run_program("""
        from functools import partial
        import jax, jax.numpy as jnp
        from jax.custom_derivatives import SymbolicZero

        seen = []

        @jax.custom_jvp
        def scaled(x, y):
            return jnp.sin(x) * y

        @partial(scaled.defjvp, symbolic_zeros=True)
        def scaled_jvp(primals, tangents):
            (x, y), (dx, dy) = primals, tangents
            seen.append((type(dx) is SymbolicZero, type(dy) is SymbolicZero))
            out = jnp.zeros_like(x)
            if type(dx) is not SymbolicZero:
                out = out + jnp.cos(x) * dx * y
            if type(dy) is not SymbolicZero:
                out = out + jnp.sin(x) * dy
            return scaled(x, y), out

        gx = jax.grad(scaled)(0.5, 3.0)
        gy = jax.grad(scaled, argnums=1)(0.5, 3.0)
        gxy = jax.grad(scaled, argnums=(0, 1))(0.5, 3.0)
        _, tx = jax.jvp(lambda x: scaled(x, 3.0), (0.5,), (1.0,))
        jax.effects_barrier()
        aval_text = str(jax.typeof(jnp.ones((2, 3))))
    """)
    np.testing.assert_allclose(float(ns["gx"]), 3 * np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(float(ns["gy"]), np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose([float(g) for g in ns["gxy"]], [3 * np.cos(0.5), np.sin(0.5)], rtol=1e-6)
    np.testing.assert_allclose(float(ns["tx"]), 3 * np.cos(0.5), rtol=1e-6)
    assert ns["seen"][:2] == [(False, True), (True, False)]
    assert (False, False) in ns["seen"]
    assert ns["aval_text"] == "float32[2,3]"


def test_odeint_solutions_and_adjoint_gradients():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax.experimental.ode import odeint

        ts = jnp.array([0.0, 0.5, 1.0])
        decay = lambda y, t, k: -k * y
        ys = odeint(decay, jnp.array([1.0, 2.0]), ts, 0.8)

        def end(y0, ts, k):
            return jnp.sum(odeint(decay, y0, ts, k)[-1])
        g_y0, g_ts, g_k = jax.grad(end, argnums=(0, 1, 2))(jnp.array([1.0, 2.0]), ts, 0.8)

        spring = lambda s, t, w: {"x": s["v"], "v": -w ** 2 * s["x"]}
        osc = odeint(spring, {"x": 1.0, "v": 0.0}, ts, 2.0)
        c = 0.3
        g_closure = jax.grad(lambda a: odeint(lambda y, t: -a * c * y, 1.0, ts)[-1])(1.5)
        batched = jax.jit(jax.vmap(lambda y0: odeint(decay, y0, ts, 0.8)[-1]))(jnp.array([1.0, 3.0]))
    """)
    t = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(np.asarray(ns["ys"]), np.exp(-0.8 * t)[:, None] * [1.0, 2.0], rtol=2e-6)
    np.testing.assert_allclose(np.asarray(ns["g_y0"]), np.full(2, np.exp(-0.8)), rtol=1e-5)
    # moving the last output time changes the output by dy/dt there; the first time shifts the start
    np.testing.assert_allclose(np.asarray(ns["g_ts"]), [0.8 * 3 * np.exp(-0.8), 0.0, -0.8 * 3 * np.exp(-0.8)],
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(ns["g_k"]), -3 * np.exp(-0.8), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ns["osc"]["x"]), np.cos(2 * t), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ns["osc"]["v"]), -2 * np.sin(2 * t), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(ns["g_closure"]), -0.3 * np.exp(-0.45), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ns["batched"]), np.exp(-0.8) * np.array([1.0, 3.0]), rtol=1e-5)


def test_scipy_signal_fftconvolve_matches_scipy():
    import scipy.signal as ss
    ns = run_program("""
        import jax.numpy as jnp
        import jax.scipy as jsp

        img = (jnp.arange(64.0).reshape(8, 8) % 5) - 2.0
        x = jnp.linspace(-2.0, 2.0, 5)
        window = jsp.stats.norm.pdf(x) * jsp.stats.norm.pdf(x[:, None])
        outs = {m: jsp.signal.fftconvolve(img, window, mode=m) for m in ("full", "same", "valid")}
        rows = jsp.signal.fftconvolve(img[:3], jnp.ones((3, 2)), mode="same", axes=1)
        cplx = jsp.signal.fftconvolve(jnp.array([1 + 1j, 2.0, 3.0]), jnp.array([1.0, 1j]))
    """)
    img = (np.arange(64.0).reshape(8, 8) % 5) - 2.0
    x = np.linspace(-2.0, 2.0, 5)
    w = np.exp(-x ** 2 / 2)[:, None] * np.exp(-x ** 2 / 2) / (2 * np.pi)
    for m in ("full", "same", "valid"):
        np.testing.assert_allclose(np.asarray(ns["outs"][m]), ss.fftconvolve(img, w, mode=m), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ns["rows"]), ss.fftconvolve(img[:3], np.ones((3, 2)), mode="same", axes=1),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ns["cplx"]), np.convolve([1 + 1j, 2, 3], [1, 1j]), rtol=1e-6, atol=1e-6)


def test_tree_reduce_associative_pairs_as_jax_and_is_tree_node():
    ns = run_program("""
        import collections
        import jax

        shapes = [jax.tree_util.tree_reduce_associative(lambda a, b: "(" + a + b + ")", list("abcdefg"[:n]))
                  for n in range(1, 8)]
        total = jax.tree.reduce_associative(lambda a, b: a + b, {"x": 1, "y": (2, 3), "z": [4]})
        empty = jax.tree.reduce_associative(lambda a, b: a + b, [], identity=0)
        try:
            jax.tree.reduce_associative(lambda a, b: a + b, [])
            error = None
        except ValueError as e:
            error = e
        Pair = collections.namedtuple("Pair", "a b")
        nodes = [jax.tree_util.is_tree_node(t) for t in (dict, list, Pair, int, float)]
    """)
    assert ns["shapes"] == ["a", "(ab)", "(a(bc))", "((ab)(cd))", "((ab)(c(de)))", "((a(bc))(d(ef)))",
                            "((a(bc))((de)(fg)))"]
    assert ns["total"] == 10 and ns["empty"] == 0 and ns["error"] is not None
    assert ns["nodes"] == [True, True, True, False, False]


def test_user_primitive_with_jvp_transpose_and_batching_rules_from_jax_interpreters():
    ns = run_program("""
        import numpy as np
        import jax, jax.numpy as jnp
        from jax.extend import core as jcore
        from jax.interpreters import ad, batching, mlir

        fma_p = jcore.Primitive("fma_user")
        fma = lambda x, y, z: fma_p.bind(x, y, z)
        cube_plus = lambda a, b: fma(a, a * a, b)          # a^3 + b
        fma_p.def_impl(lambda x, y, z: np.asarray(x) * np.asarray(y) + np.asarray(z))
        fma_p.def_abstract_eval(lambda x, y, z: jax.core.ShapedArray(x.shape, x.dtype))
        mlir.register_lowering(fma_p, mlir.lower_fun(lambda x, y, z: x * y + z, multiple_results=False))

        def fma_jvp(primals, tangents):
            x, y, z = primals
            zero = lambda t: jnp.zeros_like(x) if type(t) is ad.Zero else t
            xt, yt, zt = map(zero, tangents)
            return fma(x, y, z), fma(xt, y, fma(x, yt, zt))

        def fma_transpose(ct, x, y, z):
            if ad.is_undefined_primal(x):
                return fma(ct, y, jnp.zeros_like(y)), None, ct
            return None, fma(x, ct, jnp.zeros_like(x)), ct

        ad.primitive_jvps[fma_p] = fma_jvp
        ad.primitive_transposes[fma_p] = fma_transpose
        batching.primitive_batchers[fma_p] = lambda args, dims: (fma(*args), dims[0])

        primal, tangent = jax.jvp(cube_plus, (2.0, 10.0), (1.0, 1.0))
        slope = jax.grad(cube_plus)(2.0, 10.0)
        jit_slope = jax.jit(jax.grad(cube_plus))(2.0, 10.0)
        batched = jax.vmap(cube_plus)(jnp.array([1.0, 2.0]), jnp.array([0.5, 0.5]))
        bare = jcore.Primitive("no_jvp")
        bare.def_impl(lambda x: x)
        bare.def_abstract_eval(lambda x: x)
        try:
            jax.grad(lambda x: bare.bind(x))(1.0)
            missing = None
        except NotImplementedError as e:
            missing = str(e)
    """)
    assert (float(ns["primal"]), float(ns["tangent"])) == (18.0, 13.0)  # 3 a^2 + 1 at a = 2
    assert float(ns["slope"]) == 12.0 and float(ns["jit_slope"]) == 12.0
    np.testing.assert_allclose(np.asarray(ns["batched"]), [1.5, 8.5])
    assert "no_jvp" in ns["missing"]


def test_single_device_sharding_programs_run():
    ns = run_program("""
        from functools import partial
        import jax, jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        from jax.experimental import mesh_utils
        from jax.experimental.shard_map import shard_map

        mesh = Mesh(mesh_utils.create_device_mesh((1,)), axis_names=("x",))
        spec = NamedSharding(mesh, P("x"))
        x = jax.device_put(jnp.arange(6.0), spec)
        shards = [(s.index, s.data.shape) for s in x.addressable_shards]
        doubled = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, spec))(x)

        @partial(shard_map, mesh=mesh, in_specs=P("x"), out_specs=P())
        def total(v):
            return jax.lax.psum(jnp.sum(v), "x")

        summed = total(x)
        flags = (x.is_fully_addressable, x.is_fully_replicated)
    """)
    assert ns["shards"] == [((slice(None),), (6,))]
    np.testing.assert_allclose(np.asarray(ns["doubled"]), 2 * np.arange(6.0))
    assert float(ns["summed"]) == 15.0 and ns["flags"] == (True, True)


def test_lax_cond_older_calling_forms():
    ns = run_program("""
        import jax, jax.numpy as jnp
        from jax import lax

        operand = jnp.array([0.0])
        four_arg = [lax.cond(p, operand, lambda x: x + 1, operand, lambda x: x - 1) for p in (True, False)]
        keyword = lax.cond(False, lambda x: x * 2, lambda x: x - 5, operand=3.0)
        traced = jax.jit(lambda p, x: lax.cond(p, x, jnp.sin, x * 0, jnp.cos))(True, jnp.array([0.5]))
        try:
            lax.cond(True, 1.0, 2.0)
            error = None
        except TypeError as e:
            error = e
    """)
    assert [float(v[0]) for v in ns["four_arg"]] == [1.0, -1.0]
    assert float(ns["keyword"]) == -2.0
    np.testing.assert_allclose(np.asarray(ns["traced"]), np.sin([0.5]), rtol=1e-6)
    assert ns["error"] is not None


def test_programs_testing_for_typed_keys_take_the_raw_key_path():
    ns = run_program("""
        import jax, jax.numpy as jnp

        def as_raw(key):
            if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
                return jax.random.key_data(key)
            return key

        raw = as_raw(jax.random.PRNGKey(3))
        same = jnp.array_equal(raw, jax.random.key_data(jax.random.PRNGKey(3)))
        extended = [jnp.issubdtype(t, jax.dtypes.extended) for t in (jnp.float32, jnp.uint32)]
    """)
    assert bool(ns["same"]) and ns["extended"] == [False, False]


def test_shape_mismatches_and_bad_index_types_raise_type_errors_as_in_jax():
    ns = run_program("""
        import jax.numpy as jnp

        caught = []
        for bad in (lambda: jnp.ones(3) + jnp.ones(4), lambda: jnp.ones(6).reshape(4, 2),
                    lambda: jnp.ones((2, 3)) @ jnp.ones((2, 3)),
                    lambda: jnp.concatenate([jnp.ones((2, 2)), jnp.ones((3, 3))]),
                    lambda: jnp.ones(3)[1.5], lambda: jnp.ones(3)[jnp.array([0.0, 1.0])]):
            try:
                bad()
                caught.append(None)
            except TypeError as e:
                caught.append(isinstance(e, (ValueError, IndexError)))   # NumPy's type too
    """)
    assert ns["caught"] == [True] * 6
