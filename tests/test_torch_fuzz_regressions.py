"""Regression tests (no reference library needed) for the mismatches tests/test_fuzz_torch.py and
tests/test_fuzz_jax.py found: torch's semantics and exception classes, written out as exact expectations."""
from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn as fnn

F = fg.nn.functional


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh", "sin", "sqrt", "log1p", "erf", "lgamma"])
def test_bfloat16_unary_stays_bfloat16(name):
    x = fg.tensor([0.5, 1.0]).to(fg.bfloat16)
    r = getattr(fg, name)(x)
    assert r.dtype == fg.bfloat16
    ref = getattr(np, name, None)
    if ref is not None:
        np.testing.assert_allclose(r.float().numpy(), ref(np.array([0.5, 1.0])), rtol=1e-2)


def test_bfloat16_reductions_activations_and_products():
    x = fg.tensor([0.5, 1.0, 2.0]).to(fg.bfloat16)
    for r in (x.mean(), x.std(), x.var(), fg.logsumexp(x, 0), fg.softmax(x, 0), F.gelu(x), F.silu(x),
              F.glu(x[:2], 0), F.normalize(x, dim=0), fg.logcumsumexp(x, 0)):
        assert r.dtype == fg.bfloat16
    np.testing.assert_allclose(x.mean().float().item(), 3.5 / 3, rtol=1e-2)
    m = fg.ones(3, 2, 2).bfloat16()
    assert (m @ m).dtype == fg.bfloat16
    a = fnp.ones((3, 2, 1, 2), dtype=fnp.bfloat16)
    assert fnp.matmul(a, fnp.ones(2, dtype=fnp.bfloat16)).dtype == fnp.bfloat16
    for f in (fnn.silu, fnn.gelu, fnn.elu, fnn.sigmoid):
        assert f(fnp.array([0.5], dtype=fnp.bfloat16)).dtype == fnp.bfloat16
    with pytest.raises(NotImplementedError, match="BFloat16"):
        x & True


def test_integer_indices_select_before_advanced_ones():
    x = fg.arange(60.).reshape(4, 3, 5)
    assert tuple(x[0, :, [0, 1]].shape) == (3, 2)  # NumPy: (2, 3)
    assert tuple(x[None, [0, 1, 2], :4, 0].shape) == (1, 3, 3)
    np.testing.assert_array_equal(x[0, :, [0, 1]].numpy(), np.arange(60.).reshape(4, 3, 5)[0][:, [0, 1]])
    y = x.clone()
    y[0, :, [0, 1]] = fg.arange(6.).reshape(3, 2)
    np.testing.assert_array_equal(y[0, :, :2].numpy(), np.arange(6.).reshape(3, 2))
    w = fg.ones(4, 3, 5, requires_grad=True)
    z = w.clone()
    z[1, :, [0, 3]] = 5.0
    (z * fg.arange(60.).reshape(4, 3, 5)).sum().backward()
    expect = np.arange(15., 30.).reshape(3, 5)
    expect[:, [0, 3]] = 0
    np.testing.assert_array_equal(w.grad[1].numpy(), expect)


def test_torch_error_classes_on_edges():
    with pytest.raises(RuntimeError, match="out of bounds"):
        fg.ones(2, 2).index_add(1, fg.tensor([-1]), fg.ones(2, 1))
    with pytest.raises(IndexError, match="index_copy_"):
        fg.ones(2, 2).index_copy(1, fg.tensor([-1]), fg.zeros(2, 1))
    with pytest.raises(RuntimeError, match="out of bounds"):
        fg.scatter_reduce(fg.ones(2), 0, fg.tensor([-1]), fg.ones(1), "sum")
    with pytest.raises(IndexError, match="non-zero size"):
        fg.kthvalue(fg.ones(3, 0), 1, 1)
    with pytest.raises(RuntimeError, match="out of range"):
        fg.kthvalue(fg.ones(3), 4, 0)
    assert fg.kthvalue(fg.tensor(2.), 1).values.item() == 2.0
    with pytest.raises(IndexError, match="non-zero size"):
        fg.mode(fg.ones(3, 0), 1)
    with pytest.raises(IndexError, match="start out of range"):
        fg.narrow(fg.ones(3), 0, -4, 1)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        fg.sum(fg.tensor(1.), (-1, 0))
    with pytest.raises(NotImplementedError, match="lt_cpu"):
        fg.lt(fg.ones(2), 1j)
    with pytest.raises(NotImplementedError, match="ComplexDouble"):
        fg.ones(2, dtype=fg.float64) <= 1j
    with pytest.raises(NotImplementedError, match="fmod_cpu"):
        fg.fmod(fg.ones(2), 1j)
    with pytest.raises(RuntimeError, match="Optional dtype"):
        fg.mean(fg.ones(2, dtype=fg.int8), dtype=fg.int32)
    with pytest.raises(NotImplementedError, match="'Byte'"):
        fg.softmax(fg.ones(2, dtype=fg.uint8), 0)
    with pytest.raises(RuntimeError, match="non-empty"):
        fg.quantile(fg.ones(2, 0, 2, dtype=fg.float64), 0.5, 0)
    with pytest.raises(NotImplementedError, match="searchsorted"):
        fg.searchsorted(fg.ones(3, dtype=fg.bool), fg.ones(3, dtype=fg.bool))
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        fg.unique(fg.ones(2, 0, 2), dim=2)
    assert fg.nansum(fg.ones(2, dtype=fg.uint8), dtype=fg.complex64).item() == 2
    with pytest.raises(NotImplementedError, match="nansum_cpu"):
        fg.nansum(fg.ones(2), dtype=fg.complex64)


def test_unique_consecutive_of_empty_returns_every_output():
    out = fg.unique_consecutive(fg.ones(0), return_inverse=True, return_counts=True)
    assert isinstance(out, tuple) and len(out) == 3 and all(o.numel() == 0 for o in out)


def test_complex_logaddexp_is_log_of_sum_of_exps():
    a = np.array([0.5 + 3j, 2 - 1j], np.complex128)
    b = np.array([1 + 2j, 3 + 4j], np.complex128)
    r = fg.logaddexp(fg.tensor(a), fg.tensor(b)).numpy()
    np.testing.assert_allclose(np.exp(r), np.exp(a) + np.exp(b), rtol=1e-12)


