"""funcgrad.onnx.export: every translation rule checked by onnx's checker (full_check) and run (onnxruntime,
else onnx's reference evaluator) against funcgrad's own result and, where one exists, NumPy's value; whole
models (MLP, CNN with BatchNorm in eval mode, a Transformer encoder layer) with dynamic axes."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import funcgrad as fg  # noqa: E402
import funcgrad.nn as nn  # noqa: E402
import funcgrad.numpy as jnp  # noqa: E402
from funcgrad import lax  # noqa: E402
from funcgrad.onnx import UnsupportedError  # noqa: E402

RNG = np.random.default_rng(0)


def _run(proto, feeds: dict) -> list:
    """Run a model on onnxruntime, or on onnx's reference evaluator where onnxruntime is absent."""
    try:
        import onnxruntime as ort
    except ImportError:
        from onnx.reference import ReferenceEvaluator
        if any(n.op_type == "Loop" for n in proto.graph.node):  # (onnx 1.23's evaluator fails on scan outputs)
            pytest.skip("onnx's reference evaluator cannot run Loop with scan outputs; needs onnxruntime")
        return ReferenceEvaluator(proto).run(None, feeds)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _export_check(fn, *args, want=None, rtol=1e-6, atol=1e-6, **kw):
    """Export fn at args, check the model, run it and compare with funcgrad's result and `want`."""
    proto = fg.onnx.export(fn, tuple(jnp.asarray(a) for a in args), **kw)
    onnx.checker.check_model(proto, full_check=True)
    names = [i.name for i in proto.graph.input]
    got = _run(proto, dict(zip(names, [np.asarray(a) for a in args])))
    ours = fn(*[jnp.asarray(a) for a in args])
    ours = ours if isinstance(ours, (tuple, list)) else (ours,)
    assert len(got) == len(ours)
    for g, o in zip(got, ours):
        o = np.asarray(o)
        assert g.shape == o.shape and g.dtype == o.dtype, (g.shape, g.dtype, o.shape, o.dtype)
        np.testing.assert_allclose(g, o, rtol=rtol, atol=atol)
    if want is not None:
        np.testing.assert_allclose(got[0], want, rtol=rtol, atol=atol)
    _check_round_trip(proto, args, got, rtol, atol)
    return proto, got


def _check_round_trip(proto, args, got, rtol, atol):
    """funcgrad.onnx.load gives back a function that computes what onnxruntime computed from the model."""
    back = fg.onnx.load(proto)(*[jnp.asarray(a) for a in args])
    back = back if isinstance(back, tuple) else (back,)
    for b, g in zip(back, got):
        assert np.asarray(b).shape == g.shape and np.asarray(b).dtype == g.dtype
        np.testing.assert_allclose(np.asarray(b), g, rtol=rtol, atol=atol)


X = RNG.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(X) + 0.5).astype(np.float32)
UNIT = np.tanh(X).astype(np.float32) * 0.9

UNARY = [
    ("exp", jnp.exp, np.exp, X), ("log", jnp.log, np.log, POS), ("sin", jnp.sin, np.sin, X),
    ("cos", jnp.cos, np.cos, X), ("tan", jnp.tan, np.tan, UNIT), ("tanh", jnp.tanh, np.tanh, X),
    ("sinh", jnp.sinh, np.sinh, X), ("cosh", jnp.cosh, np.cosh, X), ("arcsin", jnp.arcsin, np.arcsin, UNIT),
    ("arccos", jnp.arccos, np.arccos, UNIT), ("arctan", jnp.arctan, np.arctan, X),
    ("arcsinh", jnp.arcsinh, np.arcsinh, X), ("arccosh", jnp.arccosh, np.arccosh, POS + 1),
    ("arctanh", jnp.arctanh, np.arctanh, UNIT), ("sqrt", jnp.sqrt, np.sqrt, POS),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), POS), ("abs", jnp.abs, np.abs, X),
    ("sign", jnp.sign, np.sign, X), ("floor", jnp.floor, np.floor, X * 3), ("ceil", jnp.ceil, np.ceil, X * 3),
    ("round_even", jnp.round, np.round, np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32)),
    ("round_away", lax.round, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
     np.array([0.5, 1.5, 2.5, -0.5, -1.7], np.float32)),
    ("log1p", jnp.log1p, np.log1p, POS), ("expm1", jnp.expm1, np.expm1, X),
    ("exp2", jnp.exp2, np.exp2, X), ("log2", jnp.log2, np.log2, POS), ("log10", jnp.log10, np.log10, POS),
    ("neg", jnp.negative, np.negative, X), ("square", jnp.square, np.square, X),
    ("cube", lambda x: x ** 3, lambda x: x ** 3, X), ("inv_square", lambda x: x ** -2, lambda x: x ** -2.0, POS),
    ("cbrt", jnp.cbrt, np.cbrt, X),
    ("sigmoid", fg.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), X),
    ("relu", fg.nn.relu, lambda x: np.maximum(x, 0), X),
    ("elu", fg.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), X),
    ("selu", fg.nn.selu, None, X),
    ("gelu_exact", lambda x: fg.nn.gelu(x, approximate=False),
     lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))), X),
    ("gelu_tanh", fg.nn.gelu, None, X),
    ("erf", fg.scipy.special.erf, np.vectorize(math.erf), X),
    ("erfc", fg.scipy.special.erfc, np.vectorize(math.erfc), X),
    ("softplus", fg.nn.softplus, lambda x: np.log1p(np.exp(x)), X),
    ("isfinite", jnp.isfinite, np.isfinite, np.array([1.0, np.inf, -np.inf, np.nan], np.float32)),
    ("stop_gradient", lax.stop_gradient, lambda x: x, X),
    ("clip", lambda x: jnp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), X),
    ("to_int32", lambda x: (x * 3).astype(jnp.int32), lambda x: (x * 3).astype(np.int32), X),
    ("to_bool", lambda x: x.astype(bool), lambda x: x.astype(bool), np.array([0.0, 1.5, -2.0], np.float32)),
    ("logical_not", jnp.logical_not, np.logical_not, X > 0),
    ("invert_int", jnp.invert, np.invert, np.arange(-3, 3, dtype=np.int32)),
]


