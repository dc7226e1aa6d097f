"""The JAX face follows JAX's two x64 modes exactly; the torch face keeps torch's dtype rules.

With x64 off (the default, as in JAX) every value entering the JAX face from outside (NumPy arrays and
scalars, lists, Python scalars) is canonicalised to 32 bits, creation functions give 32-bit arrays and
index results are int32; with x64 on they are 64-bit. Arrays that already exist (a float64 one made by the
torch face) are never narrowed. The table below holds JAX 0.10.2's result dtypes for each expression in
both modes (a trailing * marks a weakly typed result); it is checked without JAX, and against JAX itself
where JAX is installed.
"""
import contextlib
import json
import subprocess
import sys

import numpy as np
import pytest

import funcgrad
import funcgrad.lax as flax
import funcgrad.numpy as fjnp
from funcgrad._src.core import dtypes
from funcgrad._src.core.array import canonical_array


@contextlib.contextmanager
def x64(enabled: bool):
    old = funcgrad.config.read("jax_enable_x64")
    funcgrad.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        funcgrad.config.update("jax_enable_x64", old)


# (expression over jnp / np / lax / jx, JAX's dtype with x64 off, with x64 on)
TABLE = [
    ('jnp.zeros(3)', 'float32', 'float64'),
    ('jnp.ones((2, 2))', 'float32', 'float64'),
    ('jnp.empty(3)', 'float32', 'float64'),
    ('jnp.full(3, 1)', 'int32*', 'int64*'),
    ('jnp.full(3, 1.0)', 'float32*', 'float64*'),
    ('jnp.full(3, np.float64(1))', 'float32', 'float64'),
    ('jnp.full(3, np.int64(1))', 'int32', 'int64'),
    ('jnp.full((2,), True)', 'bool', 'bool'),
    ('jnp.zeros_like(np.ones(3))', 'float32', 'float64'),
    ('jnp.ones_like(np.arange(3))', 'int32', 'int64'),
    ('jnp.full_like(np.ones(3), 2)', 'float32', 'float64'),
    ('jnp.empty_like(np.ones(3, np.complex128))', 'complex64', 'complex128'),
    ('jnp.zeros(3, int)', 'int32', 'int64'),
    ('jnp.zeros(3, float)', 'float32', 'float64'),
    ('jnp.zeros(3, complex)', 'complex64', 'complex128'),
    ('jnp.arange(3)', 'int32', 'int64'),
    ('jnp.arange(3.0)', 'float32', 'float64'),
    ('jnp.arange(0, 1, 0.25)', 'float32', 'float64'),
    ('jnp.arange(np.int64(4))', 'int32', 'int64'),
    ('jnp.array([1, 2])', 'int32', 'int64'),
    ('jnp.array([1.0, 2])', 'float32', 'float64'),
    ('jnp.array([1j])', 'complex64', 'complex128'),
    ('jnp.array(1)', 'int32*', 'int64*'),
    ('jnp.array(1.0)', 'float32*', 'float64*'),
    ('jnp.array(True)', 'bool', 'bool'),
    ('jnp.array([np.float64(1)])', 'float32', 'float64'),
    ('jnp.array([])', 'float32', 'float64'),
    ('jnp.array(np.ones(3))', 'float32', 'float64'),
    ('jnp.asarray(np.ones(3))', 'float32', 'float64'),
    ('jnp.asarray(np.arange(3))', 'int32', 'int64'),
    ('jnp.asarray(np.ones(3, np.uint64))', 'uint32', 'uint64'),
    ('jnp.asarray(np.ones(3, np.complex128))', 'complex64', 'complex128'),
    ('jnp.asarray(np.float64(1))', 'float32', 'float64'),
    ('jnp.asarray(np.int64(1))', 'int32', 'int64'),
    ('jnp.asarray(np.ones(3, np.float16))', 'float16', 'float16'),
    ('jnp.asarray(np.ones(3, np.int8))', 'int8', 'int8'),
    ('jnp.asarray(np.ones(3, np.uint32))', 'uint32', 'uint32'),
    ('jnp.asarray(2)', 'int32*', 'int64*'),
    ('jnp.asarray(2.5)', 'float32*', 'float64*'),
    ('jnp.asarray([[1, 2], [3, 4]])', 'int32', 'int64'),
    ('jnp.eye(3)', 'float32', 'float64'),
    ('jnp.identity(2)', 'float32', 'float64'),
    ('jnp.linspace(0, 1, 5)', 'float32', 'float64'),
    ('jnp.logspace(0, 1, 3)', 'float32', 'float64'),
    ('jnp.geomspace(1, 10, 3)', 'float32', 'float64'),
    ('jnp.tri(3)', 'float32', 'float32'),
    ('jnp.indices((2, 3))', 'int32', 'int64'),
    ('jnp.meshgrid(np.ones(2), np.ones(3))[0]', 'float32', 'float64'),
    ('jnp.diag(np.ones(3))', 'float32', 'float64'),
    ('jnp.copy(np.ones(3))', 'float32', 'float64'),
    ('jnp.int_(1)', 'int32', 'int64'),
    ('jnp.float_(1)', 'float32', 'float64'),
    ('jnp.complex_(1)', 'complex64', 'complex128'),
    ('jnp.uint(1)', 'uint32', 'uint64'),
    ('jnp.zeros(3, jnp.int_)', 'int32', 'int64'),
    ('jnp.zeros(3, jnp.float_)', 'float32', 'float64'),
    ('jnp.argmax(np.ones(3))', 'int32', 'int64'),
    ('jnp.argmin(jnp.ones((2, 3)), axis=1)', 'int32', 'int64'),
    ('jnp.argsort(jnp.ones(3))', 'int32', 'int64'),
    ('jnp.nonzero(jnp.ones(3))[0]', 'int32', 'int64'),
    ('jnp.where(jnp.ones(3) > 0)[0]', 'int32', 'int64'),
    ('jnp.argwhere(jnp.ones(3))', 'int32', 'int64'),
    ('jnp.flatnonzero(jnp.ones(3))', 'int32', 'int64'),
    ('jnp.searchsorted(jnp.arange(3.0), 1.5)', 'int32', 'int32'),
    ('jnp.searchsorted(np.arange(3.0), np.ones(2))', 'int32', 'int32'),
    ('jnp.unique(jnp.array([1, 1, 2]), return_index=True)[1]', 'int32', 'int64'),
    ('jnp.unique(jnp.array([1, 1, 2]), return_inverse=True)[1]', 'int32', 'int64'),
    ('jnp.unique(jnp.array([1, 1, 2]), return_counts=True)[1]', 'int32', 'int64'),
    ('jnp.unique(np.array([1, 1, 2]))', 'int32', 'int64'),
    ('jnp.digitize(jnp.ones(3), jnp.arange(3.0))', 'int32', 'int32'),
    ('jnp.bincount(jnp.array([0, 1, 1]))', 'int32', 'int64'),
    ('jnp.bincount(np.array([0, 1, 1]))', 'int32', 'int64'),
    ('jnp.count_nonzero(jnp.ones(3))', 'int32', 'int64'),
    ('jnp.tril_indices(3)[0]', 'int32', 'int64'),
    ('jnp.triu_indices(3)[0]', 'int32', 'int64'),
    ('jnp.diag_indices(3)[0]', 'int32', 'int64'),
    ('jnp.unravel_index(jnp.array([3]), (2, 2))[0]', 'int32', 'int64'),
    ('jnp.unravel_index(3, (2, 2))[0]', 'int32*', 'int64*'),
    ('jnp.ravel_multi_index((jnp.array([1]), jnp.array([1])), (2, 2))', 'int32', 'int64'),
    ('jnp.lexsort((jnp.ones(3),))', 'int32', 'int64'),
    ('jnp.argpartition(jnp.ones(3), 1)', 'int32', 'int32'),
    ('jnp.nanargmax(jnp.ones(3))', 'int32', 'int64'),
    ('jnp.nanargmin(np.ones(3))', 'int32', 'int64'),
    ('jnp.histogram(jnp.ones(3))[0]', 'float32', 'float64'),
    ('jnp.histogram(jnp.ones(3))[1]', 'float32', 'float64'),
    ('jnp.histogram(np.ones(3))[1]', 'float32', 'float64'),
    ('jnp.argmax(jnp.ones(3, jnp.int8))', 'int32', 'int64'),
    ('jnp.sum(jnp.ones(3, jnp.int8))', 'int32', 'int64'),
    ('jnp.sum(jnp.ones(3, jnp.uint8))', 'uint32', 'uint64'),
    ('jnp.sum(jnp.ones(3, bool))', 'int32', 'int64'),
    ('jnp.sum(jnp.ones(3, jnp.int32))', 'int32', 'int64'),
    ('jnp.sum(jnp.ones(3, jnp.uint32))', 'uint32', 'uint64'),
    ('jnp.prod(jnp.ones(3, jnp.int16))', 'int32', 'int64'),
    ('jnp.cumsum(jnp.ones(3, jnp.int8))', 'int8', 'int8'),
    ('jnp.cumsum(jnp.ones(3, bool))', 'int32', 'int64'),
    ('jnp.cumprod(jnp.ones(3, jnp.uint8))', 'uint8', 'uint8'),
    ('jnp.mean(jnp.ones(3, jnp.int32))', 'float32', 'float32'),
    ('jnp.mean(jnp.ones(3, bool))', 'float32', 'float32'),
    ('jnp.var(jnp.arange(3))', 'float32', 'float64'),
    ('jnp.std(jnp.arange(3))', 'float32', 'float64'),
    ('jnp.median(jnp.arange(3))', 'float32', 'float64'),
    ('jnp.average(jnp.arange(3))', 'float32', 'float64'),
    ('jnp.sum(np.ones(3, np.int64))', 'int32', 'int64'),
    ('jnp.max(np.arange(3))', 'int32', 'int64'),
    ('jnp.trace(np.eye(2))', 'float32', 'float64'),
    ('jnp.percentile(jnp.arange(3), 50)', 'float32', 'float64'),
    ('jnp.nansum(jnp.ones(3, jnp.int8))', 'int32', 'int64'),
    ('jnp.ptp(jnp.arange(3))', 'int32', 'int64'),
    ('jnp.sum(np.ones(3))', 'float32', 'float64'),
    ('jnp.mean(np.arange(3))', 'float32', 'float64'),
    ('jnp.all(np.ones(3))', 'bool', 'bool'),
    ('jnp.add(1, 2)', 'int32*', 'int64*'),
    ('jnp.multiply(2.0, 3)', 'float32*', 'float64*'),
    ('jnp.asarray(1) + 1', 'int32*', 'int64*'),
    ('jnp.arange(3) + 1.0', 'float32*', 'float64*'),
    ('jnp.arange(3) * True', 'int32', 'int64'),
    ('jnp.ones(3, jnp.float16) + 1.0', 'float16', 'float16'),
    ('jnp.ones(3, jnp.int8) + 1', 'int8', 'int8'),
    ('jnp.ones(3, bool) + 1', 'int32*', 'int64*'),
    ('jnp.ones(3) + 1j', 'complex64', 'complex128'),
    ('jnp.ones(3, jnp.float16) * 1j', 'complex64', 'complex64'),
    ('jnp.sqrt(2)', 'float32*', 'float64*'),
    ('jnp.sin(np.float64(1))', 'float32', 'float64'),
    ('jnp.exp(np.arange(3))', 'float32', 'float64'),
    ('jnp.true_divide(np.arange(3), 2)', 'float32', 'float64'),
    ('jnp.arange(3) / 2', 'float32', 'float64'),
    ('jnp.power(2, 3)', 'int32*', 'int64*'),
    ('jnp.floor_divide(np.arange(3), 2)', 'int32', 'int64'),
    ('jnp.ones(3) + np.ones(3)', 'float32', 'float64'),
    ('np.ones(3) + jnp.ones(3)', 'float32', 'float64'),
    ('jnp.arange(3) + np.arange(3)', 'int32', 'int64'),
    ('jnp.ones(3) * np.float64(2)', 'float32', 'float64'),
    ('jnp.dot(np.ones(3), np.ones(3))', 'float32', 'float64'),
    ('jnp.matmul(np.ones((2, 2)), np.ones(2))', 'float32', 'float64'),
    ('jnp.concatenate([np.ones(2), np.ones(2)])', 'float32', 'float64'),
    ('jnp.stack([np.ones(2), jnp.ones(2)])', 'float32', 'float64'),
    ('jnp.where(np.ones(2) > 0, np.ones(2), 0)', 'float32', 'float64'),
    ('jnp.clip(np.arange(3), 0, 1)', 'int32', 'int64'),
    ('jnp.maximum(np.ones(2), 0)', 'float32', 'float64'),
    ('jnp.linalg.norm(np.ones(3))', 'float32', 'float64'),
    ('jnp.linalg.inv(np.eye(2))', 'float32', 'float64'),
    ('jnp.fft.fft(np.ones(4))', 'complex64', 'complex128'),
    ('jnp.fft.rfft(np.ones(4))', 'complex64', 'complex128'),
    ('jnp.fft.fftfreq(4)', 'float32', 'float64'),
    ("jnp.einsum('i,i->', np.ones(3), np.ones(3))", 'float32', 'float64'),
    ('jnp.take(np.ones(3), np.array([0, 1]))', 'float32', 'float64'),
    ('jnp.interp(0.5, np.arange(3.0), np.arange(3.0))', 'float32', 'float64'),
    ('jnp.round(np.ones(2))', 'float32', 'float64'),
    ('jnp.isnan(np.ones(2))', 'bool', 'bool'),
    ('jnp.real(np.ones(2, np.complex128))', 'float32', 'float64'),
    ('jnp.polyval(np.ones(3), 2.0)', 'float32', 'float64'),
    ('jnp.convolve(np.ones(3), np.ones(2))', 'float32', 'float64'),
    ('jnp.ones(3, jnp.float32) + jnp.ones(3, jnp.int32)', 'float32', 'float32'),
    ('jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.uint32)', 'int32', 'int64'),
    ('jnp.ones(3, jnp.int8) + jnp.ones(3, jnp.uint8)', 'int16', 'int16'),
    ('jnp.ones(3, jnp.float16) + jnp.ones(3, jnp.int32)', 'float16', 'float16'),
    ('jnp.ones(3, jnp.uint8) + jnp.ones(3, jnp.int32)', 'int32', 'int32'),
    ('jnp.ones(3, jnp.complex64) + jnp.ones(3, jnp.float32)', 'complex64', 'complex64'),
    ('jnp.ones(3, jnp.bfloat16) + jnp.ones(3, jnp.float16)', 'float32', 'float32'),
    ('jnp.ones(3, jnp.bfloat16) + jnp.ones(3, jnp.int32)', 'bfloat16', 'bfloat16'),
    ('jnp.ones(3, jnp.uint16) + jnp.ones(3, jnp.int16)', 'int32', 'int32'),
    ('jnp.ones(3, jnp.float16) + jnp.ones(3, jnp.uint32)', 'float16', 'float16'),
    ('jnp.ones(3, bool) + jnp.ones(3, jnp.uint8)', 'uint8', 'uint8'),
    ('jnp.ones(3, jnp.float16) * jnp.ones(3, jnp.complex64)', 'complex64', 'complex64'),
    ('lax.add(np.ones(3), np.ones(3))', 'float32', 'float64'),
    ('lax.sin(np.ones(3))', 'float32', 'float64'),
    ('lax.add(np.ones(3), 1.0)', 'float32', 'float64'),
    ('lax.convert_element_type(np.ones(3), jnp.int32)', 'int32', 'int32'),
    ('lax.cumsum(np.ones(3))', 'float32', 'float64'),
    ('lax.sort(np.ones(3))', 'float32', 'float64'),
    ('lax.top_k(np.ones(3), 2)[1]', 'int32', 'int32'),
    ('lax.select(np.array([True]), np.ones(1), np.zeros(1))', 'float32', 'float64'),
    ('lax.scan(lambda c, x: (c + x, c.sum()), jnp.zeros(3), np.ones((4, 3)))[0]', 'float32', 'float64'),
    ('lax.scan(lambda c, x: (c + x, c.sum()), jnp.zeros(3), np.ones((4, 3)))[1]', 'float32', 'float64'),
    ('lax.fori_loop(0, 3, lambda i, c: c + i, 0)', 'int32*', 'int64*'),
    ('lax.fori_loop(0, 3, lambda i, c: c + 1.0, np.float64(0))', 'float32', 'float64'),
    ('lax.while_loop(lambda c: c < 3, lambda c: c + 1, np.int64(0))', 'int32', 'int64'),
    ('lax.cond(True, lambda x: x, lambda x: x * 2, np.ones(3))', 'float32', 'float64'),
    ('lax.map(lambda x: x * 2, np.ones(3))', 'float32', 'float64'),
    ('lax.dynamic_slice(np.ones(4), (1,), (2,))', 'float32', 'float64'),
    ('lax.reduce_max(np.ones(3), (0,))', 'float32', 'float64'),
    ('lax.broadcasted_iota(int, (2,), 0)', 'int32', 'int64'),
    ('lax.iota(int, 3)', 'int32', 'int64'),
    ('lax.full((2,), 1.0)', 'float32*', 'float64*'),
    ('lax.full((2,), np.float64(1))', 'float32', 'float64'),
    ('jx.grad(lambda x: (x ** 2).sum())(np.ones(3))', 'float32', 'float64'),
    ('jx.grad(lambda x: x * 2.0)(np.float64(1.0))', 'float32', 'float64'),
    ('jx.grad(lambda x: x * 2.0)(1.0)', 'float32*', 'float64*'),
    ('jx.vmap(lambda x: x * 2)(np.ones(3))', 'float32', 'float64'),
    ('jx.jit(lambda x: x + 1)(np.ones(3))', 'float32', 'float64'),
    ('jx.jit(lambda x: x + 1)(np.arange(3))', 'int32', 'int64'),
    ('jx.jit(lambda x: x * 2)(3)', 'int32*', 'int64*'),
    ('jx.jvp(lambda x: x * 2, (np.ones(3),), (np.ones(3),))[1]', 'float32', 'float64'),
    ('jx.jvp(lambda x: x * 2, (np.ones(3),), (np.ones(3),))[0]', 'float32', 'float64'),
    ('jx.vjp(lambda x: x * 2, np.ones(3))[0]', 'float32', 'float64'),
    ('jx.vjp(lambda x: x * 2, np.ones(3))[1](np.ones(3))[0]', 'float32', 'float64'),
    ('jx.jacfwd(lambda x: x * 2)(np.ones(2))', 'float32', 'float64'),
    ('jx.jacrev(lambda x: x * 2)(np.ones(2))', 'float32', 'float64'),
    ('jx.hessian(lambda x: (x ** 3).sum())(np.ones(2))', 'float32', 'float64'),
    ('jx.value_and_grad(lambda x: (x * x).sum())(np.ones(2))[0]', 'float32', 'float64'),
    ('jx.value_and_grad(lambda x: (x * x).sum())(np.ones(2))[1]', 'float32', 'float64'),
    ('jx.vmap(lambda x, y: x + y, (0, None))(np.ones(3), np.float64(1))', 'float32', 'float64'),
    ('jx.grad(lambda x: x.sum())(np.ones(3, np.float16))', 'float16', 'float16'),
    ('jx.device_put(np.ones(3))', 'float32', 'float64'),
]