def test_softmax_of_empty_input():
    for f in (fnn.softmax, fnn.log_softmax):
        r = f(fnp.zeros((2, 0)))
        assert r.shape == (2, 0) and r.dtype == fnp.float32


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_losses_have_no_gradient_where_the_margin_is_met_exactly(p):
    # torch's kernels mask with z > 0 (z = margin - x[y] + x[i]); x = [0, -1, 0.5], y = 0 puts class 1 on the tie
    x = fg.tensor([[0.0, -1.0, 0.5]], dtype=fg.float64, requires_grad=True)
    F.multi_margin_loss(x, fg.tensor([0]), p=p).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-1 / 3, 0.0, 1 / 3]] if p == 1 else [[-1.0, 0.0, 1.0]])
    x = fg.tensor([[0.0, -1.0, 0.5]], dtype=fg.float64, requires_grad=True)
    F.multilabel_margin_loss(x, fg.tensor([[0, -1, 0]])).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-1 / 3, 0.0, 1 / 3]])


def test_sequence_results_are_tuples_as_torch():
    x = fg.arange(6.).reshape(2, 3)
    assert type(fg.broadcast_tensors(x, x[:1])) is tuple
    assert type(fg.atleast_1d(x, x)) is tuple and type(fg.meshgrid(x[0], x[1], indexing="ij")) is tuple
    assert [tuple(t.shape) for t in fg.broadcast_tensors(x, x[:1])] == [(2, 3), (2, 3)]


def test_setitem_with_a_0d_integer_tensor_index_casts_like_an_int_index():
    # torch applies a 0-d integer Tensor index as a select (as the int it holds): the value is copied with a cast,
    # where an index array needs the value's dtype to match
    x = fg.zeros(2, 3, dtype=fg.int64)
    x[fg.tensor(1)] = fg.tensor(3.5)
    x[0, fg.tensor(2)] = fg.tensor(2.5)
    x[fg.tensor(0), fg.tensor(0, dtype=fg.int32)] = fg.tensor(-1.5, dtype=fg.float64)
    np.testing.assert_array_equal(x.numpy(), [[-1, 0, 2], [3, 3, 3]])
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
        x[fg.tensor([1])] = fg.tensor(3.5)


def test_nanmedian_along_an_empty_dim_raises():
    for shape, d in (((0, 3), 0), ((2, 0, 3), 1), ((0, 0), 1)):
        with pytest.raises(IndexError, match=f"median\\(\\): Expected reduction dim {d} to have non-zero size"):
            fg.nanmedian(fg.zeros(shape), d)


def test_nanmean_checks_the_input_dtype_first_and_takes_out():
    with pytest.raises(RuntimeError, match="nanmean\\(\\): expected input to have floating point or complex dtype "
                                           "but got Long"):
        fg.nanmean(fg.ones(3, dtype=fg.int64), dtype=fg.float64)
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point or complex dtype"):
        fg.nanmean(fg.ones(3), dtype=fg.int64)
    o = fg.empty((), dtype=fg.float64)
    r = fg.nanmean(fg.tensor([1.0, float("nan"), 2.0]), 0, out=o)
    assert r is o and o.item() == 1.5


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_cdist_second_derivative(p):
    # the broadcast difference of x1's and x2's rows is recorded with its broadcasting, so its gradient keeps
    # each input's shape to every order (torch has no double backward for cdist: the explicit formula is the
    # reference)
    torch = pytest.importorskip("torch")
    a = np.array([[0.3, 0.1], [-0.5, 0.7], [0.2, 0.2]])
    b = np.array([[0.1, 0.4], [-0.2, 0.9]])
    w = np.arange(6.0).reshape(3, 2)

    def run(L, f):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        g = L.autograd.grad((f(L, x, y) * L.tensor(w)).sum(), (x, y), create_graph=True)
        return g + L.autograd.grad((g[0] ** 2).sum() + g[1].sum() ** 2, (x, y))
    ref = run(torch, lambda L, x, y: ((x[:, None] - y[None]).abs() ** p).sum(-1) ** (1 / p))
    got = run(fg, lambda L, x, y: L.cdist(x, y, p=p))
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_add_sub_alpha_is_checked_against_the_result_dtype():
    i, f, b = fg.tensor([1, 2]), fg.tensor([1.0, 2.0]), fg.tensor([True, False])
    for op in (fg.add, fg.sub):
        with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating"):
            op(i, i, alpha=1.0)
        with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
            op(f, f, alpha=True)
        with pytest.raises(RuntimeError, match="For non-complex input tensors, argument alpha must not be a complex"):
            op(f, f, alpha=1j)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        f.clone().add_(f, alpha=True)
    with pytest.raises(RuntimeError, match="argument alpha must not be a complex number"):
        f.clone().sub_(f, alpha=1j)
    np.testing.assert_array_equal(fg.add(i, i, alpha=3).numpy(), [4, 8])
    np.testing.assert_allclose(fg.add(i, 1.5, alpha=2).numpy(), [4.0, 5.0])  # (a float result: a float scalar)
    r = fg.add(b, b, alpha=2)  # a bool result stays bool: a or (b and alpha)
    assert r.dtype == fg.bool and r.tolist() == [True, False]
    assert fg.add(b, b, alpha=False).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported. Use the `\\^`"):
        fg.sub(b, b)
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported. If you are trying to invert"):
        fg.sub(b, i)