@pytest.mark.parametrize("name,fn,ref,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_rules(name, fn, ref, x):
    _export_check(fn, x, want=None if ref is None else ref(x), rtol=2e-6, atol=2e-6)


Y = RNG.standard_normal((3, 4)).astype(np.float32)
BINARY = [
    ("add", jnp.add, np.add), ("sub", jnp.subtract, np.subtract), ("mul", jnp.multiply, np.multiply),
    ("div", jnp.divide, np.divide), ("maximum", jnp.maximum, np.maximum), ("minimum", jnp.minimum, np.minimum),
    ("fmod", jnp.fmod, np.fmod), ("pow", lambda a, b: jnp.abs(a) ** b, lambda a, b: np.abs(a) ** b),
    ("eq", jnp.equal, np.equal), ("ne", jnp.not_equal, np.not_equal), ("lt", jnp.less, np.less),
    ("le", jnp.less_equal, np.less_equal), ("gt", jnp.greater, np.greater),
    ("ge", jnp.greater_equal, np.greater_equal), ("logaddexp", jnp.logaddexp, np.logaddexp),
    ("where", lambda a, b: jnp.where(a > b, a, b * 2), lambda a, b: np.where(a > b, a, b * 2)),
    ("and", lambda a, b: (a > 0) & (b > 0), lambda a, b: (a > 0) & (b > 0)),
    ("or", lambda a, b: (a > 0) | (b > 0), lambda a, b: (a > 0) | (b > 0)),
    ("xor", lambda a, b: (a > 0) ^ (b > 0), lambda a, b: (a > 0) ^ (b > 0)),
    ("scalar_broadcast", lambda a, b: a * 2.0 + b[0], lambda a, b: a * 2.0 + b[0]),
]


@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary_rules(name, fn, ref):
    x = X.copy()
    x[0, 0] = Y[0, 0]  # a tie for the comparisons
    _export_check(fn, x, Y, want=ref(x, Y), rtol=2e-6, atol=2e-6)


def test_integer_arithmetic():
    a = np.array([7, -7, 5, -5], np.int32)
    b = np.array([2, 2, -3, -3], np.int32)
    _export_check(lambda x, y: lax.div(x, y), a, b, want=np.array([3, -3, -1, 1], np.int32))
    _export_check(lambda x, y: lax.rem(x, y), a, b, want=np.fmod(a, b))
    _export_check(lambda x, y: x & y, a, b, want=a & b)


R = RNG.standard_normal((2, 3, 4)).astype(np.float32)
REDUCTIONS = [
    ("sum_all", jnp.sum, np.sum), ("sum_axis", lambda x: jnp.sum(x, axis=1), lambda x: np.sum(x, axis=1)),
    ("max", lambda x: jnp.max(x, axis=(0, 2)), lambda x: np.max(x, axis=(0, 2))),
    ("min", lambda x: jnp.min(x, axis=-1), lambda x: np.min(x, axis=-1)),
    ("prod", lambda x: jnp.prod(x, axis=2), lambda x: np.prod(x, axis=2)),
    ("mean", lambda x: jnp.mean(x, axis=0), lambda x: np.mean(x, axis=0)),
    ("var", lambda x: jnp.var(x, axis=2), lambda x: np.var(x, axis=2)),
    ("all", lambda x: jnp.all(x > -1, axis=1), lambda x: np.all(x > -1, axis=1)),
    ("any", lambda x: jnp.any(x > 1, axis=2), lambda x: np.any(x > 1, axis=2)),
    ("argmax", lambda x: jnp.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
    ("argmin", lambda x: jnp.argmin(x, axis=2), lambda x: np.argmin(x, axis=2)),
    ("cumsum", lambda x: jnp.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1)),
    ("cumsum_rev", lambda x: lax.cumsum(x, axis=2, reverse=True),
     lambda x: np.flip(np.cumsum(np.flip(x, 2), axis=2), 2)),
    ("softmax", lambda x: fg.nn.softmax(x, axis=-1), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("log_softmax", lambda x: fg.nn.log_softmax(x, axis=1),
     lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    ("logsumexp", lambda x: fg.scipy.special.logsumexp(x, axis=2), lambda x: np.log(np.exp(x).sum(2))),
]


@pytest.mark.parametrize("name,fn,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reduction_rules(name, fn, ref):
    _export_check(fn, R, want=ref(R), rtol=1e-5, atol=1e-6)


DOTS = [
    ("matmul", lambda m: m.matmul, (3, 4), (4, 5)),
    ("matvec", lambda m: m.matmul, (3, 4), (4,)),
    ("vecmat", lambda m: m.matmul, (4,), (4, 5)),
    ("batched", lambda m: m.matmul, (2, 3, 4), (2, 4, 5)),
    ("nd_by_matrix", lambda m: m.matmul, (2, 3, 4), (4, 5)),
    ("linear", lambda m: (lambda a, b: a @ b.T), (3, 4), (5, 4)),
    ("batched_t", lambda m: (lambda a, b: m.einsum("bij,bkj->bik", a, b)), (2, 3, 4), (2, 5, 4)),
    ("einsum_general", lambda m: (lambda a, b: m.einsum("ijk,kjl->il", a, b)), (2, 3, 4), (4, 3, 5)),
    ("outer", lambda m: m.outer, (3,), (4,)),
    ("tensordot", lambda m: (lambda a, b: m.tensordot(a, b, axes=([0, 2], [1, 0]))), (2, 3, 4), (4, 2, 5)),
]


@pytest.mark.parametrize("name,make,sa,sb", DOTS, ids=[d[0] for d in DOTS])
def test_dot_general_rule(name, make, sa, sb):
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    _export_check(make(jnp), a, b, want=make(np)(a.astype(np.float64), b.astype(np.float64)),
                  rtol=1e-5, atol=1e-5)


def _np_conv(x, w, stride, pad, dil, groups):
    """Direct NCHW convolution (cross-correlation), as torch's conv2d."""
    x = np.pad(x, ((0, 0), (0, 0), pad[0], pad[1]))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                          j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, g * og:(g + 1) * og, i, j] = np.einsum("nchw,ochw->no", patch, w[g * og:(g + 1) * og])
    return out


@pytest.mark.parametrize("stride,pad,dil,groups", [((1, 1), ((0, 0), (0, 0)), (1, 1), 1),
                                                    ((2, 1), ((1, 2), (0, 1)), (1, 2), 1),
                                                    ((1, 1), ((1, 1), (1, 1)), (2, 1), 2),
                                                    ((1, 2), ((2, 2), (1, 1)), (1, 1), 4)])
def test_conv_rule(stride, pad, dil, groups):
    x = RNG.standard_normal((2, 4, 7, 8)).astype(np.float32)
    w = RNG.standard_normal((8, 4 // groups, 3, 2)).astype(np.float32)
    fn = lambda a, b: lax.conv_general_dilated(a, b, stride, pad, rhs_dilation=dil,  # noqa: E731
                                               feature_group_count=groups)
    _export_check(fn, x, w, want=_np_conv(x, w, stride, pad, dil, groups), rtol=1e-4, atol=1e-4)


def test_conv_1d_3d_and_nhwc():
    x1 = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    w1 = RNG.standard_normal((4, 3, 3)).astype(np.float32)
    _export_check(lambda a, b: lax.conv_general_dilated(a, b, (2,), ((1, 1),)), x1, w1, rtol=1e-5, atol=1e-5)
    x3 = RNG.standard_normal((1, 2, 4, 5, 6)).astype(np.float32)
    w3 = RNG.standard_normal((3, 2, 2, 2, 3)).astype(np.float32)
    _export_check(lambda a, b: lax.conv_general_dilated(a, b, (1, 1, 1), "SAME"), x3, w3, rtol=1e-5, atol=1e-5)
    xh = np.transpose(RNG.standard_normal((2, 3, 6, 6)).astype(np.float32), (0, 2, 3, 1))
    wh = RNG.standard_normal((3, 3, 3, 5)).astype(np.float32)  # HWIO
    fn = lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID",  # noqa: E731
                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
    want = np.transpose(_np_conv(np.transpose(xh, (0, 3, 1, 2)), np.transpose(wh, (3, 2, 0, 1)), (1, 1),
                                 ((0, 0), (0, 0)), (1, 1), 1), (0, 2, 3, 1))
    _export_check(fn, xh, wh, want=want, rtol=1e-4, atol=1e-4)


def test_pooling_rules():
    x = RNG.standard_normal((2, 3, 6, 7)).astype(np.float32)
    want = np.full((2, 3, 3, 4), -np.inf, np.float32)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    for i in range(3):
        for j in range(4):
            want[:, :, i, j] = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
    fmax = lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),  # noqa: E731
                                       ((0, 0), (0, 0), (1, 1), (1, 1)))
    _export_check(fmax, x, want=want)
    fsum = lambda a: lax.reduce_window(a, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")  # noqa: E731
    want = x[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).sum(axis=(3, 5))
    _export_check(fsum, x, want=want, rtol=1e-5, atol=1e-5)
    fmin = lambda a: lax.reduce_window(a, jnp.inf, lax.min, (2, 2), (1, 1), "VALID")  # noqa: E731
    a2 = x[0, 0]
    want = np.minimum(np.minimum(a2[:-1, :-1], a2[1:, :-1]), np.minimum(a2[:-1, 1:], a2[1:, 1:]))
    _export_check(fmin, a2, want=want)


SHAPES = [
    ("reshape", lambda x: x.reshape(4, 6), lambda x: x.reshape(4, 6)),
    ("transpose", lambda x: jnp.transpose(x, (2, 0, 1)), lambda x: np.transpose(x, (2, 0, 1))),
    ("broadcast", lambda x: jnp.broadcast_to(x[:, None, :, 0], (2, 5, 3)),
     lambda x: np.broadcast_to(x[:, None, :, 0], (2, 5, 3))),
    ("concat", lambda x: jnp.concatenate([x, x * 2], axis=1), lambda x: np.concatenate([x, x * 2], axis=1)),
    ("slice", lambda x: x[:, 1:, ::2], lambda x: x[:, 1:, ::2]),
    ("slice_neg_stride", lambda x: x[:, ::-1, 1:3], lambda x: x[:, ::-1, 1:3]),
    ("pad", lambda x: jnp.pad(x, ((0, 0), (1, 2), (0, 1)), constant_values=3.0),
     lambda x: np.pad(x, ((0, 0), (1, 2), (0, 1)), constant_values=3.0)),
    ("flip", lambda x: jnp.flip(x, (0, 2)), lambda x: np.flip(x, (0, 2))),
    ("squeeze_expand", lambda x: jnp.squeeze(x[:, :1], 1)[:, None], lambda x: x[:, :1]),
    ("iota", lambda x: x + jnp.arange(4, dtype=jnp.float32), lambda x: x + np.arange(4, dtype=np.float32)),
    ("take_rows", lambda x: x[jnp.array([1, 0, 1])], lambda x: x[[1, 0, 1]]),
    ("take_axis", lambda x: jnp.take(x, jnp.array([3, 0]), axis=2), lambda x: np.take(x, [3, 0], axis=2)),
    ("fancy_2d", lambda x: x[jnp.array([0, 1]), :, jnp.array([2, 3])], lambda x: x[[0, 1], :, [2, 3]]),
    ("int_index", lambda x: x[1, 2], lambda x: x[1, 2]),
    ("zeros_like", lambda x: jnp.zeros_like(x) + 1, lambda x: np.ones_like(x)),
    ("tril", lambda x: jnp.tril(x[0]), lambda x: np.tril(x[0])),
]


@pytest.mark.parametrize("name,fn,ref", SHAPES, ids=[s[0] for s in SHAPES])
def test_shape_rules(name, fn, ref):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    _export_check(fn, x, want=ref(x))


def test_gather_clamps_like_funcgrad():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 2, 5, -7], np.int32)
    _export_check(lambda a, i: jnp.take(a, i, axis=1, mode="clip"), x, idx, want=x[:, np.clip(idx, 0, 3)])


M = np.round(RNG.standard_normal((3, 5)) * 2).astype(np.float32)  # small integers: ties for the sorts
SORTS_SCANS = [
    ("sort_last", lambda x: jnp.sort(x, axis=1), lambda x: np.sort(x, axis=1, kind="stable")),
    ("sort_first", lambda x: jnp.sort(x, axis=0), lambda x: np.sort(x, axis=0, kind="stable")),
    ("argsort_ties_stable", lambda x: jnp.argsort(x, axis=1), lambda x: np.argsort(x, axis=1, kind="stable")),
    ("top_k_values", lambda x: lax.top_k(x, 3)[0], lambda x: -np.sort(-x, axis=1, kind="stable")[:, :3]),
    ("top_k_indices", lambda x: lax.top_k(x, 3)[1],
     lambda x: np.argsort(-x, axis=1, kind="stable")[:, :3].astype(np.int32)),
    ("cumprod", lambda x: jnp.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1)),
    ("cumprod_reverse", lambda x: lax.cumprod(x, 0, reverse=True), lambda x: np.cumprod(x[::-1], 0)[::-1]),
    ("cummax", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1)),
    ("cummin_reverse", lambda x: lax.cummin(x, 1, reverse=True),
     lambda x: np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), lambda x: np.logaddexp.accumulate(x, 1)),
    ("cummax_int", lambda x: lax.cummax(x.astype(jnp.int32), 1),
     lambda x: np.maximum.accumulate(x.astype(np.int32), 1)),
    ("atan2", lambda x: jnp.arctan2(x, x[::-1]), lambda x: np.arctan2(x, x[::-1])),
]


