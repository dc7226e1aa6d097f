"""torch.ops on funcgrad.ops (funcgrad/_torch/ops_namespace.py): the module keeps JAX's segment reductions and
serves torch's namespaces: custom ops (library.custom_op, cpp_extension), aten's operators with their overloads
and multi-output forms, and the quantized kernels; checked against exact values and torch 2.13."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._torch import _aten as aten_table
from funcgrad._torch import ops_namespace

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _torch():
    torch = pytest.importorskip("torch")
    warnings.filterwarnings("ignore", category=UserWarning)
    return torch


def test_one_module_serves_both_faces():
    import funcgrad.ops as ops_module
    assert fg.ops is ops_module
    seg = fg.ops.segment_sum(jnp.asarray([1.0, 2.0, 3.0, 4.0]), jnp.asarray([0, 0, 1, 1]), num_segments=2)
    np.testing.assert_array_equal(np.asarray(seg), [3.0, 7.0])
    assert fg.ops.aten.relu.default(fg.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
    assert repr(fg.ops.aten) == "<module 'torch.ops.aten' from 'torch.ops'>"


def test_custom_op_resolves_with_its_default_overload():
    @fg.library.custom_op("fgtest_ns::twice", mutates_args=())
    def twice(x: fg.Tensor) -> fg.Tensor:
        return x * 2

    packet = fg.ops.fgtest_ns.twice
    assert repr(packet) == "<OpOverloadPacket(op='fgtest_ns.twice')>" and str(packet) == "fgtest_ns.twice"
    assert packet.overloads() == ["default"]
    assert packet(fg.tensor([1.0, 3.0])).tolist() == [2.0, 6.0]
    ov = packet.default
    assert ov(fg.tensor([4.0])).tolist() == [8.0]
    assert ov.name() == "fgtest_ns::twice" and repr(ov) == "<OpOverload(op='fgtest_ns.twice', overload='default')>"
    assert ov._schema == "fgtest_ns::twice(Tensor x) -> Tensor"

    # re-registering the name replaces the operator
    @fg.library.custom_op("fgtest_ns::twice", mutates_args=())
    def thrice(x: fg.Tensor) -> fg.Tensor:
        return x * 3
    assert fg.ops.fgtest_ns.twice(fg.tensor([1.0])).tolist() == [3.0]


def test_custom_op_gradient_flows_through_the_namespace():
    @fg.library.custom_op("fgtest_ns::mysin", mutates_args=())
    def mysin(x: fg.Tensor) -> fg.Tensor:
        return fg.sin(x)
    mysin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
                            setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    x = fg.tensor([0.5, 1.0], requires_grad=True)
    fg.ops.fgtest_ns.mysin.default(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]), rtol=1e-6)


def test_errors_are_torchs():
    with pytest.raises(AttributeError, match="'_OpNamespace' 'fgtest_none' object has no attribute 'foo'"):
        fg.ops.fgtest_none.foo
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'no_such_op'"):
        fg.ops.aten.no_such_op
    with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no overload name 'Foo'"):
        fg.ops.aten.add.Foo
    assert not hasattr(fg.ops, "__wrapped__")   # dunder lookups stay AttributeErrors (pickle, inspect)


def test_errors_match_torch_text():
    torch = _torch()
    for get in (lambda o: o.fgtest_none.foo, lambda o: o.aten.no_such_op, lambda o: o.aten.add.Foo):
        with pytest.raises(AttributeError) as want:
            get(torch.ops)
        with pytest.raises(AttributeError) as got:
            get(fg.ops)
        assert str(got.value) == str(want.value)


def test_overload_names_and_reprs_match_torch():
    torch = _torch()
    for op, ovs in aten_table.table().items():
        theirs = getattr(torch.ops.aten, op)
        assert set(ovs) <= set(theirs.overloads()), op
        for ov in ovs:
            mine, t = getattr(getattr(fg.ops.aten, op), ov), getattr(theirs, ov)
            assert (mine.name(), repr(mine), str(mine)) == (t.name(), repr(t), str(t))
    for op, (_, ovs) in ops_namespace._QUANTIZED.items():
        assert set(ovs) <= set(getattr(torch.ops.quantized, op).overloads()), op


def test_aten_exact_values():
    a, b = fg.tensor([[1.0, -2.0], [3.0, 4.0]]), fg.tensor([[0.5, 0.5], [2.0, -1.0]])
    A = fg.ops.aten
    assert A.add.Tensor(a, b, alpha=2).tolist() == [[2.0, -1.0], [7.0, 2.0]]
    assert A.mm.default(a, b).tolist() == [[-3.5, 2.5], [9.5, -2.5]]
    assert A.sum.dim_IntList(a, [1]).tolist() == [-1.0, 7.0]
    assert A.view.default(a, [4]).tolist() == [1.0, -2.0, 3.0, 4.0]
    assert A.slice.Tensor(fg.arange(10), 0, 2, 9, 3).tolist() == [2, 5, 8]
    assert A.select.int(a, 1, 0).tolist() == [1.0, 3.0]
    assert A.index.Tensor(a, [None, fg.tensor([1, 1])]).tolist() == [[-2.0, -2.0], [4.0, 4.0]]
    values, indices = A.max.dim(a, 1)
    assert values.tolist() == [1.0, 4.0] and indices.tolist() == [0, 1]
    assert A.sym_size.int(a, 1) == 2 and A._local_scalar_dense.default(fg.tensor(3.5)) == 3.5
    assert A.rsub.Scalar(a, 1.0).tolist() == [[0.0, 3.0], [-2.0, -3.0]]
    assert A.full.default([2], 7.0, dtype=fg.float64, layout=fg.strided, pin_memory=False).tolist() == [7.0, 7.0]
    assert A._to_copy.default(a, dtype=fg.int64).dtype is fg.int64
    assert A.expand.default(fg.tensor([1.0]), [3]).tolist() == [1.0, 1.0, 1.0]


def _cases(torch, fgmod):
    """(name, call) pairs run identically on torch.ops.aten and funcgrad.ops.aten; `fgmod` is torch or
    funcgrad, for the inputs."""
    rng = np.random.default_rng(0)
    x = fgmod.tensor(rng.standard_normal((2, 3, 4)))
    y = fgmod.tensor(rng.standard_normal((2, 3, 4)))
    pos = fgmod.tensor(rng.random((2, 3, 4)) + 0.5)
    m = fgmod.tensor(rng.standard_normal((3, 4)))
    w = fgmod.tensor(rng.standard_normal((5, 4)))
    img = fgmod.tensor(rng.standard_normal((2, 3, 6, 6)))
    k = fgmod.tensor(rng.standard_normal((4, 3, 3, 3)))
    kt = fgmod.tensor(rng.standard_normal((3, 2, 3, 3)))
    gamma, beta = fgmod.tensor(rng.standard_normal(3)), fgmod.tensor(rng.standard_normal(3))
    rm, rv = fgmod.tensor(rng.standard_normal(3)), fgmod.tensor(rng.random(3) + 0.5)
    idx = fgmod.tensor([[0, 2], [1, 1]])
    cases = [(name, (lambda A, name=name: getattr(A, name).default(x))) for name in
             ("abs", "cos", "exp", "neg", "relu", "sigmoid", "sin", "tanh", "floor", "ceil", "sign", "erf", "expm1",
              "silu", "gelu", "hardswish", "hardsigmoid", "mish", "softplus", "elu", "leaky_relu", "hardtanh",
              "clone", "detach", "square", "trunc")]
    cases += [(name, (lambda A, name=name: getattr(A, name).default(pos))) for name in
              ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal")]
    cases += [
        ("add.Tensor", lambda A: A.add.Tensor(x, y, alpha=0.5)), ("add.Scalar", lambda A: A.add.Scalar(x, 2)),
        ("sub.Tensor", lambda A: A.sub.Tensor(x, y)), ("mul.Tensor", lambda A: A.mul.Tensor(x, y)),
        ("mul.Scalar", lambda A: A.mul.Scalar(x, 3.0)), ("div.Tensor", lambda A: A.div.Tensor(x, pos)),
        ("div.Tensor_mode", lambda A: A.div.Tensor_mode(x, pos, rounding_mode="floor")),
        ("pow.Tensor_Scalar", lambda A: A.pow.Tensor_Scalar(pos, 1.5)),
        ("pow.Tensor_Tensor", lambda A: A.pow.Tensor_Tensor(pos, y)), ("rsub.Tensor", lambda A: A.rsub.Tensor(x, y)),
        ("remainder.Scalar", lambda A: A.remainder.Scalar(x, 0.7)), ("fmod.Tensor", lambda A: A.fmod.Tensor(x, pos)),
        ("atan2", lambda A: A.atan2.default(x, y)), ("maximum", lambda A: A.maximum.default(x, y)),
        ("minimum", lambda A: A.minimum.default(x, y)), ("eq.Scalar", lambda A: A.eq.Scalar(x, 0.0)),
        ("lt.Tensor", lambda A: A.lt.Tensor(x, y)), ("ge.Tensor", lambda A: A.ge.Tensor(x, y)),
        ("where.self", lambda A: A.where.self(x > 0, x, y)),
        ("where.ScalarOther", lambda A: A.where.ScalarOther(x > 0, x, 0.0)),
        ("clamp", lambda A: A.clamp.default(x, -0.5, 0.5)), ("clamp_min", lambda A: A.clamp_min.default(x, 0.1)),
        ("masked_fill.Scalar", lambda A: A.masked_fill.Scalar(x, x > 0, 9.0)),
        ("sum.default", lambda A: A.sum.default(x)), ("sum.dim_IntList", lambda A: A.sum.dim_IntList(x, [0, 2], True)),
        ("mean.dim", lambda A: A.mean.dim(x, [-1])), ("mean.default", lambda A: A.mean.default(x)),
        ("prod.dim_int", lambda A: A.prod.dim_int(x, 1)), ("amax", lambda A: A.amax.default(x, [1])),
        ("amin", lambda A: A.amin.default(x, [])), ("argmax", lambda A: A.argmax.default(x, 2)),
        ("max.default", lambda A: A.max.default(x)), ("min.other", lambda A: A.min.other(x, y)),
        ("var.correction", lambda A: A.var.correction(x, [1], correction=0)),
        ("std.dim", lambda A: A.std.dim(x, [2], True, True)),
        ("logsumexp", lambda A: A.logsumexp.default(x, [1])), ("cumsum", lambda A: A.cumsum.default(x, 1)),
        ("all.dim", lambda A: A.all.dim(x > -3, 1)), ("any.default", lambda A: A.any.default(x > 1)),
        ("view", lambda A: A.view.default(x, [6, 4])), ("_unsafe_view", lambda A: A._unsafe_view.default(x, [4, 6])),
        ("reshape", lambda A: A.reshape.default(x, [-1])), ("permute", lambda A: A.permute.default(x, [2, 0, 1])),
        ("transpose.int", lambda A: A.transpose.int(x, 0, 2)), ("t", lambda A: A.t.default(m)),
        ("unsqueeze", lambda A: A.unsqueeze.default(x, 1)), ("squeeze.dim", lambda A: A.squeeze.dim(x[:1], 0)),
        ("flatten.using_ints", lambda A: A.flatten.using_ints(x, 1)),
        ("expand", lambda A: A.expand.default(x[:, :1], [2, 5, 4])), ("repeat", lambda A: A.repeat.default(m, [2, 1])),
        ("flip", lambda A: A.flip.default(x, [0, 2])), ("roll", lambda A: A.roll.default(x, [1], [2])),
        ("tril", lambda A: A.tril.default(m)), ("triu", lambda A: A.triu.default(m, 1)),
        ("cat", lambda A: A.cat.default([x, y], 1)), ("stack", lambda A: A.stack.default([x, y], 0)),
        ("split.Tensor", lambda A: A.split.Tensor(x, 2, 2)),
        ("split_with_sizes", lambda A: A.split_with_sizes.default(x, [1, 3], 2)),
        ("chunk", lambda A: A.chunk.default(x, 3, 1)), ("unbind.int", lambda A: A.unbind.int(x, 1)),
        ("select.int", lambda A: A.select.int(x, 2, -1)), ("slice.Tensor", lambda A: A.slice.Tensor(x, 2, 1, 4, 2)),
        ("index.Tensor", lambda A: A.index.Tensor(m, [idx])),
        ("index_select", lambda A: A.index_select.default(m, 1, idx[0])),
        ("gather", lambda A: A.gather.default(m, 1, idx.repeat(2, 1)[:3])),
        ("constant_pad_nd", lambda A: A.constant_pad_nd.default(m, [1, 2], 3.0)),
        ("mm", lambda A: A.mm.default(m, w.t())), ("bmm", lambda A: A.bmm.default(x, x.transpose(1, 2))),
        ("matmul", lambda A: A.matmul.default(x, m.t())), ("addmm", lambda A: A.addmm.default(w[:, 0], m, w.t(),
                                                                                               beta=0.5, alpha=2)),
        ("linear", lambda A: A.linear.default(m, w, w[:, 0])), ("dot", lambda A: A.dot.default(m[0], m[1])),
        ("einsum", lambda A: A.einsum.default("bij,kj->bik", [x, m])),
        ("embedding", lambda A: A.embedding.default(w, idx)),
        ("_softmax", lambda A: A._softmax.default(x, 1, False)), ("softmax.int", lambda A: A.softmax.int(x, -1)),
        ("_log_softmax", lambda A: A._log_softmax.default(x, 2, False)),
        ("convolution", lambda A: A.convolution.default(img, k, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)),
        ("convolution.transposed", lambda A: A.convolution.default(img, kt, None, [2, 2], [1, 1], [1, 1], True,
                                                                   [1, 1], 1)),
        ("conv2d", lambda A: A.conv2d.default(img, k, gamma.repeat(2)[:4], [2, 2], [0, 0])),
        ("max_pool2d", lambda A: A.max_pool2d.default(img, [2, 2])),
        ("max_pool2d_with_indices", lambda A: A.max_pool2d_with_indices.default(img, [3, 3], [2, 2], [1, 1])),
        ("avg_pool2d", lambda A: A.avg_pool2d.default(img, [2, 2], [], [0, 0], False, True, None)),
        ("adaptive_avg_pool2d", lambda A: A.adaptive_avg_pool2d.default(img, [1, 1])),
        ("native_layer_norm", lambda A: A.native_layer_norm.default(x, [4], w[0], w[1], 1e-5)),
        ("layer_norm", lambda A: A.layer_norm.default(x, [3, 4])),
        ("group_norm", lambda A: A.group_norm.default(img, 3, gamma, beta, 1e-5, False)),
        ("_native_batch_norm_legit_no_training",
         lambda A: A._native_batch_norm_legit_no_training.default(img, gamma, beta, rm, rv, 0.1, 1e-5)[0]),
        ("native_batch_norm", lambda A: A.native_batch_norm.default(img, gamma, beta, rm.clone(), rv.clone(), True,
                                                                    0.1, 1e-5)),
        ("linalg_vector_norm", lambda A: A.linalg_vector_norm.default(x, 2, [1])),
        ("topk", lambda A: A.topk.default(x, 2, 2)), ("sort", lambda A: A.sort.default(x, 1, True)),
        ("zeros_like", lambda A: A.zeros_like.default(x, dtype=fgmod.float32)),
        ("ones", lambda A: A.ones.default([2, 3], dtype=fgmod.float64)),
        ("arange.start_step", lambda A: A.arange.start_step(1, 10, 3)),
        ("new_zeros", lambda A: A.new_zeros.default(x, [2])), ("scalar_tensor", lambda A: A.scalar_tensor.default(3)),
        ("upsample_nearest2d.vec", lambda A: A.upsample_nearest2d.vec(img, [12, 9], None)),
    ]
    return cases


def _host(v):
    if isinstance(v, (tuple, list)):
        return [_host(e) for e in v]
    if hasattr(v, "detach"):
        return (np.asarray(v.detach().numpy()), str(v.dtype).rpartition(".")[2])
    return v


def test_aten_ops_match_torch():
    torch = _torch()
    mine, theirs = _cases(torch, fg), _cases(torch, torch)
    assert len(mine) >= 120
    for (name, f), (_, g) in zip(mine, theirs):
        got, want = _host(f(fg.ops.aten)), _host(g(torch.ops.aten))

        def check(a, b):
            if isinstance(b, list):
                assert isinstance(a, list) and len(a) == len(b), name
                for u, v in zip(a, b):
                    check(u, v)
            elif isinstance(b, tuple):
                assert a[1] == b[1], (name, a[1], b[1])
                np.testing.assert_allclose(a[0], b[0], rtol=1e-10, atol=1e-12, err_msg=name)
            else:
                assert a == b, name
        check(got, want)


def test_quantized_namespace_matches_torch():
    torch = _torch()
    rng = np.random.default_rng(1)
    xa, xb = rng.standard_normal((2, 4, 4, 4)).astype(np.float32), rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
    qa_t, qb_t = (torch.quantize_per_tensor(torch.tensor(v), s, z, torch.quint8) for v, s, z in
                  ((xa, 0.02, 120), (xb, 0.03, 100)))
    qa, qb = (fg.quantize_per_tensor(fg.tensor(v), s, z, fg.quint8) for v, s, z in ((xa, 0.02, 120), (xb, 0.03, 100)))
    calls = [lambda o, a, b: o.add(a, b, 0.05, 128), lambda o, a, b: o.add_relu(a, b, 0.05, 3),
             lambda o, a, b: o.mul(a, b, 0.04, 128), lambda o, a, b: o.mul_relu.default(a, b, 0.04, 10),
             lambda o, a, b: o.add.Scalar(a, 0.5), lambda o, a, b: o.add(0.25, a),
             lambda o, a, b: o.mul.Scalar(a, -1.5), lambda o, a, b: o.add_scalar(a, 0.3),
             lambda o, a, b: o.cat([a, b], 1, 0.03, 110), lambda o, a, b: o.cat([a, b], 0, None, None),
             lambda o, a, b: o.relu6(a), lambda o, a, b: o.hardswish(a, 0.02, 20),
             lambda o, a, b: o.sigmoid(a, 1 / 256, 0), lambda o, a, b: o.leaky_relu(a, 0.1, False, 0.02, 100),
             lambda o, a, b: o.max_pool2d(a, [2, 2], [], [0, 0], [1, 1], False)]
    for call in calls:
        want, got = call(torch.ops.quantized, qa_t, qb_t), call(fg.ops.quantized, qa, qb)
        assert got.dtype is fg.quint8
        assert (got.q_scale(), got.q_zero_point()) == pytest.approx((want.q_scale(), want.q_zero_point()))
        np.testing.assert_array_equal(got.int_repr().numpy(), want.int_repr().numpy())


def test_load_library_loads_and_records(tmp_path):
    import ctypes.util
    libm = ctypes.util.find_library("m")
    if libm is None:
        pytest.skip("no libm to load")
    fg.ops.load_library(libm)
    assert libm in fg.ops.loaded_libraries
    with pytest.raises(OSError):
        fg.ops.load_library(str(tmp_path / "missing.so"))


# --- every overload of the ATen table (funcgrad/_torch/_aten.py) against torch: value, and gradient where torch's
# result is differentiable -------------------------------------------------------------------------------------
class _Sample:
    """Inputs drawn from one seed, as `lib` tensors (float64 leaves requiring grad unless g=False), so funcgrad
    and torch get the same numbers; `leaves` are the float tensors made."""

    def __init__(self, lib, seed: int):
        self.lib, self.rng, self.leaves = lib, np.random.default_rng(seed), []

    def _t(self, a, g=True):
        t = self.lib.tensor(a, requires_grad=g and a.dtype == np.float64)
        if a.dtype == np.float64:
            self.leaves.append(t)
        return t

    def f(self, *shape, g=True):
        return self._t(self.rng.standard_normal(shape), g)

    def pos(self, *shape, g=True):
        return self._t(self.rng.random(shape) + 0.5, g)

    def unit(self, *shape, g=True):
        return self._t(self.rng.random(shape) * 0.8 + 0.1, g)

    def i(self, high, *shape):
        return self.lib.tensor(self.rng.integers(0, high, shape))

    def b(self, *shape):
        return self.lib.tensor(self.rng.random(shape) > 0.5)


_UNARY = ("abs acos acosh asin asinh atan atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 floor frac "
          "hardshrink hardsigmoid hardswish i0 lgamma log log10 log1p log2 log_sigmoid logit mish neg positive rad2deg "
          "reciprocal relu relu6 rsqrt selu sgn sigmoid sign silu sin sinh softshrink sqrt square tan tanh trunc celu "
          "elu gelu hardtanh leaky_relu softplus clone detach alias lift_fresh_copy contiguous isfinite isinf isnan "
          "isneginf isposinf signbit logical_not nan_to_num arccos arccosh arcsin arcsinh arctan fix negative sinc "
          "absolute conj resolve_conj resolve_neg ravel msort angle fliplr flipud atleast_1d atleast_2d atleast_3d "
          "corrcoef").split()
_DOMAIN = {"acos": "unit", "asin": "unit", "atanh": "unit", "logit": "unit", "erfinv": "unit", "acosh": "pos1",
           "arccos": "unit", "arcsin": "unit", "arccosh": "pos1",
           "log": "pos", "log10": "pos", "log1p": "pos", "log2": "pos", "rsqrt": "pos", "sqrt": "pos",
           "digamma": "pos", "lgamma": "pos", "reciprocal": "pos"}
_BINARY = ("atan2 maximum minimum hypot logaddexp logaddexp2 fmax fmin nextafter copysign.Tensor true_divide.Tensor "
           "add.Tensor sub.Tensor mul.Tensor div.Tensor rsub.Tensor eq.Tensor ne.Tensor lt.Tensor le.Tensor gt.Tensor "
           "ge.Tensor min.other max.other logical_and logical_or logical_xor heaviside isclose arctan2 divide.Tensor "
           "multiply.Tensor subtract.Tensor greater.Tensor greater_equal.Tensor less.Tensor less_equal.Tensor "
           "not_equal.Tensor ldexp.Tensor").split()
_RANDOM = {"rand.default", "randn.default", "rand_like.default", "randn_like.default", "randint.low",
           "randperm.default", "empty.memory_format", "empty_like.default", "new_empty.default", "bernoulli.p",
           "native_dropout.default"}
# torch's float64 CPU kernel of hardsigmoid's backward multiplies by the float32 constant 1.0f / 6.0f (a relative
# 3e-8 off 1/6); funcgrad's gradient is 1/6 (checked exactly in test_hardsigmoid_gradient_is_one_sixth)
_GRAD_NOT_TORCH = {"hardsigmoid.default"}


def _unary(name):
    def call(A, s):
        kind = _DOMAIN.get(name)
        x = s.unit(2, 3) if kind == "unit" else s.pos(2, 3) if kind == "pos" else (s.pos(2, 3) + 1) if kind == "pos1" \
            else s.f(2, 3)
        op, _, ov = name.partition(".")
        return getattr(getattr(A, op), ov or "default")(x)
    return call


def _binary(name):
    def call(A, s):
        op, _, ov = name.partition(".")
        x, y = s.f(2, 3), s.f(3)
        if op == "heaviside":
            return A.heaviside.default(x, y)
        return getattr(getattr(A, op), ov or "default")(x, s.pos(2, 3) if op in ("div", "true_divide") else y)
    return call


def _ip(A, s, op, ov="default", *args, **kwargs):
    """An in-place overload on a fresh non-leaf copy."""
    x = s.f(2, 3) * 1.0
    return getattr(getattr(A, op), ov)(x, *args, **kwargs)


_ALL_CASES: dict = {**{n if "." in n else n + ".default": _unary(n) for n in _UNARY},
                    **{n if "." in n else n + ".default": _binary(n) for n in _BINARY}}
_ALL_CASES.update({
    "_adaptive_avg_pool2d.default": lambda A, s: A._adaptive_avg_pool2d.default(s.f(1, 2, 5, 5), [2, 3]),
    "_local_scalar_dense.default": lambda A, s: A._local_scalar_dense.default(s.f(g=False)),
    "_log_softmax.default": lambda A, s: A._log_softmax.default(s.f(2, 3), 1, False),
    "_native_batch_norm_legit.default": lambda A, s: A._native_batch_norm_legit.default(
        s.f(2, 3, 4), s.f(3), s.f(3), s.f(3, g=False), s.pos(3, g=False), True, 0.1, 1e-5),
    "_native_batch_norm_legit.no_stats": lambda A, s: A._native_batch_norm_legit.no_stats(
        s.f(2, 3, 4), s.f(3), s.f(3), True, 0.1, 1e-5),
    "_native_batch_norm_legit_no_training.default": lambda A, s: A._native_batch_norm_legit_no_training.default(
        s.f(2, 3, 4), s.f(3), s.f(3), s.f(3, g=False), s.pos(3, g=False), 0.1, 1e-5)[0],
    "_softmax.default": lambda A, s: A._softmax.default(s.f(2, 3), 0, False),
    "_to_copy.default": lambda A, s: A._to_copy.default(s.f(2, 3), dtype=s.lib.float32),
    "_unsafe_view.default": lambda A, s: A._unsafe_view.default(s.f(2, 3), [3, 2]),
    "adaptive_avg_pool1d.default": lambda A, s: A.adaptive_avg_pool1d.default(s.f(2, 3, 7), [3]),
    "adaptive_avg_pool2d.default": lambda A, s: A.adaptive_avg_pool2d.default(s.f(1, 2, 5, 6), [2, 4]),
    "adaptive_avg_pool3d.default": lambda A, s: A.adaptive_avg_pool3d.default(s.f(1, 2, 4, 5, 3), [2, 2, 1]),
    "adaptive_max_pool1d.default": lambda A, s: A.adaptive_max_pool1d.default(s.f(2, 3, 7), [3]),
    "adaptive_max_pool2d.default": lambda A, s: A.adaptive_max_pool2d.default(s.f(1, 2, 5, 6), [2, 3]),
    "add.Scalar": lambda A, s: A.add.Scalar(s.f(2, 3), 2.5, alpha=2),
    "add_.Tensor": lambda A, s: _ip(A, s, "add_", "Tensor", s.f(3), alpha=3),
    "add_.Scalar": lambda A, s: _ip(A, s, "add_", "Scalar", 1.5),
    "addcdiv.default": lambda A, s: A.addcdiv.default(s.f(2, 3), s.f(2, 3), s.pos(3), value=0.5),
    "addcmul.default": lambda A, s: A.addcmul.default(s.f(2, 3), s.f(2, 3), s.f(3), value=2),
    "addmm.default": lambda A, s: A.addmm.default(s.f(3), s.f(2, 4), s.f(4, 3), beta=0.5, alpha=2),
    "all.default": lambda A, s: A.all.default(s.b(2, 3)), "all.dim": lambda A, s: A.all.dim(s.b(2, 3), 1),
    "all.dims": lambda A, s: A.all.dims(s.b(2, 3, 2), [0, 2]), "any.default": lambda A, s: A.any.default(s.b(2, 3)),
    "any.dim": lambda A, s: A.any.dim(s.b(2, 3), 0, True), "any.dims": lambda A, s: A.any.dims(s.b(2, 3, 2), [1]),
    "amax.default": lambda A, s: A.amax.default(s.f(2, 3, 4), [0, 2]),
    "amin.default": lambda A, s: A.amin.default(s.f(2, 3, 4), [1], True),
    "aminmax.default": lambda A, s: A.aminmax.default(s.f(2, 3), dim=1),
    "arange.default": lambda A, s: A.arange.default(5, dtype=s.lib.float64),
    "arange.start": lambda A, s: A.arange.start(2, 7), "arange.start_step": lambda A, s: A.arange.start_step(1, 2, 0.25),
    "argmax.default": lambda A, s: A.argmax.default(s.f(2, 3), 1),
    "argmin.default": lambda A, s: A.argmin.default(s.f(2, 3), 0, True),
    "argsort.default": lambda A, s: A.argsort.default(s.f(2, 5), 1, True),
    "as_strided.default": lambda A, s: A.as_strided.default(s.f(3, 4), [2, 2], [4, 1], 1),
    "avg_pool1d.default": lambda A, s: A.avg_pool1d.default(s.f(2, 3, 7), [3], [2], [1]),
    "avg_pool2d.default": lambda A, s: A.avg_pool2d.default(s.f(1, 2, 6, 5), [2, 2], [], [1, 0], True, False),
    "avg_pool3d.default": lambda A, s: A.avg_pool3d.default(s.f(1, 2, 4, 4, 4), [2, 2, 2]),
    "baddbmm.default": lambda A, s: A.baddbmm.default(s.f(2, 3, 3), s.f(2, 3, 4), s.f(2, 4, 3), beta=0.5, alpha=2),
    "batch_norm.default": lambda A, s: A.batch_norm.default(s.f(2, 3, 4), s.f(3), s.f(3), s.f(3, g=False),
                                                            s.pos(3, g=False), False, 0.1, 1e-5, False),
    "binary_cross_entropy.default": lambda A, s: A.binary_cross_entropy.default(s.unit(2, 3), s.unit(2, 3), None, 2),
    "binary_cross_entropy_with_logits.default": lambda A, s: A.binary_cross_entropy_with_logits.default(
        s.f(2, 3), s.unit(2, 3), s.pos(3, g=False), s.pos(3, g=False), 1),
    "bitwise_and.Tensor": lambda A, s: A.bitwise_and.Tensor(s.i(9, 2, 3), s.i(9, 3)),
    "bitwise_and.Scalar": lambda A, s: A.bitwise_and.Scalar(s.i(9, 2, 3), 5),
    "bitwise_and.Scalar_Tensor": lambda A, s: A.bitwise_and.Scalar_Tensor(6, s.i(9, 2, 3)),
    "bitwise_or.Tensor": lambda A, s: A.bitwise_or.Tensor(s.i(9, 2, 3), s.i(9, 3)),
    "bitwise_or.Scalar": lambda A, s: A.bitwise_or.Scalar(s.i(9, 2, 3), 5),
    "bitwise_or.Scalar_Tensor": lambda A, s: A.bitwise_or.Scalar_Tensor(6, s.i(9, 2, 3)),
    "bitwise_xor.Tensor": lambda A, s: A.bitwise_xor.Tensor(s.i(9, 2, 3), s.i(9, 3)),
    "bitwise_xor.Scalar": lambda A, s: A.bitwise_xor.Scalar(s.i(9, 2, 3), 5),
    "bitwise_xor.Scalar_Tensor": lambda A, s: A.bitwise_xor.Scalar_Tensor(6, s.i(9, 2, 3)),
    "bitwise_not.default": lambda A, s: A.bitwise_not.default(s.i(9, 2, 3)),
    "bernoulli.p": lambda A, s: A.bernoulli.p(s.f(2, 3, g=False), 0.3),
    "bmm.default": lambda A, s: A.bmm.default(s.f(2, 3, 4), s.f(2, 4, 2)),
    "broadcast_to.default": lambda A, s: A.broadcast_to.default(s.f(3, 1), [2, 3, 4]),
    "bucketize.Tensor": lambda A, s: A.bucketize.Tensor(s.f(2, 3), s.lib.tensor([-1.0, 0.0, 1.0]), right=True),
    "cat.default": lambda A, s: A.cat.default([s.f(2, 3), s.f(2, 1)], 1),
    "cdist.default": lambda A, s: A.cdist.default(s.f(3, 2), s.f(4, 2), 1.5),
    "chunk.default": lambda A, s: A.chunk.default(s.f(5, 2), 2),
    "clamp.default": lambda A, s: A.clamp.default(s.f(2, 3), -0.5, 0.5),
    "clamp.Tensor": lambda A, s: A.clamp.Tensor(s.f(2, 3), s.f(3) - 1, None),
    "clamp_.default": lambda A, s: _ip(A, s, "clamp_", "default", None, 0.3),
    "clamp_max.default": lambda A, s: A.clamp_max.default(s.f(2, 3), 0.2),
    "clamp_min.default": lambda A, s: A.clamp_min.default(s.f(2, 3), 0.2),
    "col2im.default": lambda A, s: A.col2im.default(s.f(1, 8, 9), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1]),
    "constant_pad_nd.default": lambda A, s: A.constant_pad_nd.default(s.f(2, 3), [1, 2, 0, 1], 3.0),
    "conv1d.default": lambda A, s: A.conv1d.default(s.f(2, 3, 7), s.f(4, 3, 3), s.f(4), [2], [1]),
    "conv1d.padding": lambda A, s: A.conv1d.padding(s.f(2, 3, 7), s.f(4, 3, 3), None, [1], "same"),
    "conv2d.default": lambda A, s: A.conv2d.default(s.f(2, 3, 6, 6), s.f(4, 3, 3, 3), s.f(4), [2, 2], [0, 1]),
    "conv2d.padding": lambda A, s: A.conv2d.padding(s.f(1, 2, 5, 5), s.f(2, 1, 3, 3), None, [1, 1], "valid",
                                                    [1, 1], 2),
    "conv3d.default": lambda A, s: A.conv3d.default(s.f(1, 2, 4, 4, 4), s.f(3, 2, 2, 2, 2)),
    "conv3d.padding": lambda A, s: A.conv3d.padding(s.f(1, 2, 4, 4, 4), s.f(3, 2, 3, 3, 3), s.f(3), [1, 1, 1],
                                                    "same"),
    "conv_transpose1d.default": lambda A, s: A.conv_transpose1d.default(s.f(2, 3, 5), s.f(3, 2, 3), s.f(2), [2]),
    "conv_transpose2d.input": lambda A, s: A.conv_transpose2d.input(s.f(1, 3, 4, 4), s.f(3, 2, 3, 3), None, [2, 2],
                                                                    [1, 1], [1, 1]),
    "conv_transpose3d.input": lambda A, s: A.conv_transpose3d.input(s.f(1, 2, 3, 3, 3), s.f(2, 2, 2, 2, 2)),
    "convolution.default": lambda A, s: A.convolution.default(s.f(2, 3, 6, 6), s.f(4, 3, 3, 3), s.f(4), [1, 1],
                                                              [1, 1], [1, 1], False, [0, 0], 1),
    "copy.default": lambda A, s: A.copy.default(s.f(2, 3), s.f(3)),
    "copy_.default": lambda A, s: _ip(A, s, "copy_", "default", s.f(3)),
    "cosine_similarity.default": lambda A, s: A.cosine_similarity.default(s.f(2, 3), s.f(2, 3), 1),
    "count_nonzero.dim_IntList": lambda A, s: A.count_nonzero.dim_IntList(s.i(2, 3, 4), [1]),
    "cross_entropy_loss.default": lambda A, s: A.cross_entropy_loss.default(s.f(4, 3), s.lib.tensor([0, 2, 1, 2]),
                                                                            s.pos(3, g=False), 1, 1, 0.1),
    "cummax.default": lambda A, s: A.cummax.default(s.f(2, 5), 1),
    "cummin.default": lambda A, s: A.cummin.default(s.f(4, 2), 0),
    "cumprod.default": lambda A, s: A.cumprod.default(s.f(2, 4), 1),
    "cumsum.default": lambda A, s: A.cumsum.default(s.f(2, 4), 0),
    "diag_embed.default": lambda A, s: A.diag_embed.default(s.f(2, 3), 1),
    "diagonal.default": lambda A, s: A.diagonal.default(s.f(3, 4, 2), -1, 0, 1),
    "diff.default": lambda A, s: A.diff.default(s.f(2, 5), 2, 1, s.f(2, 1)),
    "div.Scalar": lambda A, s: A.div.Scalar(s.f(2, 3), 0.7),
    "div.Tensor_mode": lambda A, s: A.div.Tensor_mode(s.f(2, 3), s.pos(3), rounding_mode="trunc"),
    "div.Scalar_mode": lambda A, s: A.div.Scalar_mode(s.f(2, 3), 0.3, rounding_mode="floor"),
    "div_.Tensor": lambda A, s: _ip(A, s, "div_", "Tensor", s.pos(3)),
    "div_.Tensor_mode": lambda A, s: _ip(A, s, "div_", "Tensor_mode", s.pos(3), rounding_mode="floor"),
    "div_.Scalar": lambda A, s: _ip(A, s, "div_", "Scalar", 4.0),
    "div_.Scalar_mode": lambda A, s: _ip(A, s, "div_", "Scalar_mode", 0.4, rounding_mode="trunc"),
    "dot.default": lambda A, s: A.dot.default(s.f(4), s.f(4)),
    "dropout.default": lambda A, s: A.dropout.default(s.f(2, 3), 0.5, False),
    "einsum.default": lambda A, s: A.einsum.default("bij,kj->bik", [s.f(2, 3, 4), s.f(5, 4)]),
    "embedding.default": lambda A, s: A.embedding.default(s.f(5, 3), s.lib.tensor([[0, 2], [4, 0]]), 0),
    "empty.memory_format": lambda A, s: A.empty.memory_format([2, 3], dtype=s.lib.float64),
    "empty_like.default": lambda A, s: A.empty_like.default(s.f(2, 3)),
    "eq.Scalar": lambda A, s: A.eq.Scalar(s.i(3, 2, 3), 1),
    "exp_.default": lambda A, s: _ip(A, s, "exp_"),
    "expand.default": lambda A, s: A.expand.default(s.f(3, 1), [2, 3, 4]),
    "expand_as.default": lambda A, s: A.expand_as.default(s.f(3, 1), s.f(2, 3, 4, g=False)),
    "eye.default": lambda A, s: A.eye.default(3, dtype=s.lib.float64),
    "eye.m": lambda A, s: A.eye.m(2, 4),
    "fill.Scalar": lambda A, s: A.fill.Scalar(s.f(2, 3), 1.5),
    "fill.Tensor": lambda A, s: A.fill.Tensor(s.f(2, 3), s.f()),
    "fill_.Scalar": lambda A, s: _ip(A, s, "fill_", "Scalar", -2.0),
    "fill_.Tensor": lambda A, s: _ip(A, s, "fill_", "Tensor", s.f()),
    "flatten.using_ints": lambda A, s: A.flatten.using_ints(s.f(2, 3, 4), 1),
    "flip.default": lambda A, s: A.flip.default(s.f(2, 3, 4), [0, 2]),
    "float_power.Tensor_Tensor": lambda A, s: A.float_power.Tensor_Tensor(s.pos(2, 3), s.f(3)),
    "float_power.Tensor_Scalar": lambda A, s: A.float_power.Tensor_Scalar(s.pos(2, 3), 2.5),
    "floor_divide.default": lambda A, s: A.floor_divide.default(s.f(2, 3), s.pos(3)),
    "floor_divide.Scalar": lambda A, s: A.floor_divide.Scalar(s.i(9, 2, 3), 2),
    "fmod.Tensor": lambda A, s: A.fmod.Tensor(s.f(2, 3), s.pos(3)),
    "fmod.Scalar": lambda A, s: A.fmod.Scalar(s.f(2, 3), 0.4),
    "full.default": lambda A, s: A.full.default([2, 3], 7.0, dtype=s.lib.float64, layout=s.lib.strided),
    "full_like.default": lambda A, s: A.full_like.default(s.f(2, 3), 4),
    "gather.default": lambda A, s: A.gather.default(s.f(3, 4), 1, s.i(4, 3, 2)),
    "ge.Scalar": lambda A, s: A.ge.Scalar(s.f(2, 3), 0.1),
    "glu.default": lambda A, s: A.glu.default(s.f(2, 4), 1),
    "grid_sampler_2d.default": lambda A, s: A.grid_sampler_2d.default(s.f(1, 2, 4, 5), s.unit(1, 3, 2, 2) * 2 - 1, 0,
                                                                      1, False),
    "group_norm.default": lambda A, s: A.group_norm.default(s.f(2, 4, 3), 2, s.f(4), s.f(4)),
    "gt.Scalar": lambda A, s: A.gt.Scalar(s.f(2, 3), 0.1),
    "hardtanh_.default": lambda A, s: _ip(A, s, "hardtanh_", "default", -0.5, 0.5),
    "hstack.default": lambda A, s: A.hstack.default([s.f(2, 3), s.f(2, 1)]),
    "huber_loss.default": lambda A, s: A.huber_loss.default(s.f(2, 3), s.f(2, 3), 2, 0.5),
    "im2col.default": lambda A, s: A.im2col.default(s.f(1, 2, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1]),
    "index.Tensor": lambda A, s: A.index.Tensor(s.f(3, 4), [None, s.lib.tensor([1, 3, 1])]),
    "index_add.default": lambda A, s: A.index_add.default(s.f(4, 3), 0, s.lib.tensor([1, 3, 1]), s.f(3, 3), alpha=2),
    "index_copy.default": lambda A, s: A.index_copy.default(s.f(4, 3), 0, s.lib.tensor([2, 0]), s.f(2, 3)),
    "index_fill.int_Scalar": lambda A, s: A.index_fill.int_Scalar(s.f(4, 3), 1, s.lib.tensor([0, 2]), -1.0),
    "index_put.default": lambda A, s: A.index_put.default(s.f(4, 3), [s.lib.tensor([1, 3, 1])], s.f(3), True),
    "index_put_.default": lambda A, s: _ip(A, s, "index_put_", "default", [s.lib.tensor([1, 0])], s.f(2, 3)),
    "index_select.default": lambda A, s: A.index_select.default(s.f(3, 4), 1, s.lib.tensor([3, 0, 3])),
    "inner.default": lambda A, s: A.inner.default(s.f(2, 3), s.f(4, 3)),
    "instance_norm.default": lambda A, s: A.instance_norm.default(s.f(2, 3, 4), s.f(3), s.f(3), None, None, True,
                                                                  0.1, 1e-5, False),
    "kl_div.default": lambda A, s: A.kl_div.default(s.f(2, 3), s.unit(2, 3), 1, log_target=False),
    "kron.default": lambda A, s: A.kron.default(s.f(2, 3), s.f(2, 2)),
    "l1_loss.default": lambda A, s: A.l1_loss.default(s.f(2, 3), s.f(2, 3)),
    "layer_norm.default": lambda A, s: A.layer_norm.default(s.f(2, 3, 4), [3, 4], s.f(3, 4), s.f(3, 4)),
    "le.Scalar": lambda A, s: A.le.Scalar(s.f(2, 3), 0.1),
    "lerp.Scalar": lambda A, s: A.lerp.Scalar(s.f(2, 3), s.f(3), 0.3),
    "lerp.Tensor": lambda A, s: A.lerp.Tensor(s.f(2, 3), s.f(3), s.unit(2, 3)),
    "linalg_vector_norm.default": lambda A, s: A.linalg_vector_norm.default(s.f(2, 3, 4), 3, [1]),
    "linear.default": lambda A, s: A.linear.default(s.f(2, 4), s.f(3, 4), s.f(3)),
    "linspace.default": lambda A, s: A.linspace.default(-1, 2, 7, dtype=s.lib.float64),
    "log_softmax.int": lambda A, s: A.log_softmax.int(s.f(2, 3), 1),
    "logcumsumexp.default": lambda A, s: A.logcumsumexp.default(s.f(2, 4), 1),
    "logspace.default": lambda A, s: A.logspace.default(0, 2, 5, 2.0, dtype=s.lib.float64),
    "logsumexp.default": lambda A, s: A.logsumexp.default(s.f(2, 3, 4), [1], True),
    "lt.Scalar": lambda A, s: A.lt.Scalar(s.f(2, 3), 0.1),
    "masked_fill.Scalar": lambda A, s: A.masked_fill.Scalar(s.f(2, 3), s.b(2, 3), 9.0),
    "masked_fill.Tensor": lambda A, s: A.masked_fill.Tensor(s.f(2, 3), s.b(3), s.f()),
    "masked_fill_.Scalar": lambda A, s: _ip(A, s, "masked_fill_", "Scalar", s.b(2, 3), 9.0),
    "masked_scatter.default": lambda A, s: A.masked_scatter.default(s.f(2, 3), s.b(2, 3), s.f(6)),
    "masked_select.default": lambda A, s: A.masked_select.default(s.f(2, 3), s.b(3)),
    "matmul.default": lambda A, s: A.matmul.default(s.f(2, 3, 4), s.f(4)),
    "max.default": lambda A, s: A.max.default(s.f(2, 3)), "max.dim": lambda A, s: A.max.dim(s.f(2, 3), 1, True),
    "min.default": lambda A, s: A.min.default(s.f(2, 3)), "min.dim": lambda A, s: A.min.dim(s.f(2, 3), 0),
    "max_pool1d.default": lambda A, s: A.max_pool1d.default(s.f(2, 3, 7), [3], [2], [1]),
    "max_pool2d.default": lambda A, s: A.max_pool2d.default(s.f(1, 2, 6, 5), [2, 2], [], [0, 1], [1, 1], True),
    "max_pool2d_with_indices.default": lambda A, s: A.max_pool2d_with_indices.default(s.f(1, 2, 6, 6), [3, 3], [2, 2],
                                                                                      [1, 1]),
    "max_pool3d.default": lambda A, s: A.max_pool3d.default(s.f(1, 2, 4, 4, 4), [2, 2, 2]),
    "mean.default": lambda A, s: A.mean.default(s.f(2, 3)), "mean.dim": lambda A, s: A.mean.dim(s.f(2, 3, 4), [0, 2]),
    "median.default": lambda A, s: A.median.default(s.f(2, 3)),
    "median.dim": lambda A, s: A.median.dim(s.f(3, 5), 1, True),
    "mm.default": lambda A, s: A.mm.default(s.f(2, 3), s.f(3, 4)),
    "movedim.int": lambda A, s: A.movedim.int(s.f(2, 3, 4), 0, 2),
    "mse_loss.default": lambda A, s: A.mse_loss.default(s.f(2, 3), s.f(2, 3), 0),
    "mul.Scalar": lambda A, s: A.mul.Scalar(s.f(2, 3), 3.0),
    "mul_.Tensor": lambda A, s: _ip(A, s, "mul_", "Tensor", s.f(3)),
    "mul_.Scalar": lambda A, s: _ip(A, s, "mul_", "Scalar", -2),
    "mv.default": lambda A, s: A.mv.default(s.f(2, 3), s.f(3)),
    "nansum.default": lambda A, s: A.nansum.default(s.f(2, 3), [1]),
    "narrow.default": lambda A, s: A.narrow.default(s.f(4, 3), 0, 1, 2),
    "native_batch_norm.default": lambda A, s: A.native_batch_norm.default(
        s.f(2, 3, 4), s.f(3), s.f(3), s.f(3, g=False), s.pos(3, g=False), True, 0.1, 1e-5),
    "native_dropout.default": lambda A, s: A.native_dropout.default(s.f(2, 3, g=False), 0.5, True),
    "native_group_norm.default": lambda A, s: A.native_group_norm.default(s.f(2, 4, 3), s.f(4), s.f(4), 2, 4, 3, 2,
                                                                          1e-5),
    "native_layer_norm.default": lambda A, s: A.native_layer_norm.default(s.f(2, 3, 4), [4], s.f(4), s.f(4), 1e-5),
    "ne.Scalar": lambda A, s: A.ne.Scalar(s.i(3, 2, 3), 1),
    "new_empty.default": lambda A, s: A.new_empty.default(s.f(2, 3), [4]),
    "new_full.default": lambda A, s: A.new_full.default(s.f(2, 3), [4], 2.5),
    "new_ones.default": lambda A, s: A.new_ones.default(s.f(2, 3), [2, 2]),
    "new_zeros.default": lambda A, s: A.new_zeros.default(s.f(2, 3), [3]),
    "nll_loss.default": lambda A, s: A.nll_loss.default(s.f(4, 3), s.lib.tensor([0, 2, 1, 2]), s.pos(3, g=False), 1, 1),
    "nll_loss_forward.default": lambda A, s: A.nll_loss_forward.default(s.f(4, 3), s.lib.tensor([0, 2, 1, 2]), None,
                                                                        2, 1),
    "nonzero.default": lambda A, s: A.nonzero.default(s.i(2, 3, 4)),
    "norm.ScalarOpt_dim": lambda A, s: A.norm.ScalarOpt_dim(s.f(2, 3), 3, [1]),
    "one_hot.default": lambda A, s: A.one_hot.default(s.lib.tensor([0, 2, 1]), 4),
    "ones.default": lambda A, s: A.ones.default([2, 3], dtype=s.lib.float64),
    "ones_like.default": lambda A, s: A.ones_like.default(s.f(2, 3), dtype=s.lib.int32),
    "outer.default": lambda A, s: A.outer.default(s.f(3), s.f(2)),
    "pad.default": lambda A, s: A.pad.default(s.f(1, 2, 5), [2, 1], "reflect"),
    "pairwise_distance.default": lambda A, s: A.pairwise_distance.default(s.f(3, 4), s.f(3, 4), 1.5),
    "pdist.default": lambda A, s: A.pdist.default(s.f(4, 3)),
    "permute.default": lambda A, s: A.permute.default(s.f(2, 3, 4), [2, 0, 1]),
    "pixel_shuffle.default": lambda A, s: A.pixel_shuffle.default(s.f(1, 8, 2, 3), 2),
    "pixel_unshuffle.default": lambda A, s: A.pixel_unshuffle.default(s.f(1, 2, 4, 6), 2),
    "pow.Tensor_Tensor": lambda A, s: A.pow.Tensor_Tensor(s.pos(2, 3), s.f(3)),
    "pow.Tensor_Scalar": lambda A, s: A.pow.Tensor_Scalar(s.pos(2, 3), 1.5),
    "pow.Scalar": lambda A, s: A.pow.Scalar(2.0, s.f(2, 3)),
    "prelu.default": lambda A, s: A.prelu.default(s.f(2, 3, 4), s.f(3)),
    "prod.default": lambda A, s: A.prod.default(s.f(2, 3)), "prod.dim_int": lambda A, s: A.prod.dim_int(s.f(2, 3), 1),
    "rand.default": lambda A, s: A.rand.default([2, 3], dtype=s.lib.float64),
    "rand_like.default": lambda A, s: A.rand_like.default(s.f(2, 3)),
    "randint.low": lambda A, s: A.randint.low(2, 9, [3, 2]),
    "randn.default": lambda A, s: A.randn.default([4]),
    "randn_like.default": lambda A, s: A.randn_like.default(s.f(2, 3), dtype=s.lib.float32),
    "randperm.default": lambda A, s: A.randperm.default(6),
    "reflection_pad1d.default": lambda A, s: A.reflection_pad1d.default(s.f(1, 2, 5), [2, 3]),
    "reflection_pad2d.default": lambda A, s: A.reflection_pad2d.default(s.f(1, 2, 4, 5), [1, 2, 2, 1]),
    "relu_.default": lambda A, s: _ip(A, s, "relu_"),
    "remainder.Tensor": lambda A, s: A.remainder.Tensor(s.f(2, 3), s.pos(3)),
    "remainder.Scalar": lambda A, s: A.remainder.Scalar(s.f(2, 3), 0.7),
    "remainder.Scalar_Tensor": lambda A, s: A.remainder.Scalar_Tensor(2.5, s.pos(2, 3)),
    "repeat.default": lambda A, s: A.repeat.default(s.f(2, 3), [2, 1, 2]),
    "repeat_interleave.Tensor": lambda A, s: A.repeat_interleave.Tensor(s.lib.tensor([2, 0, 3])),
    "repeat_interleave.self_int": lambda A, s: A.repeat_interleave.self_int(s.f(2, 3), 2, 1),
    "replication_pad1d.default": lambda A, s: A.replication_pad1d.default(s.f(1, 2, 5), [2, 3]),
    "replication_pad2d.default": lambda A, s: A.replication_pad2d.default(s.f(1, 2, 4, 5), [1, 2, 2, 1]),
    "reshape.default": lambda A, s: A.reshape.default(s.f(2, 3, 4), [-1, 6]),
    "reshape_as.default": lambda A, s: A.reshape_as.default(s.f(2, 3), s.f(3, 2, g=False)),
    "roll.default": lambda A, s: A.roll.default(s.f(2, 3, 4), [1, -1], [2, 0]),
    "rot90.default": lambda A, s: A.rot90.default(s.f(2, 3, 4), 3, [1, 2]),
    "round.default": lambda A, s: A.round.default(s.f(2, 3) * 3),
    "round.decimals": lambda A, s: A.round.decimals(s.f(2, 3), decimals=1),
    "rsub.Scalar": lambda A, s: A.rsub.Scalar(s.f(2, 3), 1.0, 2),
    "scalar_tensor.default": lambda A, s: A.scalar_tensor.default(3, dtype=s.lib.float64),
    "scaled_dot_product_attention.default": lambda A, s: A.scaled_dot_product_attention.default(
        s.f(2, 3, 4), s.f(2, 5, 4), s.f(2, 5, 2), None, 0.0, False, scale=0.7),
    "scatter.value": lambda A, s: A.scatter.value(s.f(3, 4), 1, s.lib.tensor([[0], [2], [3]]), 5.0),
    "scatter.src": lambda A, s: A.scatter.src(s.f(3, 4), 1, s.lib.tensor([[0, 1], [2, 3], [3, 0]]), s.f(3, 2)),
    "scatter.reduce": lambda A, s: A.scatter.reduce(s.f(3, 4, g=False), 1, s.lib.tensor([[0, 0], [2, 3], [3, 3]]),
                                                    s.f(3, 2, g=False), reduce="add"),
    "scatter.value_reduce": lambda A, s: A.scatter.value_reduce(s.f(3, 4, g=False), 0, s.lib.tensor([[0, 1, 2, 0]]),
                                                                2.0, reduce="multiply"),
    "scatter_add.default": lambda A, s: A.scatter_add.default(s.f(3, 4), 1, s.lib.tensor([[0, 0], [2, 3], [3, 3]]),
                                                              s.f(3, 2)),
    "scatter_reduce.two": lambda A, s: A.scatter_reduce.two(s.f(3, 4), 1, s.lib.tensor([[0, 0], [2, 3], [3, 3]]),
                                                            s.f(3, 2), "amax", include_self=False),
    "searchsorted.Tensor": lambda A, s: A.searchsorted.Tensor(s.lib.tensor([-1.0, 0.0, 1.0]), s.f(2, 3), right=True),
    "select.int": lambda A, s: A.select.int(s.f(2, 3, 4), 2, -1),
    "select_scatter.default": lambda A, s: A.select_scatter.default(s.f(2, 3), s.f(2), 1, 0),
    "sigmoid_.default": lambda A, s: _ip(A, s, "sigmoid_"),
    "silu_.default": lambda A, s: _ip(A, s, "silu_"),
    "slice.Tensor": lambda A, s: A.slice.Tensor(s.f(2, 3, 6), 2, 1, 5, 2),
    "slice_scatter.default": lambda A, s: A.slice_scatter.default(s.f(2, 6), s.f(2, 2), 1, 1, 5, 2),
    "smooth_l1_loss.default": lambda A, s: A.smooth_l1_loss.default(s.f(2, 3), s.f(2, 3), 1, 0.5),
    "softmax.int": lambda A, s: A.softmax.int(s.f(2, 3), -1),
    "sort.default": lambda A, s: A.sort.default(s.f(2, 5), 1, True),
    "sort.stable": lambda A, s: A.sort.stable(s.i(3, 2, 6), stable=True, dim=1),
    "split.Tensor": lambda A, s: A.split.Tensor(s.f(5, 2), 2),
    "split.sizes": lambda A, s: A.split.sizes(s.f(5, 2), [1, 4]),
    "split.default": lambda A, s: A.split.default(s.f(2, 5), [2, 3], 1),
    "split_with_sizes.default": lambda A, s: A.split_with_sizes.default(s.f(2, 4), [1, 3], 1),
    "squeeze.default": lambda A, s: A.squeeze.default(s.f(1, 3, 1)),
    "squeeze.dim": lambda A, s: A.squeeze.dim(s.f(1, 3, 1), 2),
    "squeeze.dims": lambda A, s: A.squeeze.dims(s.f(1, 3, 1), [0, 2]),
    "stack.default": lambda A, s: A.stack.default([s.f(2, 3), s.f(2, 3)], 1),
    "std.default": lambda A, s: A.std.default(s.f(2, 3)), "std.dim": lambda A, s: A.std.dim(s.f(2, 3), [1], False),
    "std.correction": lambda A, s: A.std.correction(s.f(2, 3), [0], correction=0, keepdim=True),
    "std_mean.correction": lambda A, s: A.std_mean.correction(s.f(2, 3), [1], correction=2),
    "sub.Scalar": lambda A, s: A.sub.Scalar(s.f(2, 3), 2, alpha=3),
    "sub_.Tensor": lambda A, s: _ip(A, s, "sub_", "Tensor", s.f(3), alpha=2),
    "sub_.Scalar": lambda A, s: _ip(A, s, "sub_", "Scalar", 0.5),
    "sum.default": lambda A, s: A.sum.default(s.f(2, 3)),
    "sum.dim_IntList": lambda A, s: A.sum.dim_IntList(s.f(2, 3, 4), [0, 2], True),
    "swapaxes.default": lambda A, s: A.swapaxes.default(s.f(2, 3, 4), 0, 2),
    "sym_numel.default": lambda A, s: A.sym_numel.default(s.f(2, 3)),
    "sym_size.int": lambda A, s: A.sym_size.int(s.f(2, 3), 1), "sym_size.default": lambda A, s: A.sym_size.default(
        s.f(2, 3)),
    "sym_stride.int": lambda A, s: A.sym_stride.int(s.f(2, 3), 0),
    "sym_stride.default": lambda A, s: A.sym_stride.default(s.f(2, 3)),
    "t.default": lambda A, s: A.t.default(s.f(2, 3)),
    "take.default": lambda A, s: A.take.default(s.f(2, 3), s.lib.tensor([[5, 0], [2, 2]])),
    "take_along_dim.default": lambda A, s: A.take_along_dim.default(s.f(2, 3), s.lib.tensor([[2], [0]]), 1),
    "tanh_.default": lambda A, s: _ip(A, s, "tanh_"),
    "tensor_split.sections": lambda A, s: A.tensor_split.sections(s.f(5, 2), 3),
    "tensordot.default": lambda A, s: A.tensordot.default(s.f(2, 3, 4), s.f(4, 3), [1, 2], [1, 0]),
    "tile.default": lambda A, s: A.tile.default(s.f(2, 3), [2, 1, 2]),
    "to.device": lambda A, s: A.to.device(s.f(2, 3), "cpu", s.lib.float32),
    "to.dtype": lambda A, s: A.to.dtype(s.f(2, 3), s.lib.float32),
    "to.other": lambda A, s: A.to.other(s.f(2, 3), s.i(2, 2)),
    "topk.default": lambda A, s: A.topk.default(s.f(2, 5), 2, 1, False),
    "trace.default": lambda A, s: A.trace.default(s.f(3, 4)),
    "transpose.int": lambda A, s: A.transpose.int(s.f(2, 3, 4), 0, 2),
    "tril.default": lambda A, s: A.tril.default(s.f(3, 4), -1), "triu.default": lambda A, s: A.triu.default(s.f(3, 4), 1),
    "unbind.int": lambda A, s: A.unbind.int(s.f(2, 3), 1),
    "unflatten.int": lambda A, s: A.unflatten.int(s.f(2, 6), 1, [3, -1]),
    "unfold.default": lambda A, s: A.unfold.default(s.f(2, 7), 1, 3, 2),
    "unsqueeze.default": lambda A, s: A.unsqueeze.default(s.f(2, 3), -1),
    "upsample_bilinear2d.vec": lambda A, s: A.upsample_bilinear2d.vec(s.f(1, 2, 3, 4), [5, 7], True, None),
    "upsample_nearest2d.default": lambda A, s: A.upsample_nearest2d.default(s.f(1, 2, 3, 4), [6, 5]),
    "upsample_nearest2d.vec": lambda A, s: A.upsample_nearest2d.vec(s.f(1, 2, 3, 4), None, [2.0, 2.0]),
    "var.default": lambda A, s: A.var.default(s.f(2, 3), False), "var.dim": lambda A, s: A.var.dim(s.f(2, 3), [1]),
    "var.correction": lambda A, s: A.var.correction(s.f(2, 3), [1], correction=0),
    "var_mean.correction": lambda A, s: A.var_mean.correction(s.f(2, 3), [0], keepdim=True),
    "view.default": lambda A, s: A.view.default(s.f(2, 3, 4), [6, 4]),
    "view.dtype": lambda A, s: A.view.dtype(s.f(2, 3, g=False), s.lib.int64),
    "view_as.default": lambda A, s: A.view_as.default(s.f(2, 3), s.f(6, g=False)),
    "vstack.default": lambda A, s: A.vstack.default([s.f(2, 3), s.f(3)]),
    "where.self": lambda A, s: A.where.self(s.b(2, 3), s.f(2, 3), s.f(3)),
    "where.ScalarOther": lambda A, s: A.where.ScalarOther(s.b(2, 3), s.f(2, 3), 0.5),
    "where.ScalarSelf": lambda A, s: A.where.ScalarSelf(s.b(2, 3), 0.5, s.f(2, 3)),
    "where.Scalar": lambda A, s: A.where.Scalar(s.b(2, 3), 1.5, -1.0),
    "where.default": lambda A, s: A.where.default(s.b(2, 3)),
    "xlogy.Tensor": lambda A, s: A.xlogy.Tensor(s.f(2, 3), s.pos(3)),
    "zero_.default": lambda A, s: _ip(A, s, "zero_"),
    "zeros.default": lambda A, s: A.zeros.default([2, 3], dtype=s.lib.int64),
    "zeros_like.default": lambda A, s: A.zeros_like.default(s.f(2, 3)),
    "gcd.default": lambda A, s: A.gcd.default(s.i(20, 2, 3), s.i(20, 3)),
    "lcm.default": lambda A, s: A.lcm.default(s.i(20, 2, 3), s.i(20, 3)),
    "bitwise_left_shift.Tensor": lambda A, s: A.bitwise_left_shift.Tensor(s.i(20, 2, 3), s.i(4, 3)),
    "bitwise_right_shift.Tensor": lambda A, s: A.bitwise_right_shift.Tensor(s.i(99, 2, 3), s.i(4, 3)),
    "vdot.default": lambda A, s: A.vdot.default(s.f(4), s.f(4)),
    "ger.default": lambda A, s: A.ger.default(s.f(3), s.f(2)),
    "dist.default": lambda A, s: A.dist.default(s.f(2, 3), s.f(3), 3),
    "cross.default": lambda A, s: A.cross.default(s.f(2, 3), s.f(2, 3), 1),
    "isin.Tensor_Tensor": lambda A, s: A.isin.Tensor_Tensor(s.i(6, 2, 3), s.lib.tensor([1, 4]), invert=True),
    "equal.default": lambda A, s: A.equal.default(s.f(2, 3, g=False), s.f(2, 3, g=False)),
    "allclose.default": lambda A, s: A.allclose.default(s.f(2, 3, g=False), s.f(2, 3, g=False), 1.0, 5.0),
    "addbmm.default": lambda A, s: A.addbmm.default(s.f(3, 2), s.f(4, 3, 5), s.f(4, 5, 2), beta=0.5, alpha=2),
    "addmv.default": lambda A, s: A.addmv.default(s.f(3), s.f(3, 4), s.f(4), alpha=-1),
    "addr.default": lambda A, s: A.addr.default(s.f(3, 2), s.f(3), s.f(2), beta=2),
    "clip.default": lambda A, s: A.clip.default(s.f(2, 3), None, 0.2),
    "threshold.default": lambda A, s: A.threshold.default(s.f(2, 3), 0.1, -2.0),
    "rms_norm.default": lambda A, s: A.rms_norm.default(s.f(2, 3, 4), [4], s.f(4), 1e-4),
    "bilinear.default": lambda A, s: A.bilinear.default(s.f(2, 3), s.f(2, 4), s.f(5, 3, 4), s.f(5)),
    "diag.default": lambda A, s: A.diag.default(s.f(3, 4), 1),
    "diagflat.default": lambda A, s: A.diagflat.default(s.f(2, 2), -1),
    "diagonal_scatter.default": lambda A, s: A.diagonal_scatter.default(s.f(3, 4), s.f(3), 1),
    "dstack.default": lambda A, s: A.dstack.default([s.f(2, 3), s.f(2, 3)]),
    "column_stack.default": lambda A, s: A.column_stack.default([s.f(3), s.f(3, 2)]),
    "row_stack.default": lambda A, s: A.row_stack.default([s.f(3), s.f(2, 3)]),
    "block_diag.default": lambda A, s: A.block_diag.default([s.f(2, 3), s.f(1, 2)]),
    "broadcast_tensors.default": lambda A, s: A.broadcast_tensors.default([s.f(2, 1), s.f(3)]),
    "cartesian_prod.default": lambda A, s: A.cartesian_prod.default([s.f(2), s.f(3)]),
    "meshgrid.indexing": lambda A, s: A.meshgrid.indexing([s.f(2), s.f(3)], indexing="xy"),
    "kthvalue.default": lambda A, s: A.kthvalue.default(s.f(2, 5), 2, 1, True),
    "mode.default": lambda A, s: A.mode.default(s.i(3, 2, 7), 1),
    "nanmean.default": lambda A, s: A.nanmean.default(s.f(2, 3), [0]),
    "nanmedian.default": lambda A, s: A.nanmedian.default(s.f(2, 3)),
    "nanmedian.dim": lambda A, s: A.nanmedian.dim(s.f(2, 5), 1),
    "quantile.scalar": lambda A, s: A.quantile.scalar(s.f(2, 5), 0.3, 1, interpolation="midpoint"),
    "histc.default": lambda A, s: A.histc.default(s.f(20, g=False), 5, -1, 1),
    "bincount.default": lambda A, s: A.bincount.default(s.i(5, 8), None, 7),
    "trapezoid.x": lambda A, s: A.trapezoid.x(s.f(2, 4), s.f(4), dim=1),
    "trapz.x": lambda A, s: A.trapz.x(s.f(4, 2), s.f(4, 1), dim=0),
    "cumulative_trapezoid.x": lambda A, s: A.cumulative_trapezoid.x(s.f(2, 4), s.f(4)),
    "frexp.Tensor": lambda A, s: A.frexp.Tensor(s.f(2, 3, g=False) * 10),
    "polygamma.default": lambda A, s: A.polygamma.default(2, s.pos(2, 3)),
    "mvlgamma.default": lambda A, s: A.mvlgamma.default(s.pos(2, 3) + 1, 2),
    "moveaxis.int": lambda A, s: A.moveaxis.int(s.f(2, 3, 4), 2, 0),
    "swapdims.default": lambda A, s: A.swapdims.default(s.f(2, 3, 4), 1, 2),
    "hsplit.int": lambda A, s: A.hsplit.int(s.f(2, 4), 2),
    "vsplit.int": lambda A, s: A.vsplit.int(s.f(4, 2), 2),
    "dsplit.int": lambda A, s: A.dsplit.int(s.f(2, 2, 6), 3),
    "concat.default": lambda A, s: A.concat.default([s.f(2, 3), s.f(1, 3)]),
    "concatenate.default": lambda A, s: A.concatenate.default([s.f(2, 3), s.f(2, 1)], 1),
    "channel_shuffle.default": lambda A, s: A.channel_shuffle.default(s.f(1, 6, 2, 2), 3),
    "hinge_embedding_loss.default": lambda A, s: A.hinge_embedding_loss.default(
        s.f(2, 3), s.lib.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=s.lib.float64), 0.5, 2),
    "margin_ranking_loss.default": lambda A, s: A.margin_ranking_loss.default(
        s.f(4), s.f(4), s.lib.tensor([1.0, -1.0, 1.0, -1.0], dtype=s.lib.float64), 0.2),
    "soft_margin_loss.default": lambda A, s: A.soft_margin_loss.default(
        s.f(2, 3), s.lib.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], dtype=s.lib.float64), 0),
    "multi_margin_loss.default": lambda A, s: A.multi_margin_loss.default(s.f(3, 4), s.lib.tensor([0, 3, 1]), 2,
                                                                          0.5, None, 2),
    "cosine_embedding_loss.default": lambda A, s: A.cosine_embedding_loss.default(
        s.f(3, 4), s.f(3, 4), s.lib.tensor([1.0, -1.0, 1.0], dtype=s.lib.float64), 0.1),
    "poisson_nll_loss.default": lambda A, s: A.poisson_nll_loss.default(s.f(2, 3), s.pos(2, 3), True, True, 1e-8, 1),
    "triplet_margin_loss.default": lambda A, s: A.triplet_margin_loss.default(s.f(3, 4), s.f(3, 4), s.f(3, 4), 1.0,
                                                                              2.0, 1e-6, True),
    "frobenius_norm.dim": lambda A, s: A.frobenius_norm.dim(s.f(2, 3, 4), [1, 2]),
    "max_pool1d_with_indices.default": lambda A, s: A.max_pool1d_with_indices.default(s.f(2, 3, 7), [3], [2]),
    "max_pool3d_with_indices.default": lambda A, s: A.max_pool3d_with_indices.default(s.f(1, 2, 4, 4, 4), [2, 2, 2]),
    "adaptive_max_pool3d.default": lambda A, s: A.adaptive_max_pool3d.default(s.f(1, 2, 4, 5, 3), [2, 2, 1]),
    "alpha_dropout.default": lambda A, s: A.alpha_dropout.default(s.f(2, 3), 0.5, False),
    "tril_indices.default": lambda A, s: A.tril_indices.default(3, 4, 1),
    "triu_indices.default": lambda A, s: A.triu_indices.default(4, 3, -1, dtype=s.lib.int32),
    "cov.default": lambda A, s: A.cov.default(s.f(3, 5), correction=0),
    "type_as.default": lambda A, s: A.type_as.default(s.f(2, 3), s.i(3, 2)),
    "numel.default": lambda A, s: A.numel.default(s.f(2, 3)),
    "size.int": lambda A, s: A.size.int(s.f(2, 3), -1), "stride.int": lambda A, s: A.stride.int(s.f(2, 3), 0),
    "element_size.default": lambda A, s: A.element_size.default(s.f(2, 3)),
    "unsafe_chunk.default": lambda A, s: A.unsafe_chunk.default(s.f(5, 2), 2),
    "unsafe_split.Tensor": lambda A, s: A.unsafe_split.Tensor(s.f(5, 2), 2),
})


def _flat(v) -> list:
    return [e for x in v for e in _flat(x)] if isinstance(v, (tuple, list)) else [v]


def test_every_table_overload_has_a_case():
    missing = sorted(q[len("aten."):] for q in aten_table.qualnames() if q[len("aten."):] not in _ALL_CASES)
    assert not missing, f"overloads of the ATen table with no case here: {missing}"


@pytest.mark.parametrize("name", sorted(_ALL_CASES))
def test_table_overload_matches_torch_value_and_gradient(name):
    torch = _torch()
    seed = sum(map(ord, name))
    sf, st = _Sample(fg, seed), _Sample(torch, seed)
    got, want = _flat(_ALL_CASES[name](fg.ops.aten, sf)), _flat(_ALL_CASES[name](torch.ops.aten, st))
    assert len(got) == len(want), name
    random = name in _RANDOM
    for a, b in zip(got, want):
        if not isinstance(b, torch.Tensor):
            assert a == b, name
            continue
        assert str(a.dtype).rpartition(".")[2] == str(b.dtype).rpartition(".")[2], (name, a.dtype, b.dtype)
        assert tuple(a.shape) == tuple(b.shape), name
        if not random:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-11, err_msg=name)
    outs = [(a, b) for a, b in zip(got, want) if isinstance(b, torch.Tensor) and b.requires_grad and not random]
    leaves = [(a, b) for a, b in zip(sf.leaves, st.leaves) if b.requires_grad]
    if not outs or not leaves or name in _GRAD_NOT_TORCH:
        return
    rng = np.random.default_rng(seed + 1)
    ws = [rng.standard_normal(tuple(b.shape)) for _, b in outs]
    loss_t = sum((b * torch.tensor(w)).sum() for (_, b), w in zip(outs, ws))
    loss_f = sum((a * fg.tensor(w)).sum() for (a, _), w in zip(outs, ws))
    try:
        gt = torch.autograd.grad(loss_t, [b for _, b in leaves], allow_unused=True)
    except RuntimeError as e:   # torch has no derivative of this operator (copy, floor_divide, heaviside, ...)
        assert "not implemented" in str(e) or "not differentiable" in str(e), (name, e)
        return
    gf = fg.autograd.grad(loss_f, [a for a, _ in leaves], allow_unused=True)
    for i, (x, y) in enumerate(zip(gf, gt)):
        if y is None:
            assert x is None or not np.any(x.numpy()), (name, i)
            continue
        np.testing.assert_allclose(x.numpy(), y.numpy(force=True), rtol=1e-8, atol=1e-10, err_msg=f"{name}: grad of input {i}")


def test_hardsigmoid_gradient_is_one_sixth():
    x = fg.tensor([-4.0, -2.5, 0.0, 1.0, 2.9, 3.5], dtype=fg.float64, requires_grad=True)
    fg.ops.aten.hardsigmoid.default(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1 / 6, 1 / 6, 1 / 6, 1 / 6, 0.0])


def test_table_overloads_exact_values_and_schema_keywords():
    """Without torch: exact values of adapters the table adds (ATen's integer reductions, pads, fill, copy), calls
    by schema argument names (an earlier argument left out takes the schema's default), and the schema text."""
    A = fg.ops.aten
    x = fg.tensor([[1.0, -2.0, 3.0], [0.0, 4.0, -1.0]], dtype=fg.float64)
    y = fg.tensor([[0.0, 0.0, 1.0], [1.0, 2.0, -1.0]], dtype=fg.float64)
    d2 = [[1.0, 4.0, 4.0], [1.0, 4.0, 0.0]]
    assert A.mse_loss.default(x, y, 0).tolist() == d2
    assert A.mse_loss.default(x, y, 2).item() == 14.0 and A.mse_loss.default(x, y).item() == 14.0 / 6
    assert A.l1_loss.default(x, y, reduction=2).item() == 8.0
    assert A.reflection_pad1d.default(fg.tensor([[[1.0, 2.0, 3.0]]]), [2, 1]).tolist() == [[[3.0, 2.0, 1.0, 2.0, 3.0,
                                                                                            2.0]]]
    assert A.replication_pad1d.default(fg.tensor([[[1.0, 2.0]]]), [1, 2]).tolist() == [[[1.0, 1.0, 2.0, 2.0, 2.0]]]
    assert A.fill.Tensor(x, fg.tensor(7.0, dtype=fg.float64)).tolist() == [[7.0] * 3] * 2
    assert A.copy.default(x, fg.tensor([1, 2, 3])).tolist() == [[1.0, 2.0, 3.0]] * 2
    assert A.add.Scalar(x, other=1.0, alpha=2).tolist() == [[3.0, 0.0, 5.0], [2.0, 6.0, 1.0]]
    assert A.sum.dim_IntList(x, dim=[1], keepdim=True).tolist() == [[2.0], [3.0]]
    assert A.slice.Tensor(fg.arange(10), end=4).tolist() == [0, 1, 2, 3]   # dim and start take their defaults
    assert A.tril_indices.default(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert A.threshold.default(x, 0.5, -9.0).tolist() == [[1.0, -9.0, 3.0], [-9.0, 4.0, -9.0]]
    with pytest.raises(TypeError, match=r"narrow\(\) is missing value for argument 'dim'"):
        A.narrow.default(x, start=0, length=1)
    assert A.add.Tensor._schema == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert A.add.Tensor.__doc__.startswith("aten::add.Tensor(")