def _cpairs(t):
    return [(z.real, z.imag) for z in t.tolist()]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_add_sub_multiply_other_by_alpha_as_torchs_kernel(dtype):
    """torch computes a + alpha * b (sub: a + (-alpha) * b) with b times alpha as complex numbers even for
    alpha=1, so an infinite part of b gives a nan part: (1+0j) + (inf+0j) is inf+nanj."""
    inf, dt = float("inf"), getattr(fg, dtype)
    a, b = fg.tensor([1 + 0j, 1 + 0j, 2 + 1j], dtype=dt), fg.tensor([complex(inf, 0), complex(0, inf), 1 + 1j], dtype=dt)
    for r in (fg.add(a, b), a + b, a.clone().add_(b), fg.add(a, b, alpha=1)):
        got = _cpairs(r)
        assert got[0][0] == inf and np.isnan(got[0][1]) and np.isnan(got[1][0]) and got[1][1] == inf
        assert got[2] == (3.0, 2.0)
    for r in (fg.sub(a, b), a - b, a.clone().sub_(b)):
        got = _cpairs(r)
        assert got[0][0] == -inf and np.isnan(got[0][1]) and np.isnan(got[1][0]) and got[1][1] == -inf
        assert got[2] == (1.0, 0.0)
    for r in (a + inf, a.clone().add_(inf), fg.add(a, inf)):  # (a real scalar is made complex, then scaled)
        assert r.tolist()[0].real == inf and np.isnan(r.tolist()[0].imag)
    assert _cpairs(fg.tensor([inf]) + fg.tensor([1j]))[0] == (inf, 1.0)  # (0+1j) * 1 is exact


def test_complex_add_sub_specials_match_torch():
    torch = pytest.importorskip("torch")
    parts = [0.0, -0.0, 1.0, -2.5, float("inf"), float("-inf"), float("nan")]
    vals = [complex(r, i) for r in parts for i in parts]
    a = [p for p in vals for _ in vals]
    b = [q for _ in vals for q in vals]
    for dtype in ("complex64", "complex128"):
        for form in ("add", "sub", "op+", "op-", "add_", "sub_", "alpha", "scalar"):
            def run(L):
                x, y = L.tensor(a, dtype=getattr(L, dtype)), L.tensor(b, dtype=getattr(L, dtype))
                return {"add": lambda: L.add(x, y), "sub": lambda: L.sub(x, y), "op+": lambda: x + y,
                        "op-": lambda: x - y, "add_": lambda: x.clone().add_(y), "sub_": lambda: x.clone().sub_(y),
                        "alpha": lambda: L.sub(x, y, alpha=-2), "scalar": lambda: x + float("-inf")}[form]()
            want, got = run(torch).numpy(), run(fg).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{form} {dtype}")


def test_round_with_decimals_has_no_integer_kernels():
    x = fg.tensor([3, 15])
    assert x.round().tolist() == [3, 15] and fg.round(x).tolist() == [3, 15]
    with pytest.raises(NotImplementedError, match='"round_vml_cpu" not implemented for \'Long\''):
        fg.round(x, decimals=0)
    with pytest.raises(NotImplementedError, match='"round_cpu" not implemented for \'Byte\''):
        x.to(fg.uint8).round(decimals=-1)
    with pytest.raises(NotImplementedError, match='"round_vml_cpu" not implemented for \'Bool\''):
        x.bool().round()
    np.testing.assert_allclose(fg.round(fg.tensor([1234.5, 15.0, 0.125]), decimals=-1).numpy(), [1230.0, 20.0, 0.0])


@pytest.mark.parametrize("dtype,decimals,values,want", [
    # half types round in float32 (torch's opmath): 1000.7 * 100 would overflow float16, and bfloat16's
    # -2.34375 * 10 would round to -23.5 (then to -24) before nearbyint
    ("float16", 2, [1000.7, 1.25, -2.3507], [1000.5, 1.25, -2.349609375]),
    ("bfloat16", 1, [-2.3507, 1.095, 8.44], [-2.296875, 1.1015625, 8.375]),
    # negative decimals divide first: nearbyint(x / 100) * 100
    ("bfloat16", -2, [250.0, 351.0, -149.0], [200.0, 400.0, -100.0]),
    ("float16", -1, [65000.0, 45.0, -0.0], [64992.0, 40.0, -0.0]),  # (65000 is 64992 in float16)
])
def test_round_decimals_of_half_types(dtype, decimals, values, want):
    r = fg.round(fg.tensor(values).to(getattr(fg, dtype)), decimals=decimals)
    assert r.dtype == getattr(fg, dtype)
    np.testing.assert_array_equal(r.float().numpy(), want)
    torch = pytest.importorskip("torch")
    t = torch.round(torch.tensor(values).to(getattr(torch, dtype)), decimals=decimals)
    np.testing.assert_array_equal(t.float().numpy(), want)


def test_einsum_sublist_form():
    a, b = fg.arange(6.).reshape(2, 3), fg.arange(12.).reshape(3, 4)
    np.testing.assert_allclose(fg.einsum(a, [0, 1], b, [1, 2]).numpy(), a.numpy() @ b.numpy())
    np.testing.assert_allclose(fg.einsum(a, [0, 1], b, [1, 2], [2, 0]).numpy(), (a.numpy() @ b.numpy()).T)
    np.testing.assert_allclose(fg.einsum(a, [Ellipsis, 51], [Ellipsis]).numpy(), a.numpy().sum(-1))
    with pytest.raises(ValueError, match="not within the valid range \\[0, 52\\)"):
        fg.einsum(a, [0, 52])


def test_python_numbers_out_of_an_integer_dtype_range():
    # c10's checked_convert: RuntimeError naming the type (torch.tensor: int8; fill_ and x[i] = v: int8_t); an
    # unsigned dtype takes an int's negatives down to -max, which wrap; an int beyond 64 bits is a ValueError
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8 without overflow"):
        fg.tensor([1, 300], dtype=fg.int8)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        fg.tensor([2 ** 63], dtype=fg.int64)
    assert fg.tensor([[1, -255]], dtype=fg.uint8).tolist() == [[1, 1]]
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        fg.zeros(2, dtype=fg.int8).fill_(300)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        fg.zeros(2, dtype=fg.int8).fill_(-200.0)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        fg.zeros(2, dtype=fg.int64).fill_(2 ** 63)
    assert fg.zeros(2, dtype=fg.uint8).fill_(-1).tolist() == [255, 255]
    x = fg.zeros(3, dtype=fg.uint8)
    x[0] = -1
    x[1] = 7.9
    assert x.tolist() == [255, 7, 0]
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        x[2] = 300
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        x[x == 0] = 1e10
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        x[0] = 2 ** 64


