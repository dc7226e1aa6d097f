"""jit's compiler, pass by pass: each test shows a jaxpr before and after one pass, then checks the
values are unchanged. Also: the fusion plan, code generation and buffer reuse (aliasing)."""
import logging
import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.core.aval import ShapedArray
from funcgrad._src.core.jaxpr import Eqn, Jaxpr, Var, eval_jaxpr
from funcgrad._src.core.primitive import registry
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import (cse, dce, fold_constants, forward_inputs, fusion, inline_calls,
                                          simplify)


def text(j) -> str:
    """A jaxpr's text on one line (the printer's line breaks are not what a test is about)."""
    return " ".join(str(j).split())


def same_values(before: Jaxpr, after: Jaxpr, *args):
    with np.errstate(all="ignore"):
        want = eval_jaxpr(before, *args)
        got = eval_jaxpr(after, *args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert np.asarray(w).shape == np.asarray(g).shape and np.asarray(w).dtype == np.asarray(g).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, equal_nan=True)


def in_place_lines(src: str) -> list:
    """Generated lines whose ufunc writes into the buffer the result is named after (out, positional)."""
    return [m for m in re.findall(r"^\s+(v\d+) = _\w+\((?:.*, )?(v\d+)\)$", src, re.M) if m[0] == m[1]]


def v(shape=(3,), dtype=np.float32, weak=False):
    return Var(ShapedArray(shape, dtype, weak))


def const(value, dtype=np.float32, shape=None):
    buf = np.asarray(value, dtype)
    if shape is not None:
        buf = np.broadcast_to(buf, shape)
    c = fg.Array(buf, False)
    return Var(ShapedArray(buf.shape, buf.dtype), c, is_const=True), c


def eqn(name, ins, out, **params):
    return Eqn(registry[name], ins, [out], params)


x3 = jnp.asarray(np.array([0.5, -1.5, 2.0], np.float32))


# --- inline ---------------------------------------------------------------------------------------

def test_inline_replaces_nested_jit_calls():
    inner = fg.jit(lambda x: jnp.sin(x) * 2.0)
    j = fg.make_jaxpr(lambda x: inner(x) + inner(x))(x3)
    assert text(j).count("pjit") == 2
    after = inline_calls(j)
    assert "pjit" not in text(after)
    assert text(after).count("sin") == 2  # and CSE merges them later
    same_values(j, after, x3)
    assert text(compiler.optimize(j)).count("sin") == 1


def test_codegen_also_inlines_custom_rules_and_drops_stop_gradient():
    @fg.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (jnp.sin(p[0]), jnp.cos(p[0]) * t[0]))
    j = fg.make_jaxpr(lambda x: f(fg.stop_gradient(x)) * 2.0)(x3)
    assert "custom_jvp_call" in text(j) and "stop_gradient" in text(j)
    low = compiler.lower(j)
    assert "custom_jvp_call" not in text(low) and "stop_gradient" not in text(low)
    same_values(j, low, x3)


# --- fold -----------------------------------------------------------------------------------------

def test_fold_evaluates_constant_subexpressions():
    # (exp of a closed-over constant is computed eagerly while tracing; build the equation by hand)
    a, av = const(np.arange(4.0))
    b = v((4,))
    e1, e2 = v((4,)), v((4,))
    j = Jaxpr([a], [av], [b], [eqn("exp", [a], e1), eqn("add", [b, e1], e2)], [e2])
    assert text(j) == "{ lambda a:f32[4] ; b:f32[4]. let c:f32[4] = exp a d:f32[4] = add b c in (d,) }"
    after = fold_constants(j)
    assert text(after) == "{ lambda a:f32[4] b:f32[4] ; c:f32[4]. let d:f32[4] = add c b in (d,) }"
    same_values(j, after, jnp.ones(4))


