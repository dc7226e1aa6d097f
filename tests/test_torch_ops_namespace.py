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