def test_bfloat16_shifts_and_bool_ldexp_exponents_have_no_kernels():
    with pytest.raises(NotImplementedError, match='"lshift_cpu" not implemented for \'BFloat16\''):
        fg.ones(3, dtype=fg.bfloat16) << 1
    with pytest.raises(NotImplementedError, match='"rshift_cpu" not implemented for \'BFloat16\''):
        fg.bitwise_right_shift(fg.ones(3, dtype=fg.int64), fg.ones(3, dtype=fg.bfloat16))
    with pytest.raises(NotImplementedError, match='"ldexp_cpu_exp" not implemented for \'Bool\''):
        fg.ldexp(fg.ones(3), fg.ones(3, dtype=fg.bool))
    np.testing.assert_allclose(fg.ldexp(fg.ones(3, dtype=fg.bool), fg.tensor([1.0, 2.0, 3.0])).numpy(), [2, 4, 8])
    # (an integer input multiplies: a bool exponent is fine there)
    assert fg.ldexp(fg.tensor([1, 2, 3], dtype=fg.int32), fg.tensor([False, True, False])).tolist() == [1.0, 4.0, 3.0]


def test_single_dim_reductions_refuse_dim_tuples_and_aminmax_names_itself():
    x = fg.arange(6.).reshape(2, 3)
    for f, name in ((lambda: fg.aminmax(x, dim=(0, 1)), "aminmax"), (lambda: fg.argmax(x, dim=(0,)), "argmax"),
                    (lambda: fg.argmin(x.bool(), dim=[0]), "argmin")):
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'dim' must be int, not"):
            f()
    with pytest.raises(IndexError, match="aminmax: Expected reduction dim 0 to have non-zero size"):
        fg.aminmax(fg.zeros(0, 3), dim=0)
    with pytest.raises(RuntimeError, match="aminmax\\(\\): cannot compute aminmax over an empty dimension"):
        fg.aminmax(fg.zeros(0))


def test_return_types_print_as_torch_structseqs():
    r = fg.max(fg.tensor([[1.0, 3.0]]), 1)
    assert repr(r) == "torch.return_types.max(\nvalues=tensor([3.]),\nindices=tensor([1]))"
    assert repr(fg.aminmax(fg.tensor([2.0]))) == "torch.return_types.aminmax(\nmin=tensor(2.),\nmax=tensor(2.))"
    assert isinstance(r, tuple) and r.values is r[0]


def test_out_arguments_of_reductions_and_selections_are_written():
    x = fg.tensor([[3.0, 1.0, float("nan")], [2.0, 5.0, 4.0]], dtype=fg.float64)
    for f, want in ((lambda o: fg.max(x.nan_to_num(), 1, out=o), [[3.0, 5.0], [0, 1]]),
                    (lambda o: fg.min(x.nan_to_num(), 1, out=o), [[0.0, 2.0], [2, 0]]),
                    (lambda o: fg.median(x.nan_to_num(), 1, out=o), [[1.0, 4.0], [1, 2]]),
                    (lambda o: fg.nanmedian(x, 1, out=o), [[1.0, 4.0], [1, 2]]),
                    (lambda o: fg.mode(x.nan_to_num(), 1, out=o), [[0.0, 2.0], [2, 0]])):
        v, i = fg.zeros(0, dtype=fg.float64), fg.zeros(0, dtype=fg.int64)
        r = f((v, i))
        assert r[0] is v and r[1] is i and [v.tolist(), i.tolist()] == want
    lo, hi = fg.zeros(0, dtype=fg.float64), fg.zeros(0, dtype=fg.float64)
    fg.aminmax(x.nan_to_num(), dim=1, out=(lo, hi))
    assert lo.tolist() == [0.0, 2.0] and hi.tolist() == [3.0, 5.0]
    with pytest.raises(RuntimeError):  # (the values' dtype must be the input's)
        fg.nanmedian(x, 1, out=(fg.zeros(0), fg.zeros(0, dtype=fg.int64)))
    o = fg.zeros(2, dtype=fg.float64)
    assert fg.nansum(x, 1, out=o) is o and o.tolist() == [4.0, 11.0]
    d = fg.zeros(2, 2, dtype=fg.float64)
    assert fg.diff(x.nan_to_num(), out=d) is d and d.tolist() == [[-2.0, -1.0], [3.0, -1.0]]


def test_linalg_out_arguments_are_written():
    A = fg.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=fg.float64)
    for f, want in ((lambda o: fg.linalg.det(A, out=o), 5.0), (lambda o: fg.linalg.matrix_power(A, 2, out=o),
                                                              [[5.0, 5.0], [5.0, 10.0]]),
                    (lambda o: fg.linalg.cross(fg.ones(3, dtype=fg.float64), fg.arange(3.0, dtype=fg.float64), out=o),
                     [1.0, -2.0, 1.0]), (lambda o: fg.linalg.vector_norm(fg.tensor([3.0, 4.0], dtype=fg.float64),
                                                                         out=o), 5.0),
                    (lambda o: fg.linalg.solve(A, fg.tensor([3.0, 4.0], dtype=fg.float64), out=o), [1.0, 1.0])):
        o = fg.empty(0, dtype=fg.float64)
        assert f(o) is o
        np.testing.assert_allclose(o.numpy(), want, rtol=1e-12)
    with pytest.raises(RuntimeError):  # (out's dtype must be the result's)
        fg.linalg.inv(A, out=fg.empty(0))
    m, e = fg.empty(0), fg.empty(0, dtype=fg.int32)
    fg.frexp(fg.tensor([8.0, 0.75]), out=(m, e))
    assert m.tolist() == [0.5, 0.75] and e.tolist() == [4, 0]


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype,want", [
    # torch fills NaN through the C++ cast: x86's integer indefinite for 32/64 bits, its low bits for narrower
    ("int64", -2 ** 63), ("int32", -2 ** 31), ("int16", 0), ("int8", 0), ("uint8", 0), ("bool", True),
    ("float16", float("nan")), ("float64", float("nan"))])
def test_median_of_no_entries_is_nan_cast_to_the_dtype(name, dtype, want):
    for shape in ((0,), (2, 0)):
        r = getattr(fg, name)(fg.zeros(shape, dtype=getattr(fg, dtype)))
        assert r.dtype == getattr(fg, dtype) and r.shape == ()
        np.testing.assert_array_equal(r.item(), want)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(getattr(torch, name)(torch.zeros(0, dtype=getattr(torch, dtype))).item(), want)