def test_fold_keeps_big_results_as_broadcast_views_or_leaves_them():
    s, sv = const(2.0)
    big = v((1000, 1000))
    bc, ex, full, y = v((1000, 1000)), v((1000, 1000)), v((1000, 1000)), v((1000, 1000))
    j = Jaxpr([s], [sv], [big], [
        eqn("broadcast_in_dim", [s], bc, shape=(1000, 1000), broadcast_dimensions=()),
        eqn("exp", [bc], ex),
        Eqn(registry["full"], [], [full], dict(shape=(1000, 1000), fill_value=3.0, dtype=np.dtype("float32"),
                                               weak_type=False)),
        eqn("add", [ex, full], y)], [y])
    after = fold_constants(j)
    assert after.eqns == [] or all(e.prim.name != "exp" for e in after.eqns)
    for c in after.consts:  # every folded constant is a zero-stride view: no megabytes spent
        buf = np.asarray(c)
        assert buf.size == 1 or all(st == 0 for st in buf.strides)
    same_values(j, after, jnp.ones((1000, 1000)))


def test_fold_leaves_a_captured_buffer_live():
    """A closed-over tensor of zeros is read at call time, not frozen as the one value it held when traced:
    torch-face code changes it in place (optimizer steps, running statistics) between calls."""
    b = fg.zeros(5000)
    f = fg.jit(lambda x: x + b)
    x = fg.ones(5000)
    assert float(f(x)[0]) == 1.0
    b.add_(1.0)
    assert float(f(x)[0]) == 2.0


# --- simplify -------------------------------------------------------------------------------------

SIMPLIFY_CASES = {
    "x * 1 + (-0)": (lambda x: x * 1.0 + -0.0, "{ lambda ; a:f32[3]. let in (a,) }"),
    "neg(neg x)": (lambda x: lax.neg(lax.neg(x)), "{ lambda ; a:f32[3]. let in (a,) }"),
    "x / 1 - 0": (lambda x: x / 1.0 - 0.0, "{ lambda ; a:f32[3]. let in (a,) }"),
    "x ** 1": (lambda x: lax.integer_pow(x, 1), "{ lambda ; a:f32[3]. let in (a,) }"),
    "f32 -> f64 -> f32": (lambda x: x.astype(jnp.float64).astype(jnp.float32), "{ lambda ; a:f32[3]. let in (a,) }"),
    "transpose twice": (lambda x: x.reshape(1, 3).T.T.reshape(3),
                        "{ lambda ; a:f32[3]. let in (a,) }"),
    "reshape chain": (lambda x: x.reshape(3, 1).reshape(1, 3).reshape(3, 1),
                      "{ lambda ; a:f32[3]. let b:f32[3,1] = reshape[new_sizes=(3, 1)] a in (b,) }"),
    "select(p, x, x)": (lambda x: jnp.where(x > 0, x, x), "{ lambda ; a:f32[3]. let in (a,) }"),
    "max(x, x)": (lambda x: jnp.maximum(x, x), "{ lambda ; a:f32[3]. let in (a,) }"),
}


@pytest.mark.parametrize("case", list(SIMPLIFY_CASES))
def test_simplify_rewrites(case):
    f, want = SIMPLIFY_CASES[case]
    j = fg.make_jaxpr(f)(x3)
    after = dce(simplify(j))
    assert text(after) == want, f"before: {text(j)}"
    same_values(j, after, x3)


def test_simplify_multiplication_by_zero_only_for_integers():
    xi = jnp.asarray(np.array([1, -2, 3], np.int32))
    ji = fg.make_jaxpr(lambda x: x * 0)(xi)
    assert "mul" in text(ji)
    after = dce(simplify(ji))
    assert "mul" not in text(after)
    np.testing.assert_array_equal(eval_jaxpr(after, xi)[0], [0, 0, 0])
    # floats: x * 0 is NaN for inf and NaN, x - x is NaN for inf: neither may become 0
    xf = jnp.asarray(np.array([np.inf, np.nan, 1.0], np.float32))
    for f in (lambda x: x * 0.0, lambda x: x - x):
        jf = fg.make_jaxpr(f)(xf)
        after = dce(simplify(jf))
        assert text(after) == text(jf)
        with np.errstate(invalid="ignore"):
            out = np.asarray(fg.jit(f)(xf))
        assert np.isnan(out[0]) and np.isnan(out[1]) and out[2] == 0.0