def _describe(r) -> str:
    return str(np.dtype(r.dtype)) + ("*" if getattr(r, "weak_type", False) else "")


def _eval(expr, jx, jnp, lax):
    return _describe(eval(expr, {"jnp": jnp, "np": np, "lax": lax, "jx": jx}))


@pytest.mark.parametrize("mode", ["off", "on"])
def test_dtypes_table(mode):
    """Every expression gives JAX's dtype and weak type in each mode (expected values from JAX 0.10.2)."""
    bad = []
    with x64(mode == "on"):
        for expr, off, on in TABLE:
            if "bfloat16" in expr and dtypes.bfloat16 is None:
                continue  # bfloat16 needs ml_dtypes (an optional dependency)
            want = off if mode == "off" else on
            got = _eval(expr, funcgrad, fjnp, flax)
            if got != want:
                bad.append(f"{expr}: {got} (JAX: {want})")
    assert not bad, "\n".join(bad)


_JAX_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import jax
jax.config.update("jax_enable_x64", sys.argv[1] == "on")
import jax.numpy as jnp, jax.lax as lax
out = {}
for expr in json.loads(sys.stdin.read()):
    r = eval(expr, {"jnp": jnp, "np": np, "lax": lax, "jx": jax})
    out[expr] = str(np.dtype(r.dtype)) + ("*" if getattr(r, "weak_type", False) else "")
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", ["off", "on"])
def test_dtypes_table_is_jax(mode):
    """The table is JAX's: each expression evaluated by JAX itself (in a process of its own per mode)."""
    pytest.importorskip("jax")
    exprs = [e for e, _, _ in TABLE]
    res = subprocess.run([sys.executable, "-c", _JAX_SCRIPT, mode], input=json.dumps(exprs),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout)
    col = 1 if mode == "off" else 2
    bad = [f"{row[0]}: table {row[col]}, JAX {got[row[0]]}" for row in TABLE if got[row[0]] != row[col]]
    assert not bad, "\n".join(bad)