def test_nanmedian_of_bool_raises_median_cpu_unless_the_dim_is_empty():
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        fg.nanmedian(fg.tensor([True, False]))
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 1 to have non-zero size"):
        fg.nanmedian(fg.zeros(2, 0, dtype=fg.bool), 1)


def test_nansum_into_an_integer_dtype_counts_nan_as_zero():
    x = fg.tensor([[1.5, float("nan"), 1.5, -0.7], [2.5, -3.5, float("nan"), 4.0]])
    assert fg.nansum(x, dtype=fg.int64).item() == 5  # truncated entries, NaN as 0 (torch: 5)
    r = fg.nansum(x, 1, dtype=fg.int32)
    assert r.dtype == fg.int32 and r.tolist() == [2, 3]
    assert fg.nansum(x, 0, dtype=fg.bool).tolist() == [True, True, True, True]
    torch = pytest.importorskip("torch")
    t = torch.tensor(x.numpy())
    assert torch.nansum(t, dtype=torch.int64).item() == 5 and torch.nansum(t, 1, dtype=torch.int32).tolist() == [2, 3]


def test_nanmean_into_a_complex_dtype_raises_as_nansum():
    for dt, name in ((fg.complex64, "ComplexFloat"), (fg.complex128, "ComplexDouble")):
        with pytest.raises(NotImplementedError, match=f"\"nansum_cpu\" not implemented for '{name}'"):
            fg.nanmean(fg.tensor([1.0, float("nan")]), dtype=dt)


def test_bfloat16_to_integer_wraps_as_float32_does():
    # torch converts through float: -3.5 -> 253 in uint8, 300 -> 44 in int8 (ml_dtypes' own cast gave 0)
    x = fg.tensor([-3.5, -1.0, 300.0, -200.0]).to(fg.bfloat16)
    assert x.to(fg.uint8).tolist() == [253, 255, 44, 56]
    assert x.to(fg.int8).tolist() == [-3, -1, 44, 56]
    assert x.to(fg.int16).tolist() == [-3, -1, 300, -200]
    torch = pytest.importorskip("torch")
    t = torch.tensor([-3.5, -1.0, 300.0, -200.0]).to(torch.bfloat16)
    assert t.to(torch.uint8).tolist() == [253, 255, 44, 56] and t.to(torch.int8).tolist() == [-3, -1, 44, 56]