def test_simplify_integer_self_subtraction_and_bool_identities():
    xi = jnp.asarray(np.array([1, -2, 3], np.int32))
    assert "sub" not in text(dce(simplify(fg.make_jaxpr(lambda x: x - x)(xi))))
    xb = jnp.asarray(np.array([True, False, True]))
    j = fg.make_jaxpr(lambda b: (b & True) | False)(xb)
    assert text(dce(simplify(j))) == "{ lambda ; a:bool[3]. let in (a,) }"


def test_simplify_keeps_float_additions_of_positive_zero():
    """x + 0.0 is +0 where x is -0, so for floats only x + (-0.0) and x - 0.0 become x; for integers
    any added zero goes."""
    x = jnp.asarray(np.array([-0.0, 1.0, -2.0], np.float32))
    for f in (lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0)):
        j = fg.make_jaxpr(f)(x)
        after = dce(simplify(j))
        assert len(after.eqns) == 1, text(after)
        out = np.asarray(fg.jit(f)(x))
        assert not np.signbit(out[0]) and out[0] == 0
    xi = jnp.asarray(np.array([1, -2, 3], np.int32))
    assert text(dce(simplify(fg.make_jaxpr(lambda x: x + 0)(xi)))) == "{ lambda ; a:i32[3]. let in (a,) }"


def test_simplify_handwritten_broadcast_of_zeros_feeding_add_and_broadcast_chains():
    zero, zv = const(-0.0)
    a = v((2, 3))
    b1, b2, s = v((3,)), v((2, 3)), v((2, 3))
    j = Jaxpr([zero], [zv], [a], [
        eqn("broadcast_in_dim", [zero], b1, shape=(3,), broadcast_dimensions=()),
        eqn("broadcast_in_dim", [b1], b2, shape=(2, 3), broadcast_dimensions=(1,)),
        eqn("add", [b2, a], s)], [s])
    assert text(j) == ("{ lambda ; a:f32[2,3]. let b:f32[3] = broadcast_in_dim[broadcast_dimensions=(), "
                       "shape=(3,)] -0.0:f32[] c:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,), "
                       "shape=(2, 3)] b d:f32[2,3] = add c a in (d,) }")
    after = dce(simplify(j))
    assert text(after) == "{ lambda ; a:f32[2,3]. let in (a,) }"
    same_values(j, after, jnp.ones((2, 3)))
    # a broadcast of a broadcast becomes one broadcast
    x = v((3,))
    c1, c2 = v((1, 3)), v((2, 1, 3))
    j2 = Jaxpr([], [], [x], [eqn("broadcast_in_dim", [x], c1, shape=(1, 3), broadcast_dimensions=(1,)),
                             eqn("broadcast_in_dim", [c1], c2, shape=(2, 1, 3), broadcast_dimensions=(1, 2))],
               [c2])
    after2 = dce(simplify(j2))
    assert text(after2) == ("{ lambda ; a:f32[3]. let b:f32[2,1,3] = broadcast_in_dim[broadcast_dimensions=(2,), "
                            "shape=(2, 1, 3)] a in (b,) }")
    same_values(j2, after2, x3)


def test_simplify_turns_transpose_of_a_matmul_into_the_swapped_matmul():
    a = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    b = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    j = fg.make_jaxpr(lambda a, b: (a.T @ b).T)(a, b)
    assert "transpose" in text(j)
    after = dce(simplify(j))
    assert "transpose" not in text(after)
    assert "dot_general[dimension_numbers=(((0,), (0,)), ((), ())), preferred_element_type=None] b a" in text(after)
    same_values(j, after, a, b)


def test_simplify_keeps_the_weak_type_of_outputs():
    f = fg.jit(lambda x: x.astype(jnp.float32))  # a weak f32 scalar made strong: not a no-op for the caller
    out = f(2.0)
    assert out.dtype == np.float32 and not out.weak_type
    assert fg.jit(lambda x: x * 1.0)(2.0).weak_type


