"""Fused groups as CuPy ElementwiseKernels (compiler/cuda_kernels.py and codegen's CuPy path).

Without a GPU the translation is still checked for real: a stand-in array module ("fakecupy": NumPy
plus an `ElementwiseKernel` that compiles the generated operation as C with gcc and runs it through
ctypes) goes through the same code generation as CuPy, and jit's result must equal eager NumPy's. The
GPU test at the end runs the real thing where cupy and a device exist.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import types

import numpy as np
import pytest
from hypothesis import given, strategies as st

import funcgrad as fg
import funcgrad.lax as lax
import funcgrad.numpy as jnp
from funcgrad._src.prims import elementwise as ew
from funcgrad._src.interpreters import compiler
from funcgrad._src.interpreters.compiler import codegen, cuda_kernels, fusion

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not on PATH (needed to compile the kernels as C)")

_C_TYPES = {name: ctype for name, ctype in cuda_kernels.CTYPES.values()}
_DIR = None
_LIBS = {}


def _params(text):
    return [tuple(p.split()) for p in text.split(",")] if text.strip() else []


class GccElementwiseKernel:
    """cupy.ElementwiseKernel's calling convention over NumPy arrays, the operation compiled by gcc."""
    made = []

    def __init__(self, in_params, out_params, operation, name="kernel", options=()):
        self.ins, self.outs, self.operation, self.name, self.options = \
            _params(in_params), _params(out_params), operation, name, options
        self.calls = 0
        GccElementwiseKernel.made.append(self)
        lines = ["#include <math.h>", "#include <stdbool.h>",
                 "void kern(long n, void **ins, const long *steps, void **outs) {",
                 "  for (long _k = 0; _k < n; _k++) {"]
        for j, (ty, nm) in enumerate(self.ins):
            c = _C_TYPES[ty]
            lines.append(f"    const {c} {nm} = ((const {c} *)ins[{j}])[_k * steps[{j}]];")
        for ty, nm in self.outs:
            lines.append(f"    {_C_TYPES[ty]} {nm};")
        lines.append("    {\n" + operation + "\n    }")
        for j, (ty, nm) in enumerate(self.outs):
            lines.append(f"    (({_C_TYPES[ty]} *)outs[{j}])[_k] = {nm};")
        lines += ["  }", "}"]
        self.c_source = "\n".join(lines)
        self.fn = _compile(self.c_source)

    def __call__(self, *args):
        assert len(args) in (len(self.ins), len(self.ins) + len(self.outs)), (len(args), self.ins, self.outs)
        ins, outs = args[:len(self.ins)], list(args[len(self.ins):])
        for a, (ty, _) in zip(ins, self.ins):  # the generated call passes exactly the declared dtypes
            assert np.asarray(a).dtype == np.dtype(ty), (np.asarray(a).dtype, ty)
        shape = outs[0].shape if outs else np.broadcast_shapes(*[np.shape(a) for a in ins])
        if not outs:
            outs = [np.empty(shape, np.dtype(ty)) for ty, _ in self.outs]
        full = [np.ascontiguousarray(np.broadcast_to(np.asarray(a), shape)) for a in ins]
        n = int(np.prod(shape))
        ptrs = (ctypes.c_void_p * max(1, len(full)))(*[a.ctypes.data for a in full])
        steps = (ctypes.c_long * max(1, len(full)))(*[1] * len(full))
        optrs = (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs])
        self.fn(n, ptrs, steps, optrs)
        self.calls += 1
        return outs[0] if len(outs) == 1 else tuple(outs)