@pytest.mark.parametrize("call", [lambda L, x: L.remainder(x, 0), lambda L, x: L.fmod(x, 0), lambda L, x: x % 0,
                                  lambda L, x: x // 0, lambda L, x: L.div(x, 0, rounding_mode="trunc")])
def test_integer_division_of_no_entries_by_a_zero_scalar_divides_nothing(call):
    r = call(fg, fg.zeros(2, 0, dtype=fg.int32))
    assert r.shape == (2, 0) and r.dtype == fg.int32
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        call(fg, fg.ones(1, dtype=fg.int32))
    torch = pytest.importorskip("torch")
    assert call(torch, torch.zeros(2, 0, dtype=torch.int32)).shape == (2, 0)


@pytest.mark.parametrize("name,a,b,dt", [
    ("igamma", "int8", "int32", "Int"), ("igammac", "int64", "int64", "Long"), ("igamma", "bool", "int8", "Char"),
    ("igamma", "float32", "complex64", "ComplexFloat"), ("logaddexp2", "int64", "complex64", "ComplexFloat"),
    ("logaddexp2", "complex128", "float32", "ComplexDouble")])
def test_binary_kernels_without_integer_or_complex_dtypes(name, a, b, dt):
    # torch promotes first, then finds no kernel for the promoted dtype
    x, y = fg.tensor([1, 2]).to(getattr(fg, a)), fg.tensor([1, 3]).to(getattr(fg, b))
    for call in (getattr(fg, name), getattr(fg.Tensor, name)):
        with pytest.raises(NotImplementedError, match=f"\"{name}_cpu\" not implemented for '{dt}'"):
            call(x, y)
    assert fg.igamma(fg.tensor([1, 2]), fg.tensor([0.5, 1.0])).dtype == fg.float32  # an integer a is fine


def test_unique_consecutive_along_a_dim():
    # runs of equal slices along dim (NaN never equal); the inverse has one entry per slice (dim was ignored)
    x = fg.tensor([[1.0, 1.0, 2.0, 2.0, float("nan"), float("nan")], [0.0, 0.0, 0.0, 3.0, 1.0, 1.0]])
    v, inv, cnt = fg.unique_consecutive(x, return_inverse=True, return_counts=True, dim=1)
    np.testing.assert_array_equal(v.numpy(), x.numpy()[:, [0, 2, 3, 4, 5]])
    assert inv.tolist() == [0, 0, 1, 2, 3, 4] and cnt.tolist() == [2, 1, 1, 1, 1]
    assert x.unique_consecutive(dim=0).shape == (2, 6)
    assert fg.unique_consecutive(fg.zeros(0, 3), dim=0, return_counts=True)[1].shape == (0,)
    with pytest.raises(IndexError):
        fg.unique_consecutive(fg.tensor(1.0), dim=0)
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
        fg.unique_consecutive(fg.zeros(2, 0), dim=0)
    torch = pytest.importorskip("torch")
    t = torch.tensor(x.numpy())
    want = torch.unique_consecutive(t, return_inverse=True, return_counts=True, dim=1)
    np.testing.assert_array_equal(v.numpy(), want[0].numpy())
    assert inv.tolist() == want[1].tolist() and cnt.tolist() == want[2].tolist()


def test_unique_inverse_of_a_0d_tensor_is_0d():
    values, inverse, counts = fg.unique(fg.tensor(-2), return_inverse=True, return_counts=True)
    assert values.shape == (1,) and inverse.shape == () and inverse.item() == 0 and counts.tolist() == [1]
    torch = pytest.importorskip("torch")
    assert torch.unique(torch.tensor(-2), return_inverse=True)[1].shape == ()


_POW_EXPONENTS = [3, 3.0, -2, -2.0, 2, -1, 5, 0.5, -0.5, 1.5, 0, 1]


@pytest.mark.parametrize("e, dtype", [(e, d) for d in ("float32", "float64", "complex64") for e in _POW_EXPONENTS])
def test_pow_by_a_number_multiplies_as_torchs_kernel(e, dtype):
    """torch's pow(x, e) computes e in {3, -2} as x * x * x and 1 / (x * x) (two roundings; e = 2, -1 also by
    products) and other exponents with pow's one rounding; complex ones with C's cpow, sqrt at 0.5."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(300) * 3).astype(dtype)
    if dtype == "complex64":
        x = x + 1j * (rng.standard_normal(300)).astype(np.float32)
    t = fg.from_numpy(x)
    if e in (3, -2) and dtype != "complex64":  # an expectation written out (NumPy's products round as torch's)
        want = (x * x) * x if e == 3 else 1 / (x * x)
        np.testing.assert_array_equal((t ** e).numpy(), want)
    torch = pytest.importorskip("torch")
    ref = (torch.from_numpy(x) ** e).numpy()
    got = (t ** e).numpy()
    assert got.dtype == ref.dtype
    if e in (3, 3.0, -2, -2.0, 2, -1, -0.5, 0, 1) and dtype != "complex64" or \
            e in (5, 1.5, 0.5) and dtype == "complex64":  # (torch's complex pow: cpow, exp(e * log(x)))
        np.testing.assert_array_equal(got, ref)
    else:  # (torch's vectorised pow, sqrt and complex products differ from NumPy's by an ulp or so)
        np.testing.assert_allclose(got, ref, rtol=1e-6 if x.real.dtype == np.float32 else 1e-15)



def test_index_select_and_index_add_out_of_range_errors_follow_torchs_kernels():
    """index_select: torch's dim-1 kernel raises RuntimeError (INDICES ... id=), other dims IndexError; index_add:
    alpha=1 on the first or last dim of a tensor of 2+ dims takes scatter_add's RuntimeError (the first bad index
    named), a middle dim, alpha != 1 or a vector the IndexError of its loop."""
    x = fg.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="INDICES element is out of DATA bounds, id=-1 axis_dim=3"):
        x.index_select(1, fg.tensor([0, -1, 5]))
    for d in (0, 2):
        with pytest.raises(IndexError, match="index out of range in self"):
            x.index_select(d, fg.tensor([-1]))
    src = {0: fg.ones(2, 3, 4), 1: fg.ones(2, 2, 4), 2: fg.ones(2, 3, 2)}
    for d, n in ((0, 2), (2, 4)):
        with pytest.raises(RuntimeError, match=f"index 5 is out of bounds for dimension {d} with size {n}"):
            x.index_add(d, fg.tensor([5, -1]), src[d][:, :, :2] if d == 2 else src[d])
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_add(1, fg.tensor([0, 3]), src[1])
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_add(0, fg.tensor([0, -1]), src[0], alpha=2)
    with pytest.raises(IndexError, match="index out of range in self"):
        fg.zeros(3).index_add(0, fg.tensor([-1]), fg.ones(1))
    torch = pytest.importorskip("torch")
    for shape in ((3,), (2, 3), (2, 3, 4), (1, 2, 3, 2)):
        for d in range(len(shape)):
            for alpha in (1, 2):
                for bad in ([0, -1], [shape[d], -1]):
                    errs = []
                    for L in (torch, fg):
                        t = L.zeros(*shape)
                        s = L.ones(*[len(bad) if i == d else k for i, k in enumerate(shape)])
                        for f in (lambda: t.index_add(d, L.tensor(bad), s, alpha=alpha),
                                  lambda: t.index_select(d, L.tensor(bad))):
                            with pytest.raises((IndexError, RuntimeError)) as e:
                                f()
                            errs.append((e.type, str(e.value)))
                    assert errs[:2] == errs[2:], (shape, d, alpha, bad)


def test_shape_op_argument_checks_match_torch():
    """squeeze's repeated dims, flatten's dims on a 0-d tensor, roll's shifts/dims pairing, repeat_interleave's
    negative/float/2-d repeats and output_size, raised as torch raises them."""
    x = fg.zeros(3, 1, 2)
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        x.squeeze((1, -2))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        fg.tensor(1.0).squeeze((0, -1))
    with pytest.raises(IndexError, match="expected to be in range of \\[-1, 0\\], but got 1"):
        fg.tensor(1.0).squeeze(1)
    with pytest.raises(IndexError, match="expected to be in range of \\[-1, 0\\], but got 1"):
        fg.flatten(fg.tensor(1.0), 1)
    assert fg.tensor(2.0).squeeze((0,)).shape == () and fg.flatten(fg.tensor(2.0), -1).shape == (1,)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:1"):
        x.roll((1, 2), 0)
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 2, dims:0"):
        x.roll((1, 2))
    with pytest.raises(RuntimeError, match="`shifts` required"):
        x.roll((), ())
    np.testing.assert_array_equal(fg.arange(4).roll((1,)).numpy(), [3, 0, 1, 2])
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        x.repeat_interleave(fg.tensor([1, -1, 1]), 0)
    with pytest.raises(NotImplementedError, match="\"repeat_interleave_cpu\" not implemented for 'Float'"):
        x.repeat_interleave(fg.tensor([1.0]), 0)
    with pytest.raises(RuntimeError, match="repeats must be 0-dim or 1-dim tensor"):
        x.repeat_interleave(fg.tensor([[1]]), 0)
    with pytest.raises(RuntimeError, match="repeat_interleave only accept 1D vector as repeat"):
        fg.repeat_interleave(fg.tensor([[1]]))
    with pytest.raises(RuntimeError, match="Invalid output_size, expected 6 but got 5"):
        x.repeat_interleave(2, 0, output_size=5)
    with pytest.raises(RuntimeError, match="allocated size does not match required size"):
        x.repeat_interleave(fg.tensor([1, 2, 0]), 0, output_size=4)
    with pytest.raises(IndexError, match="but got 1\\)"):
        fg.tensor(1.0).repeat_interleave(2, 0)
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        fg.tensor(1.0).repeat_interleave(fg.tensor([2]), 0)
    assert x.repeat_interleave(fg.tensor([1, 2, 0]), 0, output_size=3).shape == (3, 1, 2)
    e = fg.zeros(3, 3, 0)  # (no elements: the sizes are still checked against the dim, as torch)
    with pytest.raises(RuntimeError, match="Provided sizes \\[2, -1\\] don't multiply up to the size of dim 0 \\(3\\)"):
        e.unflatten(0, (2, -1))
    with pytest.raises(RuntimeError, match="sizes must be non-empty"):
        e.unflatten(0, ())
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        fg.zeros(3, 4).unflatten(1, (-1, -1))
    assert fg.zeros(0, 3).unflatten(0, (5, -1)).shape == (5, 0, 3)


def test_tensor_split_takes_each_pair_of_indices_as_a_slice():
    """torch's tensor_split cuts x[a:b] for consecutive indices with at::slice's rules (negative ones wrap,
    the slices may overlap, indices past the end clamp); a 0-d long tensor is a number of sections."""
    x = fg.arange(5.0)
    got = [p.tolist() for p in x.tensor_split([-1, -1, 0])]
    assert got == [[0.0, 1.0, 2.0, 3.0], [], [], [0.0, 1.0, 2.0, 3.0, 4.0]]
    assert [p.tolist() for p in x.tensor_split(fg.tensor([2, 7]))] == [[0.0, 1.0], [2.0, 3.0, 4.0], []]
    assert [p.tolist() for p in x.tensor_split(fg.tensor(2))] == [[0.0, 1.0, 2.0], [3.0, 4.0]]
    assert [p.tolist() for p in x.tensor_split([3, 1])] == [[0.0, 1.0, 2.0], [], [1.0, 2.0, 3.0, 4.0]]
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got 0"):
        x.tensor_split(0)
    with pytest.raises(RuntimeError, match="to have dtype of long, but got Float"):
        x.tensor_split(fg.tensor([1.0]))
    with pytest.raises(RuntimeError, match="zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"):
        x.tensor_split(fg.tensor([[1]]))
    torch = pytest.importorskip("torch")
    for idx in ([-1, -1, 0], [2, 7], [4, -4, 9], [-9, 3], [0], []):
        for L in (torch, fg):
            x = L.arange(20.0).reshape(5, 4).requires_grad_()
            parts = x.tensor_split(idx)
            g, = L.autograd.grad(sum((p * (i + 1)).sum() for i, p in enumerate(parts)), x)
            if L is torch:
                want = ([p.tolist() for p in parts], g.tolist(), [type(p.grad_fn).__name__ for p in parts])
        assert ([p.tolist() for p in parts], g.tolist(), [type(p.grad_fn).__name__ for p in parts]) == want


def test_fill_values_take_c10s_checked_conversion():
    """full/full_like/new_full/fill_/masked_fill/index_fill convert their number as c10's checked_convert: a
    complex with an imaginary part into a real dtype, NaN or an out-of-range value into an integer one, a finite
    value beyond float32's range are RuntimeErrors naming the C type; NumPy scalars are read as Python numbers
    (a NumPy float gives the default float dtype)."""
    i, f = fg.tensor([1, 2]), fg.tensor([1.0, 2.0])
    m = fg.tensor([True, False])
    for call, ctype in ((lambda: fg.full_like(i, 1j), "int64_t"), (lambda: fg.full_like(f, 1j), "float"),
                        (lambda: f.new_full((2,), 1j), "float"), (lambda: i.clone().fill_(1j), "int64_t"),
                        (lambda: f.clone().fill_(1e39), "float"), (lambda: fg.full_like(i, float("nan")), "int64_t"),
                        (lambda: i.clone().fill_(float("nan")), "int64_t"),
                        (lambda: i.masked_fill(m, float("nan")), "int64_t"), (lambda: i.masked_fill(m, 1j), "int64_t"),
                        (lambda: f.masked_fill(m, 1e39), "float"),
                        (lambda: i.index_fill(0, fg.tensor([0]), float("inf")), "int64_t"),
                        (lambda: fg.full((2,), 300, dtype=fg.int8), "int8_t"),
                        (lambda: fg.full((2,), 2 ** 40, dtype=fg.int32), "int"),
                        (lambda: fg.full((1,), 1j, dtype=fg.float16), "double"),
                        (lambda: fg.full((1,), 1e39, dtype=fg.complex64), "c10::complex<float>")):
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {re.escape(ctype)} without overflow"):
            call()
    assert fg.full_like(fg.tensor([1], dtype=fg.uint8), -1).tolist() == [255]  # (wraps, as torch)
    assert fg.full_like(f, 2 + 0j).tolist() == [2.0, 2.0] and fg.full((1,), 1e39, dtype=fg.float16).tolist() == [float("inf")]
    for value, dt in ((np.float64(2.5), fg.float32), (np.bool_(True), fg.float32), (np.int32(3), fg.int64),
                      (True, fg.bool), (2, fg.int64), (1j, fg.complex64)):
        assert fg.full((2,), value).dtype == dt, value


def test_arange_linspace_logspace_integer_dtypes_as_torchs_kernels():
    """An integer dtype truncates arange's start and step (a fractional step may become 0: int64 then raises
    ValueError, other dtypes repeat start) and linspace/logspace's start and end before spacing them; steps=1
    fills start (logspace: base ** start); the dtype is checked before the range."""
    assert fg.arange(-2.0, 2.5, 0.5, dtype=fg.int32).tolist() == [-2] * 9
    assert fg.arange(0, 5, 1.5, dtype=fg.int64).tolist() == [0, 1, 2, 3, 4]
    assert fg.arange(-3.7, 5, 2.2, dtype=fg.int64).tolist() == [-3, -1, 1, 3]
    assert fg.arange(0.5, 3.7, 1, dtype=fg.int32).tolist() == [0, 1, 2, 3]
    assert fg.arange(0.5, 3.7, 1, dtype=fg.int64).tolist() == [0, 1, 2]
    assert fg.arange(250, 260, 3, dtype=fg.uint8).tolist() == [250, 253, 0, 3]
    with pytest.raises(ValueError, match="step must be nonzero"):
        fg.arange(0, -5, -0.7, dtype=fg.int64)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        fg.arange(5, 0, 1)
    with pytest.raises(NotImplementedError, match="\"arange_cpu\" not implemented for 'ComplexFloat'"):
        fg.arange(5, 0, 1, dtype=fg.complex64)
    assert fg.linspace(2.5, 1.0, 5, dtype=fg.int64).tolist() == [2, 1, 1, 1, 1]
    assert fg.linspace(2.7, 10, 1, dtype=fg.int64).tolist() == [2]
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        fg.linspace(0, 300, 4, dtype=fg.uint8)
    assert fg.linspace(-3.0, 300, 0, dtype=fg.uint8).tolist() == []
    assert fg.logspace(11.75, 3.0, 2, dtype=fg.int64).tolist() == [10 ** 11, 1000]
    assert fg.logspace(0.5, 2.0, 4, dtype=fg.int64).tolist() == [1, 4, 21, 100]
    assert fg.logspace(0.5, 3.5, 4, base=2, dtype=fg.int64).tolist() == [1, 2, 4, 8]
    assert fg.logspace(2.7, 10, 1, dtype=fg.int64).tolist() == [501]
    torch = pytest.importorskip("torch")
    for args, kw in (((-9.5, -6, 7), {"base": -2.0, "dtype": "complex64"}), ((0.5, 3.5, 6), {"base": 2.5}),
                     ((1, -2, 5), {"dtype": "float64"}), ((-1.5, 2.5, 4), {"dtype": "float16"})):
        want = torch.logspace(*args, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()})
        got = fg.logspace(*args, **{k: getattr(fg, v) if k == "dtype" else v for k, v in kw.items()})
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)


def test_integer_linspace_rounds_once_as_torchs_fused_multiply_add():
    """torch's integer linspace computes start + i * step (end - k * step in the second half) as one fused
    multiply-add before truncating: -28 + 10.2 * 5 is 22.999999999999996, so 22 where two roundings give 23."""
    assert fg.linspace(74, -28, 11, dtype=fg.int64).tolist()[5] == 22
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for dt in ("int64", "int32", "int16", "int8", "uint8"):
        for _ in range(60):
            lo = 0 if dt == "uint8" else -100
            start, end = (float(rng.uniform(lo, 100)) if rng.random() < 0.5 else int(rng.integers(lo, 100))
                          for _ in range(2))
            steps = int(rng.integers(2, 80))
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dt)).tolist()
            assert fg.linspace(start, end, steps, dtype=getattr(fg, dt)).tolist() == want, (dt, start, end, steps)


@pytest.mark.parametrize("case", ["stack", "cross_entropy", "nll_3d", "mm", "vec_mat", "mat_vec", "batch_mat",
                                  "mat_batch", "dot_len"])
def test_the_first_of_two_bad_arguments_raises_as_torch(case):
    """With two bad arguments torch's checks run in its order: stack wraps the dim before comparing sizes
    (IndexError), nll_loss / cross_entropy check the shapes before the target's dtype (ValueError), matmul
    checks the inner sizes (worded by the kernel it lowers to) before the dtypes, except dot."""
    torch = pytest.importorskip("torch")
    calls = {
        "stack": lambda L: L.stack([L.ones(2), L.ones(3)], dim=4),
        "cross_entropy": lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.ones(3, dtype=L.float64)),
        "nll_3d": lambda L: L.nn.functional.nll_loss(L.ones(2, 3, 4), L.ones(2, 5, dtype=L.float64)),
        "mm": lambda L: L.mm(L.ones(2, 3), L.ones(4, 2, dtype=L.float64)),
        "vec_mat": lambda L: L.ones(3) @ L.ones(4, 2, dtype=L.float64),
        "mat_vec": lambda L: L.ones(2, 3) @ L.ones(4, dtype=L.float64),
        "batch_mat": lambda L: L.ones(2, 2, 3) @ L.ones(4, 2, dtype=L.float64),
        "mat_batch": lambda L: L.ones(2, 3) @ L.ones(2, 4, 2, dtype=L.float64),
        "dot_len": lambda L: L.ones(3) @ L.ones(4),
    }
    got = []
    for L in (fg, torch):
        with pytest.raises(Exception) as e:
            calls[case](L)
        got.append((type(e.value).__name__.lstrip("_"), str(e.value)))
    assert got[0] == got[1]


@pytest.mark.parametrize("idx", [([3],), ([-4],), ([0], [4]), ([[0, 2]], [[-1, 3]]), ([2],)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_out_of_range_raises_as_torch(idx, accumulate):
    """index_put with an out-of-range integer index raises torch's IndexError (the functional update dropped it)."""
    torch = pytest.importorskip("torch")
    res = {}
    for lib in (fg, torch):
        x = lib.zeros(3, 4)
        try:
            res[lib] = x.index_put(tuple(lib.tensor(i) for i in idx), lib.tensor(1.0), accumulate=accumulate).numpy()
        except IndexError as e:
            res[lib] = str(e)
    if isinstance(res[torch], str):
        assert res[fg] == res[torch]
    else:
        np.testing.assert_array_equal(res[fg], res[torch])


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_cumsum_cumprod_bit_for_bit_as_torch(dtype):
    """torch's CPU cumsum/cumprod: a running sum or product accumulated in float64 for float32, in float32 for the
    half types (torch's accumulation types), each output rounded once; the JAX face rounds in XLA's order. Values
    and the cumsum gradient (a reversed running sum) equal torch's bit for bit."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for shape, dim in (((3000,), 0), ((7, 40), 1), ((40, 7), 0), ((3, 5, 9), -1)):
        x = rng.standard_normal(shape)
        for name, scale in (("cumsum", 1.0), ("cumprod", 0.1)):
            got, want = [], []
            for lib, out in ((fg, got), (torch, want)):
                t = lib.tensor(x * scale + (1.0 if name == "cumprod" else 0.0)).to(getattr(lib, dtype)).requires_grad_()
                out.append(getattr(lib, name)(t, dim).detach().float().numpy())
            np.testing.assert_array_equal(got[0], want[0], err_msg=f"{name} {shape} {dim}")
        g = rng.standard_normal(shape)
        grads = []
        for lib in (fg, torch):
            t = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
            lib.cumsum(t, dim).backward(lib.tensor(g).to(getattr(lib, dtype)))
            grads.append(t.grad.float().numpy())
        np.testing.assert_array_equal(grads[0], grads[1], err_msg=f"cumsum grad {shape} {dim}")