def test_simplify_reduction_over_unit_axes_is_a_reshape():
    j = fg.make_jaxpr(lambda x: jnp.sum(x.reshape(3, 1), axis=1))(x3)
    after = compiler.optimize(j)
    assert "reduce_sum" not in text(after)
    same_values(j, after, x3)


# --- cse ------------------------------------------------------------------------------------------

def test_cse_merges_repeats_commuted_operands_and_equal_constants():
    j = fg.make_jaxpr(lambda x: (jnp.sin(x) + jnp.sin(x), x * jnp.cos(x) - jnp.cos(x) * x))(x3)
    assert text(j) == ("{ lambda ; a:f32[3]. let b:f32[3] = sin a c:f32[3] = sin a d:f32[3] = add b c "
                       "e:f32[3] = cos a f:f32[3] = mul a e g:f32[3] = cos a h:f32[3] = mul g a "
                       "i:f32[3] = sub f h in (d, i,) }")
    after = cse(j)
    assert text(after) == ("{ lambda ; a:f32[3]. let b:f32[3] = sin a c:f32[3] = add b b d:f32[3] = cos a "
                           "e:f32[3] = mul a d f:f32[3] = sub e e in (c, f,) }")
    same_values(j, after, x3)
    c1, c1v = const(0.5, shape=(3,))
    c2, c2v = const(0.5, shape=(3,))
    a = v()
    m1, m2, s = v(), v(), v()
    j2 = Jaxpr([c1, c2], [c1v, c2v], [a], [eqn("mul", [a, c1], m1), eqn("mul", [a, c2], m2),
                                           eqn("add", [m1, m2], s)], [s])
    after2 = cse(j2)
    assert len(after2.constvars) == 1 and len(after2.eqns) == 2
    same_values(j2, after2, x3)


# --- forward --------------------------------------------------------------------------------------

def test_forward_returns_inputs_passed_through_identities():
    a, b = v(), v()
    r, c, m = v(), v(), v()
    j = Jaxpr([], [], [a, b], [eqn("reshape", [a], r, new_sizes=(3,)),
                               eqn("convert_element_type", [r], c, new_dtype=np.dtype("float32"), weak_type=False),
                               eqn("mul", [b, b], m)], [c, m])
    assert text(j) == ("{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = reshape[new_sizes=(3,)] a "
                       "d:f32[3] = convert_element_type[new_dtype=float32, weak_type=False] c "
                       "e:f32[3] = mul b b in (d, e,) }")
    after = dce(forward_inputs(j))
    assert text(after) == "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul b b in (a, c,) }"
    assert compiler.forwarded_outputs(after) == [0, None]
    same_values(j, after, x3, x3)


def test_jit_hands_back_the_callers_array_for_a_forwarded_output():
    x = jnp.arange(3.0)
    a, b = fg.jit(lambda x, y: (x.reshape(3) * 1.0, y + 1.0))(x, x)
    assert a is x
    np.testing.assert_allclose(b, [1.0, 2.0, 3.0])


# --- dce ------------------------------------------------------------------------------------------

def test_dce_drops_dead_equations():
    j = fg.make_jaxpr(lambda x: (jnp.exp(x) * 3.0, jnp.sin(x))[1])(x3)
    assert "exp" in text(j) and "mul" in text(j)
    after = dce(j)
    assert text(after) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"
    same_values(j, after, x3)


def test_dce_drops_unused_residuals_of_a_vjp():
    def f(x):
        return jnp.sum(jnp.tanh(jnp.exp(x)) * jnp.sin(x))

    def pull_only(x, ct):
        _, pull = fg.vjp(f, x)
        return pull(ct)[0]

    j = fg.make_jaxpr(pull_only)(x3, jnp.asarray(np.float32(1.0)))
    after = compiler.optimize(j)
    assert len(after.eqns) < len(j.eqns)
    assert "reduce_sum" not in text(after)  # the primal output itself is a dead residual
    same_values(j, after, x3, jnp.asarray(np.float32(1.0)))