@pytest.mark.parametrize("name,fn,ref", SORTS_SCANS, ids=[s[0] for s in SORTS_SCANS])
def test_sort_topk_cumulative_and_atan2_rules(name, fn, ref):
    _export_check(fn, M, want=ref(M), rtol=1e-6, atol=1e-6)


NAN_ROWS = np.array([[1.0, np.nan, 3.0, -2.0], [2.0, 0.0, -1.0, 5.0], [np.nan, 4.0, np.nan, 0.0]], np.float32)
NAN_REDUCTIONS = [
    ("max", lambda x: jnp.max(x, axis=1), lambda x: np.max(x, axis=1)),
    ("min", lambda x: jnp.min(x, axis=0), lambda x: np.min(x, axis=0)),
    ("max_all", jnp.max, np.max),
    ("argmax", lambda x: jnp.argmax(x, axis=1), lambda x: np.argmax(x, axis=1)),
    ("argmin", lambda x: jnp.argmin(x, axis=0), lambda x: np.argmin(x, axis=0)),
    ("cummax", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1)),
    ("cummin_reverse", lambda x: lax.cummin(x, 1, reverse=True),
     lambda x: np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]),
]


@pytest.mark.parametrize("name,fn,ref", NAN_REDUCTIONS, ids=[s[0] for s in NAN_REDUCTIONS])
def test_max_min_and_their_indices_propagate_nan_as_numpy(name, fn, ref):
    """onnxruntime's ReduceMax/ReduceMin/ArgMax skip NaN; the exported graphs propagate it (NumPy's and JAX's
    rule): a NaN is the max and min of its row, and argmax/argmin give the first NaN's index."""
    _export_check(fn, NAN_ROWS, want=ref(NAN_ROWS))