# --- promotion: JAX's lattice ------------------------------------------------------------------------

_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"] + (["bfloat16"] if dtypes.bfloat16 is not None else [])


def _dt(name):
    return dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def test_promotion_explicit_cases():
    """JAX's table (jnp.promote_types / result_type), independent of NumPy's: ints and floats meet at the
    float's width, int32 + uint32 is int64 (narrowed to int32 with x64 off), uint64 + int64 is float64."""
    cases_off = [("float32", "int32", "float32"), ("float16", "int64", "float16"), ("int8", "uint8", "int16"),
                 ("uint16", "int16", "int32"), ("int32", "uint32", "int32"), ("bool", "uint8", "uint8"),
                 ("complex64", "float64", "complex128"), ("float16", "uint32", "float16")]
    cases_on = [("int32", "uint32", "int64"), ("int64", "uint64", "float64"), ("float32", "int64", "float32"),
                ("float32", "float64", "float64"), ("int8", "uint64", "float64")]
    with x64(False):
        for a, b, want in cases_off:
            assert fjnp.promote_types(a, b) == np.dtype(want), (a, b)
            assert (fjnp.ones(2, a) + fjnp.ones(2, b)).dtype == np.dtype(want), (a, b)
        # dtypes given to result_type are canonicalised first, as in JAX
        assert fjnp.result_type(np.float64, np.float32) == np.float32
        assert fjnp.result_type(np.int64) == np.int32
    with x64(True):
        for a, b, want in cases_on:
            assert fjnp.promote_types(a, b) == np.dtype(want), (a, b)
    if dtypes.bfloat16 is not None:
        assert fjnp.promote_types(dtypes.bfloat16, np.float16) == np.float32
        assert fjnp.promote_types(dtypes.bfloat16, np.int32) == dtypes.bfloat16