def test_dce_prunes_unused_scan_outputs():
    def f(xs):
        def body(c, x):
            return c + x, (jnp.sin(x), jnp.exp(x))
        c, (s, e) = lax.scan(body, 0.0 * xs[0], xs)
        return c, s

    xs = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    j = fg.make_jaxpr(f)(xs)
    after = compiler.optimize(j)
    scan = [e for e in after.eqns if e.prim.name == "scan"][0]
    assert "exp" not in text(scan.params["jaxpr"])
    same_values(j, after, xs)
    c, s = fg.jit(f)(xs)
    np.testing.assert_allclose(c, np.asarray(xs).sum(0), rtol=1e-6)
    np.testing.assert_allclose(s, np.sin(np.asarray(xs)), rtol=1e-6)


# --- the pipeline and its configuration ----------------------------------------------------------

def test_optimize_runs_only_the_named_passes_and_config_selects_them():
    j = fg.make_jaxpr(lambda x: (jnp.sin(x) + jnp.sin(x)) * 1.0)(x3)
    assert text(compiler.optimize(j, passes=())) == text(j)
    only_cse = compiler.optimize(j, passes=("cse",))
    assert text(only_cse).count("sin") == 1 and "mul" in text(only_cse)
    with pytest.raises(ValueError, match="unknown compiler pass"):
        compiler.optimize(j, passes=("nope",))
    old = fg.config.read("jit_passes")
    try:
        fg.config.update("jit_passes", ("dce",))
        assert text(fg.jit(lambda x: jnp.sin(x) + jnp.sin(x)).lower(x3).as_text()).count("sin") == 2
    finally:
        fg.config.update("jit_passes", old)
    assert text(fg.jit(lambda x: jnp.sin(x) + jnp.sin(x)).lower(x3).as_text()).count("sin") == 1


# --- fusion plan and code generation ---------------------------------------------------------------

def test_fusion_plan_groups_a_chain_and_keeps_values_read_outside():
    j = compiler.optimize(fg.make_jaxpr(lambda x: (jnp.tanh(x * 2.0 + 1.0), jnp.sum(x * 2.0)))(jnp.ones(8)))
    items = fusion.plan(j, lambda e: e.prim.name in ("mul", "add", "tanh"))
    groups = [it for it in items if isinstance(it, fusion.FusedGroup)]
    assert len(groups) == 1
    g = groups[0]
    assert [e.prim.name for e in g.eqns] == ["mul", "add", "tanh"]
    assert len(g.outputs) == 2  # x * 2 is read by reduce_sum outside the group; tanh is a result
    text_plan = fusion.pretty_plan(items)
    assert "fused[3 ops" in text_plan and "reduce_sum" in text_plan


def test_fusion_never_orders_a_group_before_what_it_needs():
    # y = exp(x) is read by reduce_sum (outside); a later elementwise op on that sum's broadcast must
    # not join exp's group (the group would have to run both before and after the reduction).
    def f(x):
        y = jnp.exp(x)
        s = jnp.sum(y)
        return jnp.sin(y) * s

    j = fg.make_jaxpr(f)(jnp.ones(6))
    items = fusion.plan(j, lambda e: e.prim.name in ("exp", "sin", "mul"))
    seen = set(j.invars) | set(j.constvars)
    for it in items:
        ins = it.inputs if isinstance(it, fusion.FusedGroup) else it.invars
        assert all(w in seen for w in ins)
        seen.update(it.outputs if isinstance(it, fusion.FusedGroup) else it.outvars)


@pytest.fixture
def fuse_small():
    cg = compiler.config.codegen
    old = (cg.fusion, cg.fusion_min_size, cg.fusion_block_size, cg.fusion_threads, cg.fusion_parallel_min_size)
    cg.fusion, cg.fusion_min_size, cg.fusion_block_size = True, 1, 4
    cg.fusion_threads, cg.fusion_parallel_min_size = 2, 1
    yield cg
    (cg.fusion, cg.fusion_min_size, cg.fusion_block_size, cg.fusion_threads, cg.fusion_parallel_min_size) = old