def _compile(source):
    global _DIR
    key = hashlib.sha1(source.encode()).hexdigest()[:20]
    fn = _LIBS.get(key)
    if fn is None:
        if _DIR is None:
            _DIR = tempfile.mkdtemp(prefix="funcgrad_gcc_kernels_")
        c, so = os.path.join(_DIR, key + ".c"), os.path.join(_DIR, key + ".so")
        with open(c, "w") as fh:
            fh.write(source)
        r = subprocess.run([GCC, "-O1", "-std=gnu99", "-ffp-contract=off", "-fno-fast-math",
                            "-Werror=implicit-function-declaration", "-shared", "-fPIC", "-o", so, c, "-lm"],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"gcc failed:\n{r.stderr}\n{source}"
        fn = ctypes.CDLL(so).kern
        fn.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        fn.restype = None
        _LIBS[key] = fn
    return fn


def _fake_cupy():
    """A module named like a backend that is NumPy everywhere except ElementwiseKernel."""
    m = types.ModuleType("fakecupy")
    m.__getattr__ = lambda name: getattr(np, name)
    m.ElementwiseKernel = GccElementwiseKernel
    return m


FAKE = _fake_cupy()


def compiled_on_fake(f, *args):
    j = fg.make_jaxpr(f)(*args)
    return compiler.compile_jaxpr(j, xp=FAKE, fusion=True)


def run_both(f, *arrays):
    """(jit through the kernel path on fakecupy, eager NumPy), as lists of NumPy arrays, + the Compiled."""
    xs = [jnp.asarray(a) for a in arrays]
    with np.errstate(all="ignore"):
        c = compiled_on_fake(f, *xs)
        got = c(*arrays)
        want = f(*xs)
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    return [np.asarray(g) for g in got], [np.asarray(w) for w in want], c


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if w.dtype.kind == "f":
            # glibc's and NumPy's (SIMD) exp/tanh/... may differ in the last bit; a difference of
            # results near 1 turns that into a few ulps at unit scale, hence the small atol
            rtol = 1e-6 if w.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, w, rtol=rtol, atol=4 * np.finfo(w.dtype).eps, equal_nan=True)
            for test in (np.isnan, np.isposinf, np.isneginf):
                assert np.array_equal(test(g), test(w)), test.__name__
        else:
            np.testing.assert_array_equal(g, w)


def kernel_calls(c) -> int:
    """How many lines of the generated function call an ElementwiseKernel."""
    return sum(" = _ek" in ln for ln in c.source.split("\n"))


def kernel_text(c) -> str:
    return c.source.split("# _ek", 1)[1] if "# _ek" in c.source else ""


def specials(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    flat = x.reshape(-1)
    flat[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0][:min(6, flat.size)]
    return x


# --- the translation, end to end through codegen ------------------------------------------------------

@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_chain_with_broadcast_and_constants_is_one_kernel(dtype):
    def f(x, b):
        h = jnp.maximum(x * 0.5 + b, 0.0)
        return jnp.exp(jnp.tanh(h)) - h, h, (h > 1.0) | (x != x), jnp.minimum(x, b)

    x, b = specials(dtype, (7, 9), 0), specials(dtype, (9,), 1)
    got, want, c = run_both(f, x, b)
    check(got, want)
    assert kernel_calls(c) == 1 and "_run_fused" not in c.source  # the whole program is one kernel
    assert "ElementwiseKernel funcgrad_fused_" in c.source and ("tanhf(" in c.source) == (dtype == np.float32)
    assert "0.5f" in c.source or "0.5" not in c.source.split("ElementwiseKernel")[1]


@needs_gcc
def test_group_with_no_full_size_operand_gets_preallocated_outputs():
    def f(b):  # every operand of the group is smaller than its result: broadcasts and a scalar
        y = jnp.broadcast_to(b, (5, 4)) * 2.0
        return jnp.tanh(y) + jnp.broadcast_to(b[:, None], (4, 4))[0]

    got, want, c = run_both(f, np.linspace(-1, 1, 4).astype(np.float32))
    check(got, want)
    assert kernel_calls(c) == 1 and "_empty((5, 4)" in c.source


UNARY_F = ["exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "logistic", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt",
           "square", "abs", "sign", "floor", "ceil", "neg", "is_finite"]


@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY_F)
def test_every_float_unary(name, dtype):
    op = getattr(lax, name, None) or getattr(ew, name)
    x = specials(dtype, (5, 8), 2)
    x.reshape(-1)[8:16] = np.array([0.5, -0.5, 1.5, -2.5, 1e-8, 40.0, -40.0, 0.999], dtype)
    got, want, c = run_both(lambda x: op(x * 1.0 + x), x)  # x + x, then the op: a group of two
    check(got, want)
    assert kernel_calls(c) == 1


@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "max", "min", "pow", "rem", "atan2",
                                  "nextafter", "eq", "ne", "lt", "le", "gt", "ge"])
def test_every_float_binary_with_nan_and_inf(name, dtype):
    op = getattr(lax, name)
    x, y = specials(dtype, (6, 7), 3), specials(dtype, (6, 7), 4)
    y.reshape(-1)[6:12] = [np.nan, 1.0, np.inf, -np.inf, 0.0, np.nan]  # NaN against NaN, inf, numbers
    x.reshape(-1)[6:12] = [np.nan, np.nan, np.inf, 2.0, -0.0, 3.0]
    got, want, c = run_both(lambda x, y: op(lax.neg(x), y), x, y)
    check(got, want)
    assert kernel_calls(c) == 1