SIGNAL = RNG.standard_normal((3, 8)).astype(np.float32)
COMPLEX = [
    ("abs_rfft", lambda x: jnp.abs(jnp.fft.rfft(x)), lambda x: np.abs(np.fft.rfft(x))),
    ("irfft_of_scaled_rfft", lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * (2 - 1j), n=8),
     lambda x: np.fft.irfft(np.fft.rfft(x) * (2 - 1j), n=8)),
    ("irfft_odd_length", lambda x: jnp.fft.irfft(jnp.fft.rfft(x[:, :7]), n=7), lambda x: x[:, :7]),
    ("fft2_real", lambda x: jnp.fft.fft2(x).real, lambda x: np.fft.fft2(x).real),
    ("ifft_imag", lambda x: jnp.fft.ifft(x.astype(jnp.complex64) * 1j).imag, lambda x: np.fft.ifft(x * 1j).imag),
    ("power_spectrum", lambda x: (jnp.fft.rfft(x) * jnp.conj(jnp.fft.rfft(x))).real,
     lambda x: np.abs(np.fft.rfft(x)) ** 2),
    ("rfft2_irfft2", lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x) / (1 + 1j), s=(3, 8)),
     lambda x: np.fft.irfft2(np.fft.rfft2(x) / (1 + 1j), s=(3, 8))),
    ("exp_and_division", lambda x: (jnp.exp(1j * x) / (2 + 1j)).real, lambda x: (np.exp(1j * x) / (2 + 1j)).real),
    ("framed_spectrum", lambda x: jnp.abs(jnp.fft.rfft(x.reshape(3, 2, 4), axis=-1)).sum(1),
     lambda x: np.abs(np.fft.rfft(x.reshape(3, 2, 4), axis=-1)).sum(1)),
    ("lax_complex_shapes", lambda x: jnp.abs(lax.complex(x, x[::-1]).T.reshape(-1)[:5]),
     lambda x: np.abs((x + 1j * x[::-1]).T.reshape(-1)[:5])),
]


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("name,fn,ref", COMPLEX, ids=[s[0] for s in COMPLEX])
def test_complex_values_travel_as_real_pairs(name, fn, ref, opset):
    """FFTs and complex arithmetic export through ONNX's DFT on (real, imaginary) pairs; real in, real out."""
    _export_check(fn, SIGNAL, want=ref(SIGNAL).astype(np.float32), rtol=1e-5, atol=2e-5, opset_version=opset)