def test_fused_kernel_walks_blocks_and_matches_eager(fuse_small):
    def f(x, b):
        h = jnp.maximum(x * 0.5 + b, 0.0)
        return jnp.exp(jnp.tanh(h)) - h, h

    x = jnp.asarray(np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32))
    b = jnp.asarray(np.random.default_rng(1).standard_normal(6).astype(np.float32))
    lowered = fg.jit(f).lower(x, b)
    src = lowered.source()
    assert "_run_fused" in src and "def _kernel0" in src and "for s in range(lo, hi, step)" in src
    assert "fused[" in lowered.fused_text()
    got = fg.jit(f)(x, b)
    want = f(x, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_small_arrays_stay_straight_line_in_place_code():
    def chain(x):
        for i in range(5):
            x = jnp.exp(jnp.tanh(x * 0.5 + 0.1 * i))
        return x

    src = fg.jit(chain).lower(jnp.ones(16, dtype=jnp.float32)).source()
    assert "for " not in src and "_run_fused" not in src
    # one fresh buffer, then every op in place: `vN = _op(..., vN)` (the out buffer passed positionally)
    assert len(in_place_lines(src)) >= 15


def test_large_elementwise_chain_is_fused_by_default():
    def chain(x):
        for i in range(3):
            x = jnp.exp(jnp.tanh(x * 0.5 + 0.1 * i))
        return x

    x = jnp.asarray(np.linspace(-1, 1, compiler.config.codegen.fusion_min_size, dtype=np.float32))
    src = fg.jit(chain).lower(x).source()
    assert "_run_fused" in src
    np.testing.assert_allclose(fg.jit(chain)(x), chain(x), rtol=1e-6)


def test_dot_general_patterns_become_one_matmul_without_copies():
    a = jnp.asarray(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    b = jnp.asarray(np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32))
    c = jnp.asarray(np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32))
    f = fg.jit(lambda a, b, c: (a.T @ b, b @ c, (a.T @ b).T, a @ c.T))
    src = f.lower(a, b, c).source()
    assert src.count("_matmul(") == 4 and "transpose" not in src and ".copy" not in src
    for g, w in zip(f(a, b, c), (a.T @ b, b @ c, (a.T @ b).T, a @ c.T)):
        np.testing.assert_allclose(g, w, rtol=1e-5)
        assert np.asarray(g).flags.c_contiguous


# --- buffer reuse never changes results ------------------------------------------------------------

def test_input_that_is_also_an_output_is_never_written(fuse_small):
    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    before = np.asarray(x).copy()
    for f in (lambda x: (x, jnp.exp(x) * 2.0 + 1.0), lambda x: (jnp.exp(x) * 2.0 + 1.0, x)):
        for fuse in (True, False):
            fuse_small.fusion = fuse
            outs = fg.jit(f)(x)
            np.testing.assert_array_equal(np.asarray(x), before)
            assert any(o is x for o in outs)


def test_buffer_reused_later_does_not_clobber_an_output():
    def f(x):
        y = jnp.exp(x)       # fresh
        out1 = y * 2.0       # an output: may take y's buffer, then must never be written again
        z = jnp.sin(out1) + 1.0
        w = z * z            # z is dead: its buffer may be reused, out1's may not
        return out1, w

    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    xe = np.exp(np.asarray(x))
    o1, w = fg.jit(f)(x)
    np.testing.assert_allclose(o1, 2 * xe, rtol=1e-6)
    np.testing.assert_allclose(w, (np.sin(2 * xe) + 1) ** 2, rtol=1e-6)


@pytest.mark.parametrize("fuse", [False, True])
def test_a_view_of_a_donated_buffer_is_never_returned_corrupted(fuse, fuse_small):
    fuse_small.fusion = fuse

    def f(x):
        y = jnp.exp(x)
        v1 = y.T                    # a view of y's buffer
        v2 = y.reshape(12)          # another view
        z = jnp.tanh(y) * 3.0       # y dies here (as a variable) but its views live on
        return z + 1.0, v1, v2[2:7]

    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    xe = np.exp(np.asarray(x))
    z, v1, v2 = fg.jit(f)(x)
    np.testing.assert_allclose(v1, xe.T, rtol=1e-6)
    np.testing.assert_allclose(v2, xe.reshape(12)[2:7], rtol=1e-6)
    np.testing.assert_allclose(z, np.tanh(xe) * 3 + 1, rtol=1e-6)