@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_clamp_select_integer_pow(dtype):
    x = specials(dtype, (4, 10), 5)
    x.reshape(-1)[6:14] = [0.5, -0.5, 1.5, 2.5, -2.5, 3.49, -7.5, 1e30]

    def f(x):
        r0 = lax.round(x + 0.0, lax.RoundingMethod.AWAY_FROM_ZERO)
        r1 = lax.round(x + 0.0, lax.RoundingMethod.TO_NEAREST_EVEN)
        cl = lax.clamp(jnp.asarray(-1.0, dtype), x * 2.0, jnp.asarray(1.5, dtype))
        s = lax.select(x > 0.0, lax.integer_pow(x, 3), lax.integer_pow(x, -2))
        return r0, r1, cl, s, lax.integer_pow(x + 1.0, 2)

    got, want, c = run_both(f, x)
    check(got, want)
    k = kernel_text(c)
    assert kernel_calls(c) >= 1 and "rint" in k and "round" in k and "pow" in k and "?" in k


INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32]


@needs_gcc
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_ops_wrap_truncate_and_divide_by_zero_as_numpy(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(6)
    x = rng.integers(info.min, info.max, (8, 9), dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, (8, 9), dtype=dtype, endpoint=True)
    x.reshape(-1)[:8] = [info.min, info.min, info.max, 7, 0, 5, info.max, 3]
    y.reshape(-1)[:8] = [info.max, 0, 2, 0, 0, 2 if info.min == 0 else -2, info.max, 1]
    if info.min < 0:
        y.reshape(-1)[8:10] = -1
        x.reshape(-1)[8] = info.min
    small = (rng.integers(0, 2 * 8 * np.dtype(dtype).itemsize, (8, 9)) - (4 if info.min < 0 else 0)).astype(dtype)

    def f(x, y, s):
        out = [x + y, x - y, x * y, lax.div(x, y), lax.rem(x, y), lax.max(x, y), lax.min(x, y), -x,
               lax.abs(x) if info.min < 0 else x, lax.sign(x), x * x, lax.integer_pow(x, 3),
               x & y, x | y, x ^ y, ~x, lax.shift_left(x, s), lax.shift_right_logical(x, s),
               x == y, x < y, x >= y]
        if info.min < 0:
            out.append(lax.shift_right_arithmetic(x, s))
        return [o ^ (x & 0) for o in out[:-3 - (info.min < 0)]] + out[-3 - (info.min < 0):]

    got, want, c = run_both(f, x, y, small)
    check(got, want)
    assert kernel_calls(c) == 1


@needs_gcc
def test_bool_logic_and_converts():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((5, 11)).astype(np.float32) * 300
    a.reshape(-1)[:4] = [np.nan, 0.0, -0.0, 0.4]
    i = rng.integers(-2**31, 2**31 - 1, (5, 11), dtype=np.int32)

    def f(a, i):
        p = a > 0.0
        q = lax.convert_element_type(a, np.bool_)            # NaN -> True, -0.0 -> False
        r = (p & ~q) | (p ^ q) | lax.max(p, q) & lax.min(p, ~q)
        fa = lax.convert_element_type(jnp.where(a == a, a, 0.0), np.int32) + i  # in-range float -> int
        return (r, lax.convert_element_type(r, np.float32) + a, lax.convert_element_type(i, np.float32) * 2.0,
                lax.convert_element_type(a, np.float64) * 3.0, fa, lax.convert_element_type(i, np.int8) + 1)

    got, want, c = run_both(f, a, i)
    check(got, want)
    assert kernel_calls(c) == 1


# --- random programs --------------------------------------------------------------------------------

FLOAT_MENU = {
    "add": (2, lambda a, b: a + b), "sub": (2, lambda a, b: a - b), "mul": (2, lambda a, b: a * b),
    "div": (2, lambda a, b: a / (jnp.abs(b) + 1.0)), "max": (2, jnp.maximum), "min": (2, jnp.minimum),
    "where": (2, lambda a, b: jnp.where(a > b, a, b * 0.5)), "tanh": (1, jnp.tanh), "sin": (1, jnp.sin),
    "exp_neg_abs": (1, lambda a: jnp.exp(-jnp.abs(a))), "logistic": (1, lax.logistic),
    "scale": (1, lambda a: a * 0.75 - 0.125), "sq": (1, lambda a: a ** 2), "sqrt": (1, lambda a: jnp.sqrt(jnp.abs(a))),
    "log1p": (1, lambda a: jnp.log1p(jnp.abs(a))), "bcast_row": (1, lambda a: a + a[0]),
    "sum_back": (1, lambda a: a - jnp.sum(a, axis=0)),
}


@needs_gcc
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_random_float_programs_match_eager(data, dtype):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    names = data.draw(st.lists(st.sampled_from(sorted(FLOAT_MENU)), min_size=1, max_size=10), label="ops")
    picks = data.draw(st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), min_size=len(names),
                               max_size=len(names)), label="operands")
    nout = data.draw(st.integers(1, 3), label="outputs")

    def prog(x, y):
        pool = [x, y]
        for nm, (i, j) in zip(names, picks):
            arity, fn = FLOAT_MENU[nm]
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            pool.append(fn(a) if arity == 1 else fn(a, b))
        return tuple(pool[-nout:])

    x = rng.standard_normal((4, 6)).astype(dtype)
    y = rng.standard_normal((4, 6)).astype(dtype)
    x.reshape(-1)[data.draw(st.integers(0, 23), label="nan_at")] = np.nan
    got, want, _ = run_both(prog, x, y)
    check(got, want)