def test_weak_scalars_follow_the_lattice():
    with x64(False):
        x = fjnp.arange(3) + 1.0  # int array with a Python float: a weak float of the default width
        assert x.dtype == np.float32 and x.weak_type
        y = fjnp.ones(3, bool) + 1
        assert y.dtype == np.int32 and y.weak_type
        assert (fjnp.ones(3, np.float16) * 1j).dtype == np.complex64
        assert (fjnp.ones(3, np.int8) + 1).dtype == np.int8


_PROMO_SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np, ml_dtypes
import jax
jax.config.update("jax_enable_x64", sys.argv[1] == "on")
import jax.numpy as jnp
names = json.loads(sys.stdin.read())
dt = lambda n: np.dtype(ml_dtypes.bfloat16) if n == "bfloat16" else np.dtype(n)
out = {}
for a in names:
    for b in names:
        out[a + "," + b] = [str(jnp.promote_types(dt(a), dt(b))), str(jnp.result_type(dt(a), dt(b)))]
    for s in ("True", "1", "1.0", "1j"):
        r = jax.dtypes.result_type(dt(a), eval(s), return_weak_type_flag=True)
        out[a + "," + s] = [str(r[0]), r[1]]
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", ["off", "on"])
def test_promotion_table_matches_jax(mode):
    """Every pair of dtypes, and every dtype with each kind of Python scalar, promotes as in JAX."""
    pytest.importorskip("jax")
    pytest.importorskip("ml_dtypes")
    res = subprocess.run([sys.executable, "-c", _PROMO_SCRIPT, mode], input=json.dumps(_NAMES),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    want = json.loads(res.stdout)
    bad = []
    with x64(mode == "on"):
        for a in _NAMES:
            for b in _NAMES:
                got = [str(fjnp.promote_types(_dt(a), _dt(b))), str(fjnp.result_type(_dt(a), _dt(b)))]
                if got != want[a + "," + b]:
                    bad.append(f"{a}, {b}: {got} (JAX {want[a + ',' + b]})")
            for s in ("True", "1", "1.0", "1j"):
                r = funcgrad.dtypes.result_type(_dt(a), eval(s), return_weak_type_flag=True)
                if [str(r[0]), r[1]] != want[a + "," + s]:
                    bad.append(f"{a}, {s}: {[str(r[0]), r[1]]} (JAX {want[a + ',' + s]})")
    assert not bad, "\n".join(bad)


# --- the program, existing Arrays, the torch face ---------------------------------------------

def test_scan_with_float64_numpy_data_runs_in_float32():
    """The issue: jnp.zeros(3) (float32) carried over NumPy float64 data runs, everything float32, as JAX."""
    xs = np.linspace(0.0, 1.0, 12).reshape(4, 3)

    def step(c, x):
        c = c + x
        return c, c.sum()

    carry, ys = flax.scan(step, fjnp.zeros(3), xs)
    assert carry.dtype == np.float32 and ys.dtype == np.float32
    np.testing.assert_allclose(np.asarray(carry), xs.sum(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.cumsum(xs, 0).sum(1), rtol=1e-6)
    with x64(True):
        carry, ys = flax.scan(step, fjnp.zeros(3), xs)
        assert carry.dtype == np.float64
        np.testing.assert_allclose(np.asarray(carry), xs.sum(0), rtol=1e-15)


def test_existing_64bit_arrays_are_not_narrowed():
    """An Array that is float64/int64 already (made by the torch face, or at an explicit request) keeps its
    dtype through JAX-face operations; so does NumPy data combined with it."""
    with x64(False):
        t = funcgrad.from_numpy(np.array([0.1, 0.2, 0.3]))
        a = fjnp.asarray(t)
        assert a.dtype == np.float64
        assert fjnp.sin(a).dtype == np.float64
        assert (a + 1.0).dtype == np.float64 and (a * fjnp.ones(3)).dtype == np.float64
        exact = a * np.array(np.pi)  # the NumPy constant keeps float64 beside a float64 Array
        np.testing.assert_array_equal(np.asarray(exact), np.array([0.1, 0.2, 0.3]) * np.pi)
        i = fjnp.asarray(funcgrad.tensor([1, 2]))
        assert i.dtype == np.int64 and (i + 1).dtype == np.int64 and fjnp.sum(i).dtype == np.int64
        assert fjnp.zeros(2, np.float64).dtype == np.float64  # an explicit request is honoured


def test_torch_face_keeps_torch_dtypes():
    with x64(False):
        assert funcgrad.from_numpy(np.ones(3)).dtype == funcgrad.float64
        assert funcgrad.tensor([1, 2]).dtype == funcgrad.int64
        assert funcgrad.arange(3).dtype == funcgrad.int64
        assert funcgrad.tensor(np.ones(2)).dtype == funcgrad.float64
        x = funcgrad.tensor([[3.0, 1.0], [2.0, 5.0]])
        assert x.argmax().dtype == funcgrad.int64 and x.argsort(dim=1).dtype == funcgrad.int64
        assert funcgrad.nonzero(x).dtype == funcgrad.int64
        assert funcgrad.tensor([1, 2], dtype=funcgrad.int8).sum().dtype == funcgrad.int64
        assert funcgrad.tensor([True, False]).cumsum(0).dtype == funcgrad.int64
        assert funcgrad.randint(0, 5, (3,)).dtype == funcgrad.int64


def test_canonicalising_an_array_costs_nothing():
    x = fjnp.ones(3)
    assert canonical_array(x) is x
    with x64(False):
        assert canonical_array(np.ones(2)).dtype == np.float32
        assert canonical_array(np.ones(2, np.uint64)).dtype == np.uint32
        assert canonical_array(np.ones(2, np.complex128)).dtype == np.complex64
        assert canonical_array(np.ones(2, np.float16)).dtype == np.float16


def test_python_int_range_follows_the_mode():
    with x64(False):
        with pytest.raises(OverflowError):
            fjnp.asarray(2 ** 40)
    with x64(True):
        assert int(fjnp.asarray(2 ** 40)) == 2 ** 40


def test_default_dtype_reporting_follows_the_mode():
    with x64(False):
        assert fjnp.__array_namespace_info__().default_dtypes() == {
            "real floating": np.float32, "complex floating": np.complex64, "integral": np.int32,
            "indexing": np.int32}
        assert "float64" not in fjnp.__array_namespace_info__().dtypes()
        assert funcgrad.dtypes.canonicalize_dtype(np.float64) == np.float32
        assert funcgrad.dtypes.canonicalize_dtype(int) == np.int32
        assert funcgrad.dtypes.canonicalize_dtype(np.uint64) == np.uint32
        assert fjnp.int_ == np.int32 and fjnp.float_ == np.float32 and fjnp.complex_ == np.complex64
        assert fjnp.uint == np.uint32
        assert dtypes.defaults.int_ == np.int32 and dtypes.defaults.float_ == np.float32
    for spelling in ("jax_enable_x64", "enable_x64"):
        with x64(False):
            funcgrad.config.update(spelling, True)
            assert funcgrad.config.read("jax_enable_x64") and funcgrad.config.x64_enabled
            assert fjnp.__array_namespace_info__().default_dtypes()["indexing"] == np.int64
            assert funcgrad.dtypes.canonicalize_dtype(np.float64) == np.float64
            assert fjnp.int_ == np.int64 and fjnp.float_ == np.float64
            assert dtypes.defaults.int_ == np.int64
            assert "float64" in fjnp.__array_namespace_info__().dtypes()
    with x64(False):
        with funcgrad.experimental.enable_x64():
            assert fjnp.arange(3).dtype == np.int64 and fjnp.zeros(2).dtype == np.float64
        assert fjnp.arange(3).dtype == np.int32 and fjnp.zeros(2).dtype == np.float32