def test_views_read_after_the_variable_died_keep_their_values():
    def f(x):
        y = jnp.exp(x) + 1.0        # fresh
        t = y.T                     # view of y
        s = y * 2.0                 # y dies here: its buffer must not take s, since t still reads it
        return s + t.T, jnp.sum(t)

    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    y = np.exp(np.asarray(x)) + 1
    a, b = fg.jit(f)(x)
    np.testing.assert_allclose(a, 3 * y, rtol=1e-6)
    np.testing.assert_allclose(b, y.sum(), rtol=1e-5)


def test_constants_are_never_written():
    c = jnp.asarray(np.arange(4.0, dtype=np.float32) + 1.0)

    def f(x):
        return jnp.exp(c * x) + c, c * 1.0

    x = jnp.ones(4, dtype=jnp.float32)
    for _ in range(3):
        a, b = fg.jit(f)(x)
    np.testing.assert_allclose(np.asarray(c), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(b, [1.0, 2.0, 3.0, 4.0])


def test_relu_uses_a_contiguous_zero_operand_not_a_scalar():
    import re
    src = fg.jit(lambda x: jnp.maximum(x, 0.0)).lower(jnp.ones((8, 8))).source()
    assert re.search(r"_maximum\(v\d+, k\d+\)", src), src  # a filled array: no fast scalar loop in NumPy


def test_log_compiles_is_logged_by_funcgrad_jit(caplog):
    old = fg.config.read("log_compiles")
    fg.config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="funcgrad.jit"):
            f = fg.jit(lambda x: x + 1.0)
            f(jnp.ones(2))
        assert any(r.name == "funcgrad.jit" for r in caplog.records)
    finally:
        fg.config.update("log_compiles", old)


@pytest.mark.parametrize("shape,axes", [((32, 16, 28, 28), (0, 2, 3)), ((8, 4, 16, 32), (0, 1, 3)),
                                        ((16, 24, 40), (0, 2))])
def test_sum_over_leading_and_later_axes_runs_as_two_sums(shape, axes):
    """A bias gradient g.sum((0, 2, 3)): the leading axes are summed first (contiguous slabs), then the
    later ones of the smaller array; the result matches eager to float32 summation rounding, with -0.0,
    inf and NaN where eager has them."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal(shape).astype(np.float32)
    a[(slice(None),) * (len(shape) - 1) + (0,)] = -0.0  # a column of -0.0s: sums to -0.0
    idx = tuple(0 if i in axes else 1 for i in range(len(shape)))
    a[idx] = np.inf
    x = jnp.asarray(a)
    f = fg.jit(lambda v: jnp.sum(v, axis=axes))
    src = f.lower(x).source()
    lead = tuple(range(len([i for i in range(len(shape)) if i in axes and all(j in axes for j in range(i))])))
    assert re.search(rf"(sum\d+)\(\1\(v0, {re.escape(repr(lead))}, dt0\), ", src), src
    got, want = np.asarray(f(x)), np.asarray(jnp.sum(x, axis=axes))
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = np.abs(a[np.isfinite(a)]).sum() / want.size
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-7 * scale)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_small_or_leading_only_sums_stay_one_call():
    x = jnp.ones((4, 8, 16), dtype=jnp.float32)  # 512 elements: below SPLIT_SUM_MIN
    assert re.search(r"= sum\d+\(v0, \(0, 2\), dt0\)", fg.jit(lambda v: jnp.sum(v, axis=(0, 2))).lower(x).source())
    y = jnp.ones((64, 512), dtype=jnp.float32)
    for axes in ((0,), (0, 1), (1,)):
        src = fg.jit(lambda v: jnp.sum(v, axis=axes)).lower(y).source()
        assert len(re.findall(r"sum\d+\(", src)) == 1, src