# --- planning and fallbacks -------------------------------------------------------------------------

def _groups(items):
    return [it for it in items if isinstance(it, fusion.FusedGroup)]


def test_untranslatable_member_gives_none_and_stays_outside_groups():
    x = jnp.ones((3, 4))
    j = compiler.lower(fg.make_jaxpr(lambda x: jnp.tanh(lax.erf(x * 2.0) + 1.0))(x))
    erf = [e for e in j.eqns if e.prim.name == "erf"][0]
    assert not cuda_kernels.translatable(erf)
    g = _groups(fusion.plan(j, lambda e: e.prim.name in ("mul", "erf", "add", "tanh")))[0]
    assert [e.prim.name for e in g.eqns] == ["mul", "erf", "add", "tanh"]
    assert cuda_kernels.translate(g) is None  # a whole group with erf: no kernel
    items, srcs = codegen.cuda_plan(j)     # the CUDA predicate leaves erf out: two kernels around it
    names = [("group" if isinstance(it, fusion.FusedGroup) else it.prim.name) for it in items]
    assert "erf" in names and all(id(g) in srcs for g in _groups(items))


def test_complex_population_count_and_special_functions_do_not_translate():
    c = jnp.ones((3,), dtype=jnp.complex64)
    j = fg.make_jaxpr(lambda c: c * c)(c)
    assert not cuda_kernels.translatable(j.eqns[0])
    i = jnp.ones((3,), dtype=jnp.int32)
    j = fg.make_jaxpr(lambda i: (lax.population_count(i), lax.integer_pow(i, 20), i ** i))(i)
    assert not any(cuda_kernels.translatable(e) for e in j.eqns)
    f = jnp.ones((3,), dtype=jnp.float32)
    j = fg.make_jaxpr(lambda x: (lax.lgamma(x), lax.erf_inv(x), lax.digamma(x)))(f)
    special = [e for e in j.eqns if e.prim.name in ("lgamma", "erf_inv", "digamma")]  # (lax.digamma also
    assert len(special) == 3 and not any(cuda_kernels.translatable(e) for e in special)  # selects XLA's NaN)


def test_untranslatable_group_falls_back_to_one_call_per_equation(monkeypatch):
    monkeypatch.setattr(cuda_kernels, "translate", lambda g: None)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b = np.arange(4, dtype=np.float32)
    f = lambda x, b: jnp.tanh(x * 2.0 + b) * x  # noqa: E731
    j = compiler.lower(fg.make_jaxpr(f)(jnp.asarray(x), jnp.asarray(b)))
    items, srcs = codegen.cuda_plan(j)
    assert not srcs and not _groups(items)
    assert sorted(e.prim.name for e in items) == sorted(e.prim.name for e in j.eqns)  # broadcast back too
    c = compiler.compile_jaxpr(j, xp=FAKE, fusion=True)
    assert "_ek" not in c.source
    np.testing.assert_allclose(np.asarray(c(x, b)[0]), np.asarray(f(jnp.asarray(x), jnp.asarray(b))), rtol=1e-6)


