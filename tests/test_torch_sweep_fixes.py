"""Mismatches against real PyTorch found by a differential sweep of the Tensor face (values, dtypes,
shapes, gradients, exception types), each checked here against torch itself."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")


def same(t, f):
    """funcgrad's result equals torch's: type, dtype, shape, values (NaN equal to NaN)."""
    if isinstance(t, (tuple, list)):
        assert len(t) == len(f)
        for a, b in zip(t, f):
            same(a, b)
        return
    assert isinstance(f, fg.Tensor), type(f)
    assert str(f.dtype) == str(t.dtype)
    assert tuple(f.shape) == tuple(t.shape)
    tol = 2e-3 if t.dtype == torch.float16 else 1e-6
    np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=tol, atol=1e-12, equal_nan=True)


def both(fn, *arrays, grad=False):
    """fn(lib, *tensors) on torch and funcgrad; with grad, also the gradients of sum(out * w)."""
    ts = [torch.from_numpy(np.array(a)) for a in arrays]
    fs = [fg.from_numpy(np.array(a)) for a in arrays]
    if grad:
        ts = [t.requires_grad_() for t in ts]
        fs = [f.requires_grad_() for f in fs]
    tout, fout = fn(torch, *ts), fn(fg, *fs)
    same(tout, fout)
    if grad:
        w = np.random.default_rng(0).standard_normal(tuple(tout.shape))
        (tout * torch.from_numpy(w)).sum().backward()
        (fout * fg.from_numpy(w)).sum().backward()
        for t, f in zip(ts, fs):
            same(t.grad, f.grad)
    return tout, fout


def raises_like(fn, *arrays):
    """torch raises; funcgrad raises the same exception class."""
    ts = [torch.from_numpy(np.array(a)) for a in arrays]
    fs = [fg.from_numpy(np.array(a)) for a in arrays]
    with pytest.raises(Exception) as te:
        fn(torch, *ts)
    with pytest.raises(type(te.value)):
        fn(fg, *fs)


def test_polygamma_with_nan_or_inf_elsewhere_in_the_tensor():
    # a NaN in the input cut the upward-shift loop short for every other element (wrong values, and
    # digamma's gradient through it)
    x = np.array([NAN, INF, -0.0, -INF, 1.3, -1.7, 2.2, 0.4, -2.5])
    for n in range(5):
        both(lambda L, a: L.polygamma(n, a), x)
    both(lambda L, a: L.digamma(a), x[x != -INF], grad=True)
    both(lambda L, a: L.special.polygamma(1, a), x.astype(np.float32))


def test_polygamma_edge_values():
    x = np.array([NAN, INF, -INF, -0.0, 0.0, -3.0, 1e30, 2.5])
    for n in range(1, 5):
        # (torch's trigamma at a negative integer is a rounding artefact of its reflection formula, skipped)
        both(lambda L, a: L.polygamma(n, a), x if n > 1 else np.delete(x, 5))


def test_integer_pow_with_negative_exponents_broadcasts():
    base = np.array([[2, 1, 0, -1], [-2, 3, 0, -1]], np.int64)
    exp = np.array([-1, -3, -2, -5], np.int64)
    both(lambda L, a, b: L.pow(a, b), base, exp)
    both(lambda L, a, b: a ** b, base.astype(np.int8), exp.astype(np.int8))
    both(lambda L, a, b: a.to(L.bool) ** b, base, exp.astype(np.int16))
    both(lambda L, b: 2 ** b, exp.astype(np.int8))
    both(lambda L, a, b: a.pow_(b), base.astype(np.int32), np.array([-1, 2, 3, -4], np.int32))
    raises_like(lambda L, a: a ** -1, base)


def test_nonzero_of_a_0d_tensor():
    for v in (3, 0, True, False, 2.5):
        both(lambda L, a: L.nonzero(a), np.array(v))
        both(lambda L, a: L.argwhere(a), np.array(v))
        both(lambda L, a: a.nonzero(as_tuple=True), np.array(v))
    both(lambda L, a: L.nonzero(a), np.zeros((2, 0)))


def test_logical_ops_argument_errors():
    a, b = np.array([True, False, True]), np.array([1, 0, 2, 3])
    for name in ("logical_and", "logical_or", "logical_xor"):
        raises_like(lambda L, x, y: getattr(L, name)(x, y), a, b)
        raises_like(lambda L, x, y: getattr(x, name + "_")(y), a, b)
        raises_like(lambda L, x: getattr(L, name)(2, x), a)
        raises_like(lambda L, x: getattr(L, name)(x, 2), a)


@pytest.mark.parametrize("name", ["xlogy", "special.xlogy", "special.xlog1py"])
def test_xlogy_values_and_x_gradient(name):
    # d/dx is log(y) also at x == 0 (0 only where y <= 0, resp. <= -1), as torch; before it was 0 at x == 0
    x = np.array([0.0, -0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 1.5])
    y = np.array([2.0, 2.0, -1.0, NAN, 0.0, INF, -1.0, -2.0, 0.5, 4.0])

    def fn(L, a, b):
        f = L
        for part in name.split("."):
            f = getattr(f, part)
        return f(a, b)
    ts = [torch.from_numpy(v.copy()).requires_grad_() for v in (x, y)]
    fs = [fg.from_numpy(v.copy()).requires_grad_() for v in (x, y)]
    same(fn(torch, *ts), fn(fg, *fs))
    fn(torch, *ts).sum().backward()
    fn(fg, *fs).sum().backward()
    same(ts[0].grad, fs[0].grad)
    keep = x != 0  # (d/dy at x == 0 beside a pole: torch's 0 / 0 NaN, funcgrad's limit 0)
    np.testing.assert_allclose(fs[1].grad.numpy()[keep], ts[1].grad.numpy()[keep])
    both(lambda L, a: fn(L, a, 3), np.array([1, 2, 0]))
    both(lambda L, a, b: fn(L, a, b), np.array([[1.0], [0.0]], np.float32), np.array([1.0, 2.0, 3.0]))


def _grads_both(name, a, b):
    outs = []
    for lib in (torch, fg):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        o = getattr(lib, name)(x, y)
        o.backward(lib.tensor(np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape))))
        outs.append((o, x.grad, y.grad))
    same(outs[0], outs[1])
    return outs


def test_remainder_gradient_at_zero_and_signed_zeros():
    # d/dx remainder is 1 everywhere (it was 0 at x == 0); values keep fmod's signed zeros as torch
    a = np.array([0.0, -0.0, 0.0, 5.5, -5.5, 5.5, -5.5, 3.0, 2.0, -2.0, 7.0])
    b = np.array([2.0, 2.0, -1.0, 2.0, 2.0, -2.0, -2.0, 1.5, INF, INF, -3.0])
    (to, tx, ty), (fo, fx, fy) = _grads_both("remainder", a, b)
    np.testing.assert_array_equal(np.signbit(fo.detach().numpy()), np.signbit(to.detach().numpy()))
    both(lambda L, x, y: x % y, a.astype(np.float32), b[::-1].astype(np.float32))
    both(lambda L, x, y: L.remainder(x, y), np.array([[5, -5, 7]], np.int64), np.array([[3], [-3]], np.int64))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_elementwise_extrema_gradients_at_nan_and_ties(name):
    # maximum/minimum: a NaN operand passes the whole cotangent to both (it went nowhere); fmax/fmin: the
    # chosen operand takes all of it, ties included (it was split), and a tie of -0.0 / 0.0 gives the first
    a = np.array([NAN, 1.0, NAN, 2.0, 2.0, -0.0, 0.0, 3.0])
    b = np.array([1.0, NAN, NAN, 2.0, 1.0, 0.0, -0.0, 4.0])
    (to, _, _), (fo, _, _) = _grads_both(name, a, b)
    if name.startswith("f"):
        np.testing.assert_array_equal(np.signbit(fo.detach().numpy()), np.signbit(to.detach().numpy()))
    _grads_both(name, np.array([[1.0, NAN]]), np.array([[3.0], [2.0]]))
    both(lambda L, x, y: getattr(L, name)(x, y), np.array([[1, 5]]), np.array([[3], [2]], np.int8))


def test_all_any_over_no_dims_reduce_nothing():
    x = np.array([[0, 2], [3, 0]], np.uint8)
    for name in ("all", "any"):
        both(lambda L, a: getattr(L, name)(a, dim=()), x)
        both(lambda L, a: getattr(a, name)(dim=[]), x.astype(np.float32))
        both(lambda L, a: getattr(L, name)(a, dim=(), keepdim=True), x.astype(bool))
        both(lambda L, a: getattr(L, name)(a, dim=()), np.array(2.0))


def test_integer_dtype_argument_of_reductions():
    # dtype=int32/int16/int8 gave int64 (NumPy's integer sum promotion) except in sum over everything
    x = np.array([[1, 2, 100], [3, 4, 100]], np.int16)
    for dt in ("int8", "int16", "int32"):
        both(lambda L, a: L.sum(a, dim=1, dtype=getattr(L, dt)), x)
        both(lambda L, a: L.nansum(a, dtype=getattr(L, dt)), x)
        both(lambda L, a: L.prod(a, 1, dtype=getattr(L, dt)), x)
        both(lambda L, a: a.prod(dtype=getattr(L, dt)), x.astype(bool))
        both(lambda L, a: L.cumsum(a, 1, dtype=getattr(L, dt)), x)
        both(lambda L, a: a.cumprod(0, dtype=getattr(L, dt)), x)


@pytest.mark.parametrize("vals", [[1.0, NAN, 3.0, NAN], [3.0, 1.0, 3.0, 2.0], [NAN], [INF, NAN, INF],
                                  [-INF, -INF], [[1.0, NAN], [NAN, NAN]]])
def test_max_min_of_everything_spread_the_gradient_over_nans(vals):
    for fn in (lambda L, x: x.max(), lambda L, x: L.min(x)):
        both(fn, np.array(vals), grad=True)


KINKS = [NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 6.0, -1.0, 1.0, 3.0, -3.0, 2.0, -4.0, 0.3, -0.3]


@pytest.mark.parametrize("name,kw", [("relu6", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}),
                                     ("hardsigmoid", {}), ("hardswish", {}), ("threshold", {"threshold": 0.5, "value": -2.0}),
                                     ("rrelu", {}), ("leaky_relu", {})])
def test_piecewise_activation_gradients_at_the_kinks(name, kw):
    # torch's gradient is 0 at hardtanh's / relu6's / hardsigmoid's bounds (exclusive interior), hardswish's
    # is 0 at -3 and 1 at 3, rrelu's is the slope at 0, threshold keeps NaN; integer-valued inputs meet these
    x = np.array(KINKS if name != "hardswish" else KINKS[1:])  # (torch's hardswish gradient at NaN depends
    both(lambda L, x: getattr(L.nn.functional, name)(x, **kw), x, grad=True)  # on its vector width)


def test_activation_dtypes_and_errors():
    both(lambda L, x: L.nn.functional.relu6(x), np.array([-2, 3, 8]))
    both(lambda L, x: L.nn.functional.hardtanh(x), np.array([-2, 0, 8], np.int8))
    both(lambda L, x: L.nn.functional.hardtanh(x, -1.5, 2.5), np.array([-2, 0, 8]))
    raises_like(lambda L, x: L.nn.functional.hardtanh(x), np.array([True, False]))
    for name in ("gelu", "silu", "mish", "softplus", "hardswish", "hardsigmoid", "hardshrink", "softshrink",
                 "leaky_relu", "logsigmoid", "glu", "rrelu"):
        raises_like(lambda L, x: getattr(L.nn.functional, name)(x), np.array([[1, 2], [3, 4]]))
        raises_like(lambda L, x: getattr(L.nn.functional, name)(x), np.array([[True, False]]))
    for name in ("softmax", "log_softmax"):
        raises_like(lambda L, x: getattr(L, name)(x, 0), np.array([1, 2]))
        both(lambda L, x: getattr(L.nn.functional, name)(x, 0), np.zeros((0, 4)))
        both(lambda L, x: getattr(L, name)(x, 1), np.zeros((3, 0), np.float32))


def test_clamp_gradient_at_nan():
    x = np.array([NAN, INF, -INF, -0.0, 0.0, 0.5, -0.5, 1.0, -1.0, 2.0])
    for kw in ({"min": -0.5, "max": 1.0}, {"min": 0.0}, {"max": 0.5}, {"min": 1.0, "max": -1.0}):
        both(lambda L, a: L.clamp(a, **kw), x, grad=True)
    both(lambda L, a, lo: L.clamp(a, lo), np.array([[NAN, 2.0]]), np.array([[0.5], [3.0]]), grad=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_gradient_for_log_probs_leaf(reduction):
    # torch's gradient w.r.t. log_probs is the logits' one under log_softmax (exp(log_probs) * cotangent
    # added for t < input_length), as in torch's documented example with a detached log_softmax leaf
    x = np.random.default_rng(0).standard_normal((6, 2, 4))
    outs = []
    for lib in (torch, fg):
        lp = lib.log_softmax(lib.tensor(x), 2).detach().requires_grad_()
        loss = lib.nn.functional.ctc_loss(lp, lib.tensor([[1, 2], [3, 1]]), lib.tensor([6, 4]),
                                          lib.tensor([2, 1]), reduction=reduction)
        (loss.sum() if reduction == "none" else loss).backward()
        outs.append((loss, lp.grad))
    same(outs[0], outs[1])


COMPLEX_REJECTED = """floor ceil trunc fix frac round sign signbit isposinf isneginf deg2rad rad2deg erf erfc erfinv lgamma
digamma i0 logit relu sort argsort msort max min amax amin argmax argmin aminmax median nanmedian mode unique nansum
nanmean""".split()
COMPLEX_REJECTED_2 = "lt le gt ge maximum minimum fmax fmin atan2 hypot fmod remainder floor_divide copysign xlogy".split()


@pytest.mark.parametrize("name", COMPLEX_REJECTED + COMPLEX_REJECTED_2)
def test_complex_input_without_a_complex_kernel_raises_as_torch(name):
    z = np.array([1 + 2j, -3 + 0.5j, 0.5 - 1j], np.complex64)
    if name in COMPLEX_REJECTED_2:
        raises_like(lambda L, x: getattr(L, name)(x, x), z)
        raises_like(lambda L, x: getattr(x, name)(x), z)
        raises_like(lambda L, x: getattr(L, name)(x.real, x), z)
    else:
        raises_like(lambda L, x: getattr(L, name)(x), z)
        raises_like(lambda L, x: getattr(x, name)(), z)
    if hasattr(torch.Tensor, name + "_"):
        raises_like(lambda L, x: getattr(x, name + "_")(*((x,) if name in COMPLEX_REJECTED_2 else ())), z)


def test_complex_operators_and_others():
    z = np.array([1 + 2j, -3 + 0.5j], np.complex64)
    for fn in (lambda L, x: x < x, lambda L, x: x >= 1, lambda L, x: x % x, lambda L, x: x // x,
               lambda L, x: x.abs_(), lambda L, x: L.special.erfc(x), lambda L, x: L.clamp(x, 0, 1),
               lambda L, x: x.clamp_(0, 1), lambda L, x: L.topk(x, 1), lambda L, x: L.kthvalue(x, 1),
               lambda L, x: L.cummax(x, 0), lambda L, x: L.softmax(x, 0), lambda L, x: L.trace(x[None, :1] > 0)):
        raises_like(fn, z)
    both(lambda L, x: L.abs(x), z)
    both(lambda L, x: L.sgn(x), z)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_complex_sgn_gradient_and_non_finite_parts(dt):
    # torch differentiates z / |z| (0 at z = 0); a non-finite part gives NaN + NaN j (complex64 on every CPU
    # capability, complex128 with the default and AVX512 kernels)
    z = np.array([3 + 4j, 1 - 2j, 0j, -0.5 + 1e-3j, 1e-30 + 1e-30j], dt)
    w = np.array([1 + 2j, 3j, 1 - 1j, -2 + 0.5j, 1j], dt)
    grads = []
    for L in (torch, fg):
        x = L.tensor(z, requires_grad=True)
        y = L.sgn(x)
        (y * L.tensor(w)).real.sum().backward()
        grads.append(x.grad.resolve_conj().numpy() if L is torch else x.grad.numpy())
        np.testing.assert_allclose(y.detach().resolve_conj().numpy() if L is torch else y.detach().numpy(),
                                   z / np.where(z == 0, 1, np.abs(z)), rtol=1e-6)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-12)
    assert np.abs(grads[1]).max() > 0.1
    r = fg.sgn(fg.tensor([complex(INF, 1), complex(3, INF), complex(NAN, 0), complex(0, NAN)], dtype=getattr(fg, dt)))
    assert np.isnan(r.numpy().real).all() and np.isnan(r.numpy().imag).all()


def test_float_power_dtypes():
    z = np.array([1 + 2j, 2 - 1j], np.complex64)
    y = np.array([2.0, 3.0], np.float32)
    both(lambda L, a: L.float_power(a, 2), z)
    both(lambda L, a, b: L.float_power(b, a), z, y)
    both(lambda L, b: L.float_power(b, 1j), y)
    both(lambda L, b: L.float_power(2, b), y)
    both(lambda L, a: a.to(L.complex128).float_power_(2), z)
    raises_like(lambda L, a, b: b.double().float_power_(a), z, y)


def test_integer_matrix_products_truncate_float_coefficients():
    a = np.array([[1, 2], [3, 4]])
    both(lambda L, x: L.addmm(x, x, x, beta=0.5, alpha=1.5), a)
    both(lambda L, x: L.addmm(x, x, x, beta=-1.5, alpha=2), a.astype(np.int8))
    both(lambda L, x: L.addmv(x[0], x, x[0], beta=0.5, alpha=1.5), a)
    both(lambda L, x: L.baddbmm(x[None], x[None], x[None], beta=1.5, alpha=2.5), a)
    both(lambda L, x: L.addmm(x, x, x, beta=0.5, alpha=1.5), a.astype(np.float32))


def test_bincount_weight_dtypes():
    for w in (np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3])):
        both(lambda L, i, v: L.bincount(i, weights=v, minlength=4), np.array([0, 1, 1]), w)


def test_bool_matrix_products_and_integer_lerp_raise():
    b = np.array([[True, False], [False, True]])
    for fn in (lambda L, x: L.mm(x, x), lambda L, x: x @ x, lambda L, x: L.matmul(x[0], x[0]),
               lambda L, x: L.dot(x[0], x[0]), lambda L, x: L.einsum("ij,jk->ik", x, x), lambda L, x: L.bmm(x[None], x[None]),
               lambda L, x: L.mv(x, x[0]), lambda L, x: L.topk(x[0], 1), lambda L, x: L.lerp(x.long(), x.long(), 0.5),
               lambda L, x: x.long().lerp_(x.long(), 2)):
        raises_like(fn, b)
    both(lambda L, x: L.mm(x, x), b.astype(np.int64))
    both(lambda L, x: L.einsum("ij,jk->ik", x, x), b.astype(np.float32))


def test_empty_tensor_lists_and_bool_cross():
    for fn in (lambda L, x: L.cat([]), lambda L, x: L.cat(()), lambda L, x: L.hstack([]), lambda L, x: L.vstack([]),
               lambda L, x: L.dstack([]), lambda L, x: L.column_stack([]), lambda L, x: L.stack([]),
               lambda L, x: L.cross(x, x, dim=1), lambda L, x: L.linalg.cross(x, x),
               lambda L, x: L.unique_consecutive(x.to(L.complex64))):
        raises_like(fn, np.ones((2, 3), bool))


def test_ldexp_result_dtype():
    for a, b in [("float16", "uint8"), ("float16", "int64"), ("float32", "int64"), ("int64", "int64"), ("int32", "bool")]:
        for sa, sb in [((), ()), ((3,), (3,)), ((3,), ()), ((), (3,))]:
            x = np.arange(1, 1 + int(np.prod(sa))).reshape(sa).astype(a)
            y = (np.arange(int(np.prod(sb))) % 3).reshape(sb).astype(b)
            both(lambda L, u, v: L.ldexp(u, v), x, y)


def test_torch_functions_that_take_tensors_only():
    x = np.array([1.0, 2.0])
    for name in ("eq", "ne", "lt", "ge", "maximum", "minimum", "fmax", "atan2", "hypot", "copysign", "fmod", "logaddexp",
                 "isclose", "dist", "ldexp", "igamma"):
        raises_like(lambda L, a: getattr(L, name)(2, a), x)
    for name in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "logaddexp", "isclose", "dist", "ldexp",
                 "igamma", "igammac"):
        raises_like(lambda L, a: getattr(L, name)(a, 2), x)
        raises_like(lambda L, a: getattr(L, name)(a.to(L.complex64), 2.5), x)
    for fn in (lambda L, a: L.eq(a, 2), lambda L, a: 2 < a, lambda L, a: a.eq(2), lambda L, a: L.fmod(a, 2),
               lambda L, a: L.copysign(a, -1), lambda L, a: L.remainder(2, a)):
        both(fn, x)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_special_cases(name):
    # a = 0 (e.g. from integer or bool tensors), x = 0, infinities and NaN follow torch's (Cephes') rules
    vals = [0.0, -0.0, 1.0, 2.5, -1.0, INF, -INF, NAN, 0.3]
    a, x = np.meshgrid(vals, vals, indexing="ij")
    both(lambda L, p, q: getattr(L, name)(p, q), a, x)
    both(lambda L, p, q: getattr(L, name)(p, q), a.astype(np.float32), x.astype(np.float32))
    both(lambda L, p, q: getattr(L, name)(p, q), np.array([[0], [1], [3]]), np.array([0.0, 0.5, 2.0], np.float32))
    both(lambda L, q: getattr(L, name)(L.tensor([1.0, 2.0, 0.0]), q), np.array([0.5, 0.0, 2.0]), grad=True)
    both(lambda L, q: getattr(L, name)(L.tensor([0.5, 2.0, 0.7]), q), np.array([0.0, 0.0, 1.5]), grad=True)
    raises_like(lambda L, p: getattr(L, name)(p, p), np.array([True, False]))


def test_integer_division_by_zero_in_place_and_empty():
    for fn in (lambda L, a, b: a.to(L.uint8).floor_divide_(b.to(L.uint8)), lambda L, a, b: a.remainder_(b),
               lambda L, a, b: a.__ifloordiv__(b.bool()), lambda L, a, b: a.div_(b, rounding_mode="floor"),
               lambda L, a, b: a.fmod_(b), lambda L, a, b: L.isclose(a, L.ones(3, dtype=a.dtype))):
        raises_like(fn, np.array([1, 2]), np.array([0, 1]))
    both(lambda L, a, b: L.floor_divide(a, b), np.zeros((0,), bool), np.array([0], np.int16))
    both(lambda L, a, b: L.fmod(a, b), np.zeros((0,), np.int32), np.array([0], np.int32))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_gradient_for_the_whole_factor(upper):
    # torch's gradient for the factor is -(C + C^H) L on the whole matrix (the triangle never read included)
    rng = np.random.default_rng(1)
    m = rng.standard_normal((3, 3))
    fac = np.linalg.cholesky(m @ m.T + np.eye(3))
    both(lambda L, b, f: L.cholesky_solve(b, f, upper=upper), rng.standard_normal((3, 2)), fac.T if upper else fac,
         grad=True)


def test_linalg_solve_left_false_and_shape_errors():
    a = np.eye(3) * 2 + 0.1 * np.arange(9.0).reshape(3, 3)
    b = np.arange(6.0).reshape(2, 3)
    both(lambda L, x, y: L.linalg.solve(x, y, left=False), a, b, grad=True)
    both(lambda L, x, y: L.linalg.solve(x, y), a, b.T.copy(), grad=True)
    for fn in (lambda L, x, y: L.linalg.solve(x, y), lambda L, x, y: L.linalg.solve(x, y[:, :2]),
               lambda L, x, y: L.linalg.solve(x, y[0].float()), lambda L, x, y: L.linalg.solve(x, y[0], left=False)):
        raises_like(fn, a, b)


@pytest.mark.parametrize("m", [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]], [[0.0]], [[3.0]],
                               [[[1.0, 2.0], [3.0, 4.0]], [[2.0, 2.0], [2.0, 2.0]]], [[2.0, 1.0], [0.5, 3.0]]])
def test_det_gradient_at_singular_matrices(m):
    # The gradient is the adjugate's transpose, also at an exactly singular matrix: torch's SVD formula, which
    # torch uses under create_graph (its first-order eager backward gives g det A^-H = 0 there instead).
    for fn in (lambda L, a: L.linalg.det(a), lambda L, a: a.det()):
        grads = []
        for lib in (torch, fg):
            a = lib.from_numpy(np.array(m)).requires_grad_()
            g, = lib.autograd.grad(fn(lib, a).sum(), a, create_graph=True)
            grads.append(g)
        np.testing.assert_allclose(np.asarray(grads[1].detach()), grads[0].detach().numpy(), atol=1e-12)


def test_binary_cross_entropy_input_gradient_at_0_and_1():
    # torch's (x - t) / max(x (1 - x), 1e-12): finite at x = 0 and 1 (funcgrad gave NaN there)
    for x, t in (([0.0, 1.0, 0.5, 1e-13, 0.3], [0.0, 1.0, 1.0, 1.0, 0.2]), ([0.0, 1.0, 0.5], [1.0, 0.0, 1.0])):
        outs = []
        for lib in (torch, fg):
            xi = lib.tensor(x, dtype=lib.float64, requires_grad=True)
            loss = lib.nn.functional.binary_cross_entropy(xi, lib.tensor(t, dtype=lib.float64), reduction="none")
            loss.backward(lib.arange(1.0, len(x) + 1, dtype=lib.float64))
            outs.append((loss, xi.grad))
        same(outs[0], outs[1])


@pytest.mark.parametrize("kw", [{}, {"weight": True}])
def test_nll_and_cross_entropy_with_every_target_ignored(kw):
    x = np.random.default_rng(0).standard_normal((4, 5))
    for name in ("cross_entropy", "nll_loss"):
        def fn(L, a, name=name):
            extra = {"weight": L.ones(5, dtype=L.float64)} if kw else {}
            return getattr(L.nn.functional, name)(a, L.tensor([1, 1, 1, 1]), ignore_index=1, **extra)
        both(fn, x, grad=True)


@pytest.mark.parametrize("dtype", ["int32", "int16", "float32", "bool", "uint8", "int64"])
def test_class_target_dtypes(dtype):
    x = np.random.default_rng(0).standard_normal((4, 5))
    t = np.array([1, 2, 3, 0]).astype(dtype)
    for name in ("cross_entropy", "nll_loss"):
        if dtype in ("uint8", "int64"):
            both(lambda L, a, b: getattr(L.nn.functional, name)(a, b), x, t)
        else:
            raises_like(lambda L, a, b: getattr(L.nn.functional, name)(a, b), x, t)


@pytest.mark.parametrize("v", [[NAN, INF, -0.0, -INF, 1.3], [1.0, INF], [-INF, -INF, 2.0], [-INF, 0.0, INF], [1.0, 2.0, 3.0, 4.0]])
def test_quantile_interpolates_from_the_nearer_end(v):
    # torch's lerp (start + w (end - start) for w < 0.5, else end - (1 - w) (end - start)): -inf, not NaN,
    # between -inf and a finite value for w >= 0.5
    for q in (0.0, 0.3, 0.5, 0.9, 1.0):
        both(lambda L, x: L.nanquantile(x, q), np.array(v))
        if not np.isnan(v).any():
            both(lambda L, x: L.quantile(x, q), np.array(v), grad=True)


def test_lerp_from_the_nearer_end():
    a, b = np.array([-INF, 1.0, 2.0, 0.1, 5.0]), np.array([0.0, INF, 3.0, 0.7, -1.0])
    w = np.array([0.9, 0.2, 1.0, 0.6, 0.3])
    both(lambda L, x, y: L.lerp(x, y, 0.9), a, b)
    both(lambda L, x, y, z: L.lerp(x, y, z), a, b, w)
    both(lambda L, x, y, z: L.lerp(x, y, z), a[2:], b[2:], w[2:], grad=True)
    both(lambda L, x, y: x.lerp_(y, 0.75), np.array([1.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32))


def test_0d_dim_checks_and_logcumsumexp_bool():
    for fn in (lambda L, x: L.sort(x, 1), lambda L, x: L.argsort(x, 1), lambda L, x: L.topk(x, 1, 1),
               lambda L, x: L.mode(x, 1), lambda L, x: L.logcumsumexp(x > 0, 0)):
        raises_like(fn, np.array(2.0))
    for fn in (lambda L, x: L.sort(x, -1), lambda L, x: L.topk(x, 1, 0), lambda L, x: L.mode(x, 0)):
        both(fn, np.array(2.0))


@pytest.mark.parametrize("p", [0, 1, 2, 3, INF])
def test_cdist_norms(p):
    # p = inf gave 1 everywhere (|d| ** inf ** 0) and p = 0 raised ZeroDivisionError
    rng = np.random.default_rng(0)
    both(lambda L, a, b: L.cdist(a, b, p=p), rng.standard_normal((2, 3)), rng.standard_normal((4, 3)), grad=True)


def test_unique_keeps_each_nan_and_complex_construction():
    both(lambda L, a: L.unique(a), np.array([3.0, NAN, 1.0, NAN, 1.0]))
    both(lambda L, a: L.unique(a, return_inverse=True, return_counts=True), np.array([3.0, NAN, 1.0, NAN]))
    both(lambda L, a, b: L.complex(a, b), np.array([0.0, 1.0, 2.0]), np.array([INF, NAN, -1.0]))
    both(lambda L, a, b: L.complex(a, b), np.array([1.0, 2.0], np.float32), np.array(3.0, np.float32))
    raises_like(lambda L, a, b: L.complex(a, b), np.array([1.0]), np.array([1.0], np.float32))
    raises_like(lambda L, a, b: L.complex(a, b), np.array([1]), np.array([1]))
    outs = []
    for lib in (torch, fg):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        (lib.complex(a, b) * lib.tensor([1 + 2j, 3 - 1j])).sum().real.backward()
        outs.append((a.grad, b.grad))
    same(outs[0], outs[1])


@pytest.mark.parametrize("p", [0, 1, 2, 3, INF, -INF, "fro", "nuc", 0.5, -1])
def test_norm_dtypes(p):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for arr in (z, x, x.astype(np.float16)):
        for kw in ({}, {"dim": 1}, {"dim": 1, "keepdim": True}, {"dtype": "float64"}, {"dtype": "complex128"}):
            def fn(L, a, kw=kw):
                k = dict(kw)
                if "dtype" in k:
                    k["dtype"] = getattr(L, k["dtype"])
                return L.norm(a, p=p, **k)
            try:
                fn(torch, torch.from_numpy(arr))
            except Exception:  # noqa: BLE001 - the type is what is compared
                raises_like(fn, arr)
            else:
                both(fn, arr)
            if not isinstance(p, str):
                try:
                    torch.linalg.vector_norm(torch.from_numpy(arr), ord=p, **{k: v for k, v in kw.items() if k != "dtype"})
                except Exception:  # noqa: BLE001
                    continue
                both(lambda L, a: L.linalg.vector_norm(a, ord=p, **{k: v for k, v in kw.items() if k != "dtype"}), arr)
    raises_like(lambda L, a: L.linalg.matrix_norm(a, ord=2, dtype=L.float64), x.astype(np.float16))


def test_tensor_where_method_mT_H_and_view_dtype():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    both(lambda L, a: a.where(a > 2, 0), x)
    both(lambda L, a: a.where(a > 2, L.tensor(5)), x)
    both(lambda L, a: a.int().where(a > 2, 0.5), x)
    both(lambda L, a: L.where(L.tensor([1, 0, 1], dtype=L.uint8), a, 0.0), x)
    raises_like(lambda L, a: L.where(a, 1.0, 2.0), x)
    raises_like(lambda L, a: a[0].mT, x)
    raises_like(lambda L, a: a[0].H, x)
    raises_like(lambda L, a: a[None].H, x)
    raises_like(lambda L, a: a.view(L.float64), x)
    both(lambda L, a: a.view(L.int16), x)
    both(lambda L, a: a.mT, x)


def test_setitem_and_copy_errors():
    for rg in (False, True):
        for fn in (lambda L, a: a.copy_(L.ones(2, 3, 4)), lambda L, a: a.copy_(L.ones(3)),
                   lambda L, a: a.__setitem__(0, L.ones(2, 4)), lambda L, a: a.__setitem__(([0, 1],), L.ones(3, 4)),
                   lambda L, a: a.__setitem__(([0, 1],), L.ones(4, dtype=L.float64)),
                   lambda L, a: a.__setitem__(([0, 1],), L.tensor(2, dtype=L.int64)),
                   lambda L, a: a.__setitem__((slice(None), [0]), L.tensor([[2]], dtype=L.int64))):
            raises_like(lambda L, x: fn(L, x.requires_grad_(rg) * 1), np.ones((3, 4), np.float32))
        for fn in (lambda L, a: a.copy_(L.ones(1, 4)), lambda L, a: a.__setitem__(a > 0, L.tensor(2, dtype=L.int64)),
                   lambda L, a: a.__setitem__(a > 0, L.tensor([2.0], dtype=L.float64)),
                   lambda L, a: a.__setitem__(([0, 1],), L.ones(4))):
            both(lambda L, x: (lambda y: (fn(L, y), y)[1])(x.requires_grad_(rg) * 1), np.ones((3, 4), np.float32))


def test_outer_and_masked_select_argument_errors():
    for fn in (lambda L, a: L.outer(a, a[0]), lambda L, a: L.ger(a[0], a), lambda L, a: L.masked_select(a, a),
               lambda L, a: L.masked_select(a, a.to(L.uint8))):
        raises_like(fn, np.ones((2, 3)))
    both(lambda L, a: L.outer(a[0], a[1]), np.arange(6.0).reshape(2, 3))
    both(lambda L, a: L.masked_select(a, a > 2), np.arange(6.0).reshape(2, 3))


def test_mvlgamma_atleast_and_igamma_a_gradient():
    x = np.array([[0.8, -1.4, -2.7], [-2.9, 1.8, 2.5]])
    for p in (1, 2, 3):  # (no domain check: lgamma's sum, as torch)
        both(lambda L, a: L.mvlgamma(a, p), x)
    both(lambda L, a, b: L.atleast_1d(a, b), np.array(1.0), np.array([2.0]))
    both(lambda L, a: L.atleast_2d((a,)), np.array(1.0))
    both(lambda L, a, b: L.atleast_3d([a, b]), np.ones(2), np.ones((2, 2)))
    # igamma with a requiring grad runs; only a backward asking for a's gradient raises
    for lib in (torch, fg):
        a = lib.tensor([1.0, INF], requires_grad=True)
        o = lib.igamma(a, lib.tensor([1.0, 2.0]))
        assert o.requires_grad and abs(float(o[0]) - 0.6321205588) < 1e-6 and float(o[1]) == 0.0
        with pytest.raises(NotImplementedError):
            o.sum().backward()


def test_tensor_lists_not_a_tensor():
    for name in ("cat", "stack", "hstack", "vstack", "dstack", "column_stack", "concat"):
        raises_like(lambda L, x: getattr(L, name)(x), np.ones((2, 3)))
        both(lambda L, x: getattr(L, name)((x, x)), np.ones((2, 3)))


def test_float16_norms_accumulate_in_float32():
    # the 2-norm of float16 values overflowed to inf (squares summed in float16); layer/group norm statistics
    # in float16 lost most digits (hundreds of ulps)
    a = np.random.default_rng(0).uniform(0, 10, (64, 50)).astype(np.float16)
    for fn in (lambda L, x: x.norm(), lambda L, x: L.norm(x, p=3, dim=1), lambda L, x: L.linalg.vector_norm(x, dim=1),
               lambda L, x: L.nn.functional.normalize(x),
               lambda L, x: L.nn.functional.layer_norm(x, (50,), weight=L.ones(50, dtype=L.float16)),
               lambda L, x: L.nn.functional.group_norm(x.reshape(8, 8, 50), 4)):
        t, f = fn(torch, torch.from_numpy(a)), fn(fg, fg.from_numpy(a))
        assert str(f.dtype) == str(t.dtype)
        np.testing.assert_allclose(f.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)


def test_float16_cumsum_accumulates_in_float32():
    a = np.random.default_rng(0).uniform(0, 10, (3840,)).astype(np.float16)
    for fn in (lambda L, x: x.cumsum(0), lambda L, x: (x[:40] / 5).cumprod(0), lambda L, x: L.cumsum(x.reshape(64, 60), 1)):
        t, f = fn(torch, torch.from_numpy(a)), fn(fg, fg.from_numpy(a))
        assert str(f.dtype) == str(t.dtype)
        np.testing.assert_allclose(f.float().numpy(), t.float().numpy(), rtol=2e-3)


def test_scaled_bessel_and_spherical_j0_at_infinity():
    x = np.array([-3.5, -1.0, 0.0, 2.5, INF, -INF, NAN])
    for name in ("i0e", "i1e", "spherical_bessel_j0", "bessel_j0", "bessel_j1"):
        both(lambda L, a: getattr(L.special, name)(a), x)
        both(lambda L, a: getattr(L.special, name)(a), x.astype(np.float32))


def test_matmul_unbroadcastable_batches():
    for fn in (lambda L, a, b: L.matmul(a, b), lambda L, a, b: a @ b, lambda L, a, b: L.matmul(a.requires_grad_(), b)):
        raises_like(fn, np.ones((4, 3, 4)), np.ones((2, 4, 5)))
    both(lambda L, a, b: a @ b, np.ones((2, 1, 3, 4)), np.ones((5, 4, 2)))


def test_more_error_types():
    for fn in (lambda L, a: L.einsum("ij,jk->ik", a, L.ones(4, 5)), lambda L, a: L.kron(a, 3),
               lambda L, a: a.index_select(1, L.tensor([3])), lambda L, a: a.index_select(0, L.tensor([3])),
               lambda L, a: a.repeat_interleave(L.tensor([1, 2])), lambda L, a: L.nn.functional.linear(a, L.ones(4, 3), L.ones(5)),
               lambda L, a: L.linalg.svd(a[0]), lambda L, a: L.linalg.qr(a[0]), lambda L, a: L.linalg.svdvals(a[0])):
        raises_like(fn, np.ones((2, 3), np.float32))
    for fn in (lambda L, a: a.repeat_interleave(L.tensor([1, 2]), dim=0), lambda L, a: a.repeat_interleave(L.tensor([2]), dim=1),
               lambda L, a: L.nn.functional.linear(a, L.ones(4, 3), L.ones(1)), lambda L, a: L.einsum("ij->i", a)):
        both(fn, np.arange(6.0, dtype=np.float32).reshape(2, 3))


_INDEX_ERRORS = {
    "take_int32": lambda L: L.take(L.ones(3), L.tensor([0], dtype=L.int32)),
    "take_float": lambda L: L.take(L.ones(3), L.tensor([0.0])),
    "bincount_weights": lambda L: L.bincount(L.tensor([1, 2]), L.ones(3)),
    "bincount_2d": lambda L: L.bincount(L.tensor([[1, 2]])),
    "bincount_float": lambda L: L.bincount(L.tensor([1.0, 2.0])),
    "bincount_negative": lambda L: L.bincount(L.tensor([-1, 2])),
    "bucketize_2d": lambda L: L.bucketize(L.ones(3), L.ones(2, 2)),
    "scatter_add_index_wide": lambda L: L.ones(2, 3).scatter_add(1, L.zeros(2, 4, dtype=L.long), L.ones(2, 3)),
    "scatter_add_index_tall": lambda L: L.ones(2, 3).scatter_add(1, L.zeros(3, 1, dtype=L.long), L.ones(2, 3)),
    "scatter_add_src_dims": lambda L: L.ones(2, 3).scatter_add(1, L.zeros(2, 1, dtype=L.long), L.ones(2, 3, 1)),
    "scatter_dtype_first": lambda L: L.ones(2, 3).scatter(1, L.zeros(2, 5, 1, dtype=L.long),
                                                          L.ones(2, 1, dtype=L.float64)),
    "index_copy_count": lambda L: L.ones(3, 3).index_copy(0, L.zeros(2, dtype=L.long), L.ones(4, 3)),
    "index_copy_slice": lambda L: L.ones(3, 3).index_copy(0, L.zeros(2, dtype=L.long), L.ones(2, 4)),
    "index_copy_index_2d": lambda L: L.ones(3, 3).index_copy(0, L.zeros(2, 2, dtype=L.long), L.ones(2, 3)),
    "index_copy_dims": lambda L: L.ones(3, 3).index_copy(0, L.zeros(2, dtype=L.long), L.ones(2, 3, 1)),
    "index_copy_int32": lambda L: L.ones(3, 3).index_copy(0, L.zeros(2, dtype=L.int32), L.ones(2, 3)),
    "index_add_count": lambda L: L.ones(3, 3).index_add(0, L.zeros(2, dtype=L.long), L.ones(4, 3)),
    "index_add_slice": lambda L: L.ones(3, 3).index_add(0, L.zeros(2, dtype=L.long), L.ones(2, 4)),
    "index_fill_2d": lambda L: L.ones(3, 3).index_fill(0, L.zeros(2, 2, dtype=L.long), 1.0),
    "index_fill_int32": lambda L: L.ones(3, 3).index_fill(0, L.zeros(2, dtype=L.int32), 1.0),
    "index_select_2d_float": lambda L: L.ones(3, 3).index_select(0, L.zeros(2, 2)),
}


@pytest.mark.parametrize("case", sorted(_INDEX_ERRORS))
def test_index_op_errors_as_torch(case):
    """Index-taking ops with a bad index, source or shape raise torch's exception type and message, its first
    check winning when two arguments are wrong (ours leaked NumPy's ValueError/TypeError or checked in another
    order)."""
    got = []
    for L in (fg, torch):
        with pytest.raises(Exception) as info:
            _INDEX_ERRORS[case](L)
        got.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert got[0] == got[1]


_BROADCAST_ERRORS = {
    "copy_rows": lambda L: L.ones(2, 3).copy_(L.ones(4, 3, dtype=L.float64)),
    "copy_cols": lambda L: L.ones(2, 3).copy_(L.ones(2, 5)),
    "copy_3d": lambda L: L.ones(5, 2, 3).copy_(L.ones(4, 1, 3)),
    "copy_wider": lambda L: L.ones(3).copy_(L.ones(2, 3)),
    "masked_fill_shape_and_dtype": lambda L: L.ones(2, 3).masked_fill(L.ones(4, 3), 1.0),
    "masked_fill_float_mask": lambda L: L.ones(2, 3).masked_fill(L.ones(2, 3), 1.0),
    "masked_fill_byte_mask": lambda L: L.ones(2, 3).masked_fill(L.ones(2, 3, dtype=L.uint8), 1.0),
    "masked_fill_inplace_wider": lambda L: L.ones(2, 3).masked_fill_(L.ones(3, 2, 3, dtype=L.bool), 1.0),
    "masked_scatter_shape_and_dtype": lambda L: L.ones(2, 3).masked_scatter(L.ones(4, 3), L.ones(2, 3)),
}


@pytest.mark.parametrize("case", sorted(_BROADCAST_ERRORS))
def test_broadcast_errors_before_dtype_errors_as_torch(case):
    """copy_ names the dimension that does not broadcast (ours named the last one, sizes equal); masked_fill /
    masked_scatter check that the mask broadcasts before its dtype, as torch."""
    got = []
    for L in (fg, torch):
        with pytest.raises(Exception) as info:
            _BROADCAST_ERRORS[case](L)
        got.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    assert got[0] == got[1]


@pytest.mark.parametrize("how", ["method", "to", "to_kw"])
def test_bfloat16_copy_keeps_the_graph(how):
    """x.bfloat16() / x.to(torch.bfloat16) of a tensor that requires grad is a ToCopyBackward0 node as torch's (ours
    took bfloat16, whose NumPy kind is 'V', for a non-float dtype and dropped the graph)."""
    res = []
    for L in (fg, torch):
        x = L.tensor([1.5, -2.7, 0.3], requires_grad=True)
        y = {"method": lambda: x.bfloat16(), "to": lambda: x.to(L.bfloat16),
             "to_kw": lambda: x.to(device="cpu", dtype=L.bfloat16)}[how]()
        w = (y * 2).sin().float()
        w.sum().backward()
        res.append((y.requires_grad, y.grad_fn.name(), w.grad_fn.name(), x.grad.numpy()))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-2)


def test_conversion_warnings_and_two_dtypes_as_torch():
    """float() of a tensor that requires grad and a complex-to-real copy warn with torch's messages (torch warns
    once per process, so only funcgrad's side is checked for the warnings); to() with two dtypes is torch's
    TypeError."""
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a scalar may lead to "
                                         "unexpected behavior"):
        float(fg.tensor(1.5, requires_grad=True))
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        fg.tensor([1.5 + 2j]).float()
    for L in (fg, torch):
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            L.ones(2).to(L.float64, L.float32)


@pytest.mark.parametrize("dt", ["int32", "int64", "uint8", "bool", "float16", "float64"])
def test_mvlgamma_of_integer_and_bool_tensors_as_torch(dt):
    """special.multigammaln / mvlgamma compute an integer tensor in the default float dtype and refuse a bool one
    (ours refused every non-float tensor)."""
    res = []
    for L in (fg, torch):
        x = L.tensor([2, 3, 5]).to(getattr(L, dt))
        try:
            r = L.special.multigammaln(x, 2)
            res.append((str(r.dtype), np.round(r.numpy().astype(float), 3).tolist()))
        except RuntimeError as e:
            res.append(str(e))
    assert res[0] == res[1]


@pytest.mark.parametrize("args", ["number_first", "string_other"])
def test_rsub_takes_a_tensor_first_as_torch(args):
    """torch.rsub's overloads take (Tensor, Tensor) or (Tensor, Number): a number first is torch's TypeError (ours
    computed it)."""
    msgs = []
    for L in (fg, torch):
        with pytest.raises(TypeError) as info:
            L.rsub(2, L.ones(2)) if args == "number_first" else L.rsub(L.ones(2), "a")
        msgs.append(str(info.value).split("\n")[0])
    assert msgs[0] == msgs[1]