def test_complex_inputs_outputs_and_unsupported_ops_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="complex"):
        fg.onnx.export(jnp.fft.rfft, (SIGNAL,))  # a complex output
    with pytest.raises(UnsupportedError, match="complex values"):
        fg.onnx.export(lambda x: jnp.abs(jnp.sqrt(jnp.fft.rfft(x))), (SIGNAL,))
    with pytest.raises(UnsupportedError, match="opset_version 17"):
        fg.onnx.export(lambda x: jnp.abs(jnp.fft.rfft(x)), (SIGNAL,), opset_version=16)


def test_atan2_on_the_axes_and_at_the_origin():
    y = np.array([0, 1, -1, 0, 1, -1, 0, 2], np.float32)
    x = np.array([0, 0, 0, 1, -1, -1, -1, 3], np.float32)
    _export_check(jnp.arctan2, y, x, want=np.arctan2(y, x))


def test_atan2_at_signed_zeros_and_infinities():
    # C's atan2 on every special point: atan2(+-0, -0) = +-pi, atan2(-0, x < 0) = -pi, atan2(y, -inf) = +-pi,
    # two infinities +-pi/4 or +-3pi/4 (the rule's atan(y / x) gave 0, pi, NaN there)
    v = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e30, 3.0], np.float32)
    y, x = (a.ravel() for a in np.meshgrid(v, v))
    proto = fg.onnx.export(jnp.arctan2, (jnp.asarray(y), jnp.asarray(x)))
    got = _run(proto, {proto.graph.input[0].name: y, proto.graph.input[1].name: x})[0]
    want = np.arctan2(y, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    nonzero = want != 0      # (onnxruntime's Where drops the sign of a zero it selects: atan2(-0, 1) comes out 0)
    assert np.array_equal(np.signbit(got[nonzero]), np.signbit(want[nonzero]))
    assert got[(y == 0) & (x == -0.0) & np.signbit(x) & ~np.signbit(y)][0] == np.float32(np.pi)
    back = fg.onnx.load(proto)(jnp.asarray(y), jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(back), want, rtol=1e-6, atol=0)


def test_loaded_logsumexp_of_only_minus_infinity_is_minus_infinity():
    x = np.array([[-np.inf, 1.0], [-np.inf, 2.0]], np.float32)
    proto, got = _export_check(lambda a: lax.cumlogsumexp(a, 0), x,
                               want=np.logaddexp.accumulate(x, 0))
    assert got[0][0, 0] == -np.inf


@pytest.mark.parametrize("mode", ["set", "add", "multiply", "max", "min"])
def test_scatter_drops_out_of_range_rows_as_funcgrad(mode):
    idx = np.array([0, 2, 2, 7, -9], np.int32)  # a duplicate and two rows out of range (dropped)
    upd = RNG.standard_normal((5, 5)).astype(np.float32)
    want = M.copy()
    keep = (idx >= 0) & (idx < 3)
    if mode == "set":
        want[[0, 2]] = upd[[0, 2]]  # the last write to row 2 wins
    else:
        {"add": np.add, "multiply": np.multiply, "max": np.maximum, "min": np.minimum}[mode].at(
            want, idx[keep], upd[keep])
    _export_check(lambda a, i, u: getattr(a.at[i], mode)(u, mode="drop"), M, idx, upd, want=want)


def test_scatter_along_a_middle_axis():
    x = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    idx = np.array([3, 0, 3], np.int64)
    want = x.copy()
    np.add.at(want, (slice(None), idx), 1.0)
    _export_check(lambda a, i: a.at[:, i].add(1.0), x, idx, want=want)


def test_scatter_with_a_dynamic_trailing_axis():
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    idx = np.array([3, 1], np.int64)
    proto, _ = _export_check(lambda a, i: a.at[i].multiply(2.0), x, idx, input_names=["a", "i"],
                             dynamic_axes={"a": {1: "n"}})
    x2 = RNG.standard_normal((4, 6)).astype(np.float32)
    want = x2.copy()
    want[[3, 1]] *= 2
    np.testing.assert_allclose(_run(proto, {"a": x2, "i": idx})[0], want, rtol=1e-6)


def test_dynamic_slice_and_update_clamp_their_starts():  # as jax.lax's
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    for i, j in [(1, 2), (3, 4), (-2, 0), (-9, 1)]:
        s = (np.int32(i), np.int32(j))
        ci, cj = min(max(i + 4 * (i < 0), 0), 2), min(max(j, 0), 3)  # a negative start counts from the end
        _export_check(lambda a, p, q: lax.dynamic_slice(a, (p, q), (2, 2)), x, *s, want=x[ci:ci + 2, cj:cj + 2])
        want = x.copy()
        want[ci:ci + 2, cj:cj + 2] = -1
        _export_check(lambda a, p, q: lax.dynamic_update_slice(a, -jnp.ones((2, 2), jnp.float32), (p, q)),
                      x, *s, want=want)


def test_cumulative_and_sort_follow_a_dynamic_axis():
    fn = lambda a: (jnp.cumprod(a, axis=1), jnp.sort(a, axis=1))  # noqa: E731
    proto, _ = _export_check(fn, M, input_names=["a"], dynamic_axes={"a": {1: "n"}})
    x2 = np.round(RNG.standard_normal((3, 8)) * 2).astype(np.float32)
    got = _run(proto, {"a": x2})
    np.testing.assert_allclose(got[0], np.cumprod(x2, axis=1), rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.sort(x2, axis=1))


@pytest.mark.parametrize("cls,cin,k,kw,shape", [
    ("ConvTranspose1d", 2, 4, dict(stride=3, padding=4), (2, 2, 7)),
    ("ConvTranspose2d", 2, 3, dict(stride=2, padding=1, output_padding=1), (2, 2, 5, 5)),
    ("ConvTranspose2d", 4, (3, 2), dict(stride=(2, 1), groups=2, dilation=(1, 2)), (1, 4, 4, 6)),
    ("ConvTranspose3d", 2, 2, dict(stride=2), (1, 2, 3, 3, 2)),
])
def test_transposed_convolutions(cls, cin, k, kw, shape):
    fg.manual_seed(0)
    m = getattr(nn, cls)(cin, 4, k, **kw)
    x = RNG.standard_normal(shape).astype(np.float32)
    x2 = RNG.standard_normal((3,) + shape[1:]).astype(np.float32)
    _model_check(m, x, x2, dynamic_axes={"x": {0: "batch"}})


def test_unsupported_primitive_error_names_primitive_line_and_opset():
    def f(x):
        return jnp.linalg.cholesky(x @ x.T + jnp.eye(3)) * 2
    with pytest.raises(UnsupportedError, match=r"opset 17") as e:
        fg.onnx.export(f, (jnp.ones((3, 3)),), opset_version=17)
    assert "cholesky" in str(e.value) and "no ONNX translation rule" in str(e.value)
    line = f.__code__.co_firstlineno + 1
    assert f"test_onnx_export.py:{line} (in f)" in str(e.value)
    with pytest.raises(ValueError, match="opset_version 9"):
        fg.onnx.export(jnp.sin, (jnp.ones(3),), opset_version=9)


# --- whole models -------------------------------------------------------------------------------

def _model_check(m, x, *more, dynamic_axes=None, rtol=1e-5, atol=1e-5):
    fg.manual_seed(0)
    proto = fg.onnx.export(m, (fg.tensor(x),), input_names=["x"], output_names=["y"], dynamic_axes=dynamic_axes)
    onnx.checker.check_model(proto, full_check=True)
    m.eval()
    for xx in (x,) + more:
        got = _run(proto, {"x": xx})[0]
        want = m(fg.tensor(xx)).detach().numpy()
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        _check_round_trip(proto, (xx,), [got], rtol, atol)
    return proto


def test_mlp_dynamic_batch_and_initializer_names(tmp_path):
    fg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3), nn.LogSoftmax(-1))
    x3 = RNG.standard_normal((3, 4)).astype(np.float32)
    x11 = RNG.standard_normal((11, 4)).astype(np.float32)
    proto = _model_check(m, x3, x11, dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert {i.name for i in proto.graph.initializer} >= set(m.state_dict())
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    init = {i.name: onnx.numpy_helper.to_array(i) for i in proto.graph.initializer}
    np.testing.assert_array_equal(init["0.weight"], m[0].weight.detach().numpy())
    # to a path and to a binary file: the same model
    path = tmp_path / "mlp.onnx"
    fg.onnx.export(m, (fg.tensor(x3),), str(path))
    buf = io.BytesIO()
    fg.onnx.export(m, (fg.tensor(x3),), buf)
    assert onnx.load(str(path)).graph == onnx.load_from_string(buf.getvalue()).graph
    # without the parameters: they become inputs named by their keys
    bare = fg.onnx.export(m, (fg.tensor(x3),), export_params=False, input_names=["x"])
    assert not {i.name for i in bare.graph.initializer} & set(m.state_dict())
    assert {i.name for i in bare.graph.input} == {"x"} | set(m.state_dict())
    feeds = {"x": x3, **{k: v.detach().numpy() for k, v in m.state_dict().items()}}
    np.testing.assert_allclose(_run(bare, feeds)[0], m(fg.tensor(x3)).detach().numpy(), rtol=1e-5, atol=1e-5)


SIZE_DEPENDENT = [
    ("centre_by_batch_mean", lambda x: (x - x.mean(0)).sum(1)),      # mean's 1/n
    ("unbiased_std_of_all", lambda x: x.std()),                        # n * 4 - 1
    ("mean_times_a_literal", lambda x: x.mean(0) * 2),                 # n == 2 meets the literal 2
    ("batch_standardise", lambda x: (x - x.mean(0, keepdim=True)) / (x.var(0, keepdim=True) + 1e-5).sqrt()),
    ("add_a_size1_constant", lambda x: x + fg.ones(1, 4)),            # broadcasts only when the batch is > 1
]


@pytest.mark.parametrize("batch", [1, 2, 3])
@pytest.mark.parametrize("name,fn", SIZE_DEPENDENT, ids=[s[0] for s in SIZE_DEPENDENT])
def test_dynamic_batch_at_any_example_size_and_size_derived_constants(name, fn, batch):
    """A dynamic axis given at size 1 (or 2, where a mean's count equals a literal) exports a graph valid at
    every size, and constants computed from a dynamic size (a mean's 1/n, an unbiased variance's n - 1)
    follow the runtime size instead of being baked in at the example's."""
    x = RNG.standard_normal((batch, 4)).astype(np.float32)
    proto = fg.onnx.export(fn, (fg.tensor(x),), input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    for n in (1, 2, 5):
        xn = RNG.standard_normal((n, 4)).astype(np.float32)
        want = fn(fg.tensor(xn)).numpy()
        got = _run(proto, {"x": xn})[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_static_batch_without_dynamic_axes():
    m = nn.Linear(4, 2)
    proto = _model_check(m, X)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3


def test_cnn_batchnorm_eval_dynamic_batch():
    fg.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(6, 4, 3, stride=2, groups=2, dilation=1), nn.AvgPool2d(1), nn.Flatten(),
                      nn.Dropout(0.5), nn.Linear(4, 2))
    bn = m[1]
    bn.running_mean.data = fg.tensor(RNG.standard_normal(6).astype(np.float32))
    bn.running_var.data = fg.tensor((RNG.random(6) + 0.5).astype(np.float32))
    m.train()  # export puts it in eval mode, and back
    x2 = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    x5 = RNG.standard_normal((5, 3, 8, 8)).astype(np.float32)
    _model_check(m, x2, x5, dynamic_axes={"x": [0]})


def test_transformer_encoder_layer_dynamic_batch_and_sequence():
    fg.manual_seed(0)
    m = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation="gelu")
    xa = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    xb = RNG.standard_normal((4, 7, 8)).astype(np.float32)
    _model_check(m, xa, xb, dynamic_axes={"x": {0: "batch", 1: "seq"}}, rtol=1e-4, atol=1e-5)


def test_function_with_two_outputs_and_names():
    def f(a, b):
        return a @ b, jnp.maximum(a, 0).sum()
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((4, 2)).astype(np.float32)
    proto, got = _export_check(f, a, b, input_names=["a", "b"], output_names=["prod", "total"], rtol=1e-5)
    assert [o.name for o in proto.graph.output] == ["prod", "total"]
    np.testing.assert_allclose(got[1], np.maximum(a, 0).sum(), rtol=1e-5)


# --- control flow: If and Loop, not unrolled ------------------------------------------------------

def _ops(proto) -> set:
    return {n.op_type for n in proto.graph.node}


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_exports_as_if(sign):
    x = (np.abs(X) * sign).astype(np.float32)
    f = lambda a: lax.cond(a.sum() > 0, lambda y: y * 2, lambda y: y - 1, a)  # noqa: E731
    proto, _ = _export_check(f, x, want=x * 2 if sign > 0 else x - 1)
    assert "If" in _ops(proto)


@pytest.mark.parametrize("i", [-1, 0, 1, 2, 5])
def test_switch_exports_as_if_chain_clamping_the_index(i):
    f = lambda k, a: lax.switch(k, [lambda y: y * 2, lambda y: y - 1, jnp.sin], a)  # noqa: E731
    want = [X * 2, X - 1, np.sin(X)][min(max(i, 0), 2)]
    _export_check(f, np.array(i, np.int32), X, want=want)


def test_scan_exports_as_loop():
    xs = RNG.standard_normal((5, 3)).astype(np.float32)

    def f(a):
        def body(c, xi):
            c = jnp.tanh(c * 0.5 + xi)
            return c, c * 2
        return lax.scan(body, jnp.zeros(3), a)
    c, ys = np.zeros(3, np.float32), []
    for row in xs:
        c = np.tanh(c * 0.5 + row)
        ys.append(c * 2)
    proto, got = _export_check(f, xs, want=c)
    np.testing.assert_allclose(got[1], np.stack(ys), rtol=1e-6)
    assert "Loop" in _ops(proto) and "Tanh" not in _ops(proto)  # the body lives in the Loop


def test_reverse_scan_fori_and_while_loops():
    xs = RNG.standard_normal((4, 3)).astype(np.float32)
    f = lambda a: lax.scan(lambda c, xi: (c + xi, c * xi), jnp.ones(3), a, reverse=True)  # noqa: E731
    c, ys = np.ones(3, np.float32), [None] * 4
    for t in range(3, -1, -1):
        c, ys[t] = c + xs[t], c * xs[t]
    proto, got = _export_check(f, xs, want=c)
    np.testing.assert_allclose(got[1], np.stack(ys), rtol=1e-6)
    want = xs.copy()
    for i in range(5):
        want = want * 1.5 + i
    _export_check(lambda a: lax.fori_loop(0, 5, lambda i, v: v * 1.5 + i, a), xs, want=want, rtol=1e-5)
    g = lambda a: lax.while_loop(lambda c: c[0].sum() < 100, lambda c: (c[0] * 2 + 1, c[1] + 1), (a, 0))  # noqa
    proto, got = _export_check(g, np.abs(xs))
    assert "Loop" in _ops(proto)


def test_lstm_exports_as_a_loop_with_dynamic_batch_and_time():
    fg.manual_seed(0)
    m = nn.LSTM(4, 5, batch_first=True)
    xa = RNG.standard_normal((2, 6, 4)).astype(np.float32)
    proto = fg.onnx.export(m, (fg.tensor(xa),), input_names=["x"], dynamic_axes={"x": {0: "b", 1: "t"}})
    onnx.checker.check_model(proto, full_check=True)
    assert "Loop" in _ops(proto)
    for xv in (xa, RNG.standard_normal((3, 9, 4)).astype(np.float32)):
        out, (h, c) = m(fg.tensor(xv))
        for g, w in zip(_run(proto, {"x": xv}), (out, h, c)):
            np.testing.assert_allclose(g, w.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_resnet18():
    from funcgrad.vision import models
    fg.manual_seed(0)
    m = models.resnet18(num_classes=10)
    x = RNG.standard_normal((2, 3, 32, 32)).astype(np.float32)
    x2 = RNG.standard_normal((5, 3, 32, 32)).astype(np.float32)
    _model_check(m, x, x2, dynamic_axes={"x": {0: "batch"}}, rtol=1e-4, atol=1e-4)


# --- funcgrad.onnx.load ---------------------------------------------------------------------------

def test_load_a_model_exported_by_torch():
    torch = pytest.importorskip("torch")
    import warnings
    m = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                            torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(64, 3),
                            torch.nn.LogSoftmax(-1)).eval()
    x = torch.randn(2, 1, 8, 8)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note that this is its TorchScript-based exporter
        torch.onnx.export(m, (x,), buf, dynamo=False, input_names=["x"])
    f = fg.onnx.load(io.BytesIO(buf.getvalue()))
    assert f.input_names == ["x"]
    np.testing.assert_allclose(np.asarray(f(x.numpy())), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_loaded_model_is_a_funcgrad_function(tmp_path):
    """Loaded models take part in transformations: jit gives the same values, grad flows to the input."""
    fg.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    path = tmp_path / "mlp.onnx"
    fg.onnx.export(m, (fg.randn(3, 4),), str(path), input_names=["x"])
    f = fg.onnx.load(str(path))
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(jnp.asarray(x))), np.asarray(f(jnp.asarray(x))), rtol=1e-6)
    g = fg.grad(lambda a: jnp.sum(f(a)))(jnp.asarray(x))
    xt = fg.tensor(x, requires_grad=True)
    m(xt).sum().backward()
    np.testing.assert_allclose(np.asarray(g), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(f(fg.tensor(x)), fg.Tensor)  # Tensors in, Tensors out


def test_load_names_an_unsupported_operator():
    helper = onnx.helper
    node = helper.make_node("Hardmax", ["x"], ["y"], name="hm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    f = fg.onnx.load(helper.make_model(graph))
    with pytest.raises(NotImplementedError, match="'Hardmax'.*'hm'"):
        f(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        f(np.ones(2, np.float32), np.ones(2, np.float32))


def test_random_draws_while_tracing_are_refused_not_baked_in():
    """Dropout in training mode draws its mask from torch's generator while the model is traced: exporting it
    would freeze one mask into the graph, so export refuses; eval mode (the default) exports, and the generator
    works again afterwards."""
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = fg.randn(2, 4)
    with pytest.raises(RuntimeError, match="draws random numbers"):
        fg.onnx.export(m, (x,), training=fg.onnx.TrainingMode.TRAINING)
    with pytest.raises(RuntimeError, match="draws random numbers"):
        fg.onnx.export(lambda t: t + fg.rand(2, 4), (x,))
    proto = fg.onnx.export(m, (x,))
    assert "Dropout" not in [n.op_type for n in proto.graph.node]
    assert fg.rand(3).shape == (3,)