def test_a_kernel_backend_gets_one_call_per_group_with_its_params():
    made = []

    class Recorder:
        def __init__(self, in_params, out_params, operation, name, options=()):
            self.args = (in_params, out_params, operation, name, options)
            made.append(self)

        def __call__(self, *args):
            self.called = args
            outs = tuple(np.zeros((3, 4), np.float32) for _ in _params(self.args[1]))
            return outs[0] if len(outs) == 1 else outs  # as cupy: one output is returned bare

    xp = types.ModuleType("recordingcupy")
    xp.__getattr__ = lambda name: getattr(np, name)
    xp.ElementwiseKernel = Recorder

    def f(x, b):
        y = jnp.tanh(x * 3.0 + b)        # group 1 (b broadcast), y read by the sum
        s = jnp.sum(y, axis=1, keepdims=True)
        return jnp.exp(y - s) * 2.0, y   # group 2 (s broadcast)

    x = jnp.ones((3, 4), jnp.float32)
    b = jnp.ones((4,), jnp.float32)
    j = fg.make_jaxpr(f)(x, b)
    c = compiler.compile_jaxpr(j, xp=xp, fusion=True)
    assert len(made) == 2
    (in1, out1, op1, name1, opt1), (in2, out2, op2, _, _) = [k.args for k in made]
    assert name1.startswith("funcgrad_fused_") and "--fmad=false" in opt1
    assert in1.count("float32") == 3 and "b" in in1 and out1 == "float32 o0"
    assert "tanhf(" in op1 and "3.0f" not in op1  # constants are parameters, not literals
    assert out2 == "float32 o0" and "expf(" in op2
    calls = [ln for ln in c.source.split("\n") if " = _ek" in ln]
    assert len(calls) == 2, c.source
    assert "# _ek0: ElementwiseKernel funcgrad_fused_" in c.source and "tanhf(" in c.source
    assert ".reshape((1, 4))" in c.source  # b passed at its expanded shape; the kernel broadcasts it
    c(np.ones((3, 4), np.float32), np.ones(4, np.float32))
    assert all(hasattr(k, "called") for k in made)
    # A second program with the same group shares the kernel object (built once per source).
    before = len(made)
    compiler.compile_jaxpr(fg.make_jaxpr(f)(x, b), xp=xp, fusion=True)
    assert len(made) == before


def test_numpy_path_is_unchanged_and_never_builds_kernels():
    x = jnp.ones((3, 4))
    c = compiler.compile_jaxpr(fg.make_jaxpr(lambda x: jnp.tanh(x * 2.0) + 1.0)(x), xp=np, fusion=True)
    assert "_ek" not in c.source and "ElementwiseKernel" not in c.source


def test_literals_keep_float32():
    assert cuda_kernels.literal(0.5, np.float32) == "0.5f"
    assert cuda_kernels.literal(1, np.float32) == "1.0f" and cuda_kernels.literal(1, np.float64) == "1.0"
    assert cuda_kernels.literal(3, np.int64) == "((long long)3)"
    with pytest.raises(ValueError):
        cuda_kernels.literal(np.inf, np.float32)


# --- the real thing ---------------------------------------------------------------------------------

def test_cupy_jit_with_fused_kernels_matches_eager():
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as err:  # noqa: BLE001 - no driver / no device
        pytest.skip(f"no CUDA device: {err}")

    def f(x, b, i):
        h = jnp.maximum(x * 0.5 + b, 0.0)
        m = (h > 0.25) | (x != x)
        return (jnp.exp(jnp.tanh(h)) - h, h, m, jnp.where(m, x, -x) / (1.0 + x * x),
                lax.div(i, i // 3 + 1) * 3 - i, jnp.sum(h * h, axis=1))

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((64, 33)).astype(dtype)
        x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
        b = rng.standard_normal(33).astype(dtype)
        i = rng.integers(-1000, 1000, (64, 33), dtype=np.int32)
        args = [jnp.asarray(cp.asarray(a)) for a in (x, b, i)]
        want = f(*args)
        got = fg.jit(f)(*args)
        src = fg.jit(f).lower(*args).source()
        assert "ElementwiseKernel funcgrad_fused_" in src
        assert len(got) == len(want)
        check([cp.asnumpy(g_._buf) for g_ in got], [cp.asnumpy(w_._buf) for w_ in want])
