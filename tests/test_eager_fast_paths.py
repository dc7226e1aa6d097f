"""The eager and tracing fast paths must agree with NumPy / PyTorch exactly where the general paths do.

Covered: matmul of vectors and matrices (one dot_general, and its vjp plans), binary ufuncs on operands
that already agree and on Python scalars (cached weak constants, -0.0 vs 0.0), sum of a whole float
array, x[i], the zero-copy broadcast_in_dim, and tracer-leak detection in the class-checking bind.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.prims.shape import broadcast_in_dim

torch = pytest.importorskip("torch")

MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((1, 3), (3, 1))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_value_and_grads_match_torch(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    out_shape = np.matmul(a, b).shape
    r = rng.standard_normal(out_shape)

    def loss(x, y):
        return jnp.sum(jnp.matmul(x, y) * r)

    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    tl = (torch.matmul(ta, tb) * torch.tensor(r)).sum()
    tl.backward()
    val, (ga, gb) = fg.value_and_grad(loss, argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(val), tl.item(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ga), ta.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(gb), tb.grad.numpy(), rtol=1e-12, atol=1e-14)
    assert ga.shape == sa and gb.shape == sb


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_second_order_and_vmap_match_torch(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)

    def loss(x, y):
        return jnp.sum(jnp.tanh(jnp.matmul(x, y)) ** 2)

    # The Hessian-vector product in a: grad of (grad . v).
    v = rng.standard_normal(sa)
    hvp = fg.grad(lambda x: jnp.sum(fg.grad(loss)(x, jnp.asarray(b)) * v))(jnp.asarray(a))
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b)
    (g,) = torch.autograd.grad((torch.tanh(torch.matmul(ta, tb)) ** 2).sum(), ta, create_graph=True)
    (h,) = torch.autograd.grad((g * torch.tensor(v)).sum(), ta)
    np.testing.assert_allclose(np.asarray(hvp), h.numpy(), rtol=1e-10, atol=1e-12)
    # Per-example gradients in b over a batch of a's.
    batch = rng.standard_normal((4,) + sa)
    per = fg.vmap(fg.grad(loss, argnums=1), in_axes=(0, None))(jnp.asarray(batch), jnp.asarray(b))
    for i in range(4):
        tbi = torch.tensor(b, requires_grad=True)
        (gi,) = torch.autograd.grad((torch.tanh(torch.matmul(torch.tensor(batch[i]), tbi)) ** 2).sum(), tbi)
        np.testing.assert_allclose(np.asarray(per[i]), gi.numpy(), rtol=1e-10, atol=1e-12)


def test_matmul_promotes_and_rejects_like_numpy():
    a32 = np.ones((2, 3), np.float32)
    b64 = np.ones((3,), np.float64)
    out = jnp.matmul(jnp.asarray(a32), jnp.asarray(b64))
    assert out.dtype == np.matmul(a32, b64).dtype
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(2,\)"):
        jnp.matmul(jnp.asarray(a32), jnp.ones(2, np.float32))
    with pytest.raises(ValueError, match="matmul"):
        fg.grad(lambda x: jnp.sum(x @ jnp.ones((4, 2))))(jnp.ones(3))


def test_binary_fast_paths_keep_numpy_semantics():
    b = np.array([True, False, True])
    assert np.array_equal(np.asarray(jnp.add(jnp.asarray(b), jnp.asarray(~b))), np.add(b, ~b))
    assert np.array_equal(np.asarray(jnp.multiply(jnp.asarray(b), jnp.asarray(b))), np.multiply(b, b))
    with pytest.raises(TypeError, match="subtract"):
        jnp.subtract(jnp.asarray(b), jnp.asarray(b))
    h = np.array([1.5, -2.0], np.float16)
    for got, want in [(jnp.asarray(h) * 3.0, h * 3.0), (2 - jnp.asarray(h), 2 - h),
                      (jnp.asarray(np.arange(3, dtype=np.int8)) + 100, np.arange(3, dtype=np.int8) + 100)]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    # a Python int wraps into a narrower integer dtype, as in jax.numpy (300 is 44 in uint8)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(np.arange(3, dtype=np.uint8)) + 300), [44, 45, 46])


def test_cached_scalar_constants_keep_the_sign_of_zero():
    x = jnp.asarray(np.array([1.0, -1.0]))
    for c in (-0.0, 0.0, -0.0):
        np.testing.assert_array_equal(np.signbit(np.asarray(x * c)), np.signbit(np.array([1.0, -1.0]) * c))
    nan = float("nan")
    assert np.isnan(np.asarray(x + nan)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_sum_of_whole_array(dtype):
    a = (np.arange(12).reshape(3, 4) / 7).astype(dtype)
    s = jnp.sum(jnp.asarray(a))
    assert s.shape == () and s.dtype == np.sum(a).dtype
    np.testing.assert_allclose(np.asarray(s), np.sum(a), rtol=1e-6)
    assert jnp.sum(jnp.asarray(2.5)).shape == ()
    assert not jnp.sum(2.5).weak_type and not s.weak_type  # as in JAX, a reduction's result is strong


def test_int_index_matches_numpy_and_differentiates():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = jnp.asarray(a)
    for i in (0, 1, -1, -2):
        np.testing.assert_array_equal(np.asarray(x[i]), a[i])
        np.testing.assert_array_equal(np.asarray(x[i][-1]), a[i][-1])
    for bad, near in ((2, 1), (-3, 0), (7, 1)):  # as in JAX, an out-of-range int read is clamped
        np.testing.assert_array_equal(np.asarray(x[bad]), a[near])
    with pytest.raises(IndexError):
        jnp.asarray(1.0)[0]
    g = fg.grad(lambda v: v[1] * 3.0)(jnp.asarray(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 3.0, 0.0])


@given(st.data())
def test_broadcast_in_dim_matches_numpy(data):
    ndim = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim)))
    out_ndim = data.draw(st.integers(ndim, 4))
    dims = tuple(sorted(data.draw(st.permutations(range(out_ndim)))[:ndim]))
    out_shape = [data.draw(st.integers(0, 3)) for _ in range(out_ndim)]
    src = [1 if data.draw(st.booleans()) else out_shape[d] for d in dims]
    a = np.arange(int(np.prod(src)), dtype=np.float64).reshape(src)
    if data.draw(st.booleans()) and ndim:  # a non-contiguous operand
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    expanded = [1] * out_ndim
    for i, d in enumerate(dims):
        expanded[d] = a.shape[i]
    want = np.broadcast_to(a.reshape(expanded), out_shape)
    got = broadcast_in_dim(jnp.asarray(a), tuple(out_shape), dims)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.shape == tuple(out_shape)


def test_broadcast_view_is_not_written_through_by_tensors():
    x = broadcast_in_dim(jnp.asarray(np.array([1.0, 2.0])), (3, 2), (1,))
    t = fg.tensor(np.asarray(x))
    t.add_(1.0)
    np.testing.assert_array_equal(np.asarray(x), [[1.0, 2.0]] * 3)
    np.testing.assert_array_equal(t.numpy(), [[2.0, 3.0]] * 3)


def test_leaked_tracer_is_reported_next_to_a_live_one():
    leaked = []

    def inner(x):
        leaked.append(x)
        return x * 2.0

    fg.grad(inner)(1.0)

    def outer(y):
        return jnp.sin(y) * leaked[0]  # a dead grad tracer beside a live one

    with pytest.raises(fg.UnexpectedTracerError, match="leaked"):
        fg.grad(outer)(1.0)


@given(st.integers(0, 6), st.one_of(st.none(), st.integers(-8, 8)), st.one_of(st.none(), st.integers(-8, 8)),
       st.one_of(st.none(), st.integers(-3, 3).filter(lambda k: k != 0)))
def test_slice_of_first_dimension_matches_numpy(n, start, stop, step):
    a = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    got = jnp.asarray(a)[start:stop:step]
    want = a[start:stop:step]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_slice_gradient_scatters_back():
    g = fg.grad(lambda v: jnp.sum(v[1:5:2] * np.array([2.0, 3.0])))(jnp.asarray(np.zeros(6)))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 2.0, 0.0, 3.0, 0.0, 0.0])


def test_reshape_fast_path_matches_numpy_and_rejects_bad_shapes():
    a = np.arange(12.0)
    x = jnp.asarray(a)
    for shape in [(3, 4), (2, 2, 3), (12,), (1, 12, 1)]:
        np.testing.assert_array_equal(np.asarray(x.reshape(shape)), a.reshape(shape))
        np.testing.assert_array_equal(np.asarray(jnp.reshape(x, shape)), a.reshape(shape))
    assert x.reshape(-1, 4).shape == (3, 4) and x.reshape(4, -1).shape == (4, 3)
    with pytest.raises(ValueError, match="reshape"):
        x.reshape((5, 3))
    with pytest.raises(ValueError, match="negative"):
        x.reshape((-2, -6))
    g = fg.grad(lambda v: jnp.sum(v.reshape(3, 4)[1] * 2.0))(x)
    np.testing.assert_array_equal(np.asarray(g), np.repeat([0.0, 2.0, 0.0], 4))


def test_int_zero_constant_does_not_stand_in_for_negative_zero():
    x = jnp.asarray(np.array([1.0, 2.0]))
    np.asarray(x * 0)  # an int 0 constant first
    np.testing.assert_array_equal(np.signbit(np.asarray(x * -0.0)), [True, True])
    np.testing.assert_array_equal(np.signbit(np.asarray(-0.0 + jnp.zeros(2))), np.signbit(-0.0 + np.zeros(2)))


def test_compare_divide_where_mean_match_numpy():
    a = np.array([-1.5, 0.0, 2.0, 3.5], np.float32)
    b = np.array([1.0, -2.0, 2.0, 0.5], np.float32)
    x, y = jnp.asarray(a), jnp.asarray(b)
    cases = [(x > 0, a > 0), (0.0 <= x, 0.0 <= a), (x == y, a == b), (x / y, a / b), (x / 2, a / 2),
             (3 / y, 3 / b), (x ** 3, a ** 3), (y ** -2, b ** -2),
             (jnp.where(x > 0, x, y), np.where(a > 0, a, b)), (jnp.where(x > 0, x, 0.0), np.where(a > 0, a, 0.0)),
             (jnp.where(np.array(True), x, y), np.where(True, a, b)), (jnp.mean(x), np.mean(a)),
             (jnp.mean(jnp.asarray(a.reshape(2, 2))), np.mean(a.reshape(2, 2))),
             (jnp.asarray(np.arange(4)) > 2, np.arange(4) > 2), (jnp.asarray(np.arange(4)) / 2, np.arange(4) / 2)]
    for got, want in cases:
        assert got.shape == want.shape, (got, want)
        if want.dtype != np.float64:  # (integers divide in the default float dtype, documented)
            assert got.dtype == want.dtype, (got, want)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    assert jnp.mean(jnp.asarray(np.ones(3, np.float16))).dtype == np.float16
    with pytest.raises(ValueError, match="broadcast"):
        jnp.where(x > 0, x, jnp.ones(3, np.float32))


def test_where_and_mean_gradients():
    a = np.array([-1.5, 0.5, 2.0])
    g = fg.grad(lambda v: jnp.mean(jnp.where(v > 0, v * v, -v)))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), np.where(a > 0, 2 * a, -1.0) / 3)


@given(st.data())
def test_tuple_of_ints_and_slices_matches_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    idx = []
    for n in shape[:data.draw(st.integers(0, len(shape)))]:
        if data.draw(st.booleans()):
            idx.append(data.draw(st.integers(-n, n - 1)))
        else:
            idx.append(slice(data.draw(st.one_of(st.none(), st.integers(-5, 5))),
                             data.draw(st.one_of(st.none(), st.integers(-5, 5))),
                             data.draw(st.one_of(st.none(), st.sampled_from([-2, -1, 1, 2])))))
    idx = tuple(idx)
    got = jnp.asarray(a)[idx]
    np.testing.assert_array_equal(np.asarray(got), a[idx])
    assert got.shape == a[idx].shape


def test_tuple_index_errors_and_transpose_dot_fast_paths():
    a = np.arange(12.0).reshape(3, 4)
    x = jnp.asarray(a)
    np.testing.assert_array_equal(np.asarray(x[0, 4]), a[0, 3])  # clamped, as in JAX
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 1, 2]
    np.testing.assert_array_equal(np.asarray(x.T), a.T)
    np.testing.assert_array_equal(np.asarray(jnp.transpose(jnp.asarray(np.ones((2, 3, 4))))).shape, (4, 3, 2))
    np.testing.assert_allclose(np.asarray(jnp.dot(x, x.T)), a @ a.T)
    np.testing.assert_allclose(np.asarray(jnp.dot(x[0], x.T)), a[0] @ a.T)
    with pytest.raises(ValueError, match="dot"):
        jnp.dot(x, x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("scalar", [2.5, -3, 0.0, -0.0, 0])
def test_traced_array_with_python_scalar_matches_the_general_path(dtype, scalar):
    """A traced float array beside a Python scalar takes a cached constant of its shape: values, dtypes,
    weak types and derivatives must be those of the promoted-and-broadcast general path (the concrete
    Array result), for either operand order, under grad, vmap and jit."""
    x = jnp.asarray(np.array([0.5, -1.25, 2.0]), dtype=dtype)
    ops = [lambda a: a + scalar, lambda a: scalar - a, lambda a: a * scalar, lambda a: scalar * a,
           lambda a: a / (scalar if scalar else 4.0), lambda a: jnp.maximum(a.real, scalar) if dtype != "complex64"
           else a - scalar]
    for op in ops:
        want = op(x)  # the concrete path
        for got in (fg.jit(op)(x), fg.vmap(op)(x[None])[0]):
            assert got.dtype == want.dtype and got.weak_type == want.weak_type and got.shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        if dtype != "complex64":
            g = fg.grad(lambda a: jnp.sum(op(a) * op(a)))(x)
            h = 1e-3 if dtype == "float32" else 1e-6
            e = jnp.asarray(np.eye(3), dtype=dtype)
            fd = [(jnp.sum(op(x + h * e[i]) ** 2) - jnp.sum(op(x - h * e[i]) ** 2)) / (2 * h) for i in range(3)]
            np.testing.assert_allclose(np.asarray(g), np.asarray(fd, dtype=np.float64),
                                       rtol=2e-2 if dtype == "float32" else 1e-6, atol=1e-3)


def test_traced_weak_scalar_stays_weak_with_python_scalars():
    """grad of a function of a Python float: the tracer is weakly typed and stays so beside Python
    scalars, as the general path (and JAX) has it."""
    seen = []

    def f(a):
        r = 3.0 * a + 1
        seen.append((r.dtype, r.weak_type))
        return r * r
    g = fg.grad(f)(2.0)
    assert seen == [(np.dtype(g.dtype), True)] and g.weak_type
    assert float(g) == pytest.approx(2 * (3.0 * 2.0 + 1) * 3.0)
    # a strong float32 tracer stays float32 and strong
    seen.clear()
    fg.grad(f)(jnp.float32(2.0))
    assert seen == [(np.dtype("float32"), False)]
    # a weakly typed array (a broadcast Python scalar) stays weak beside Python scalars when traced
    w = jnp.broadcast_to(2.0, (3,))
    assert w.weak_type
    for t in (fg.jit(lambda a: 3.0 * a + 1)(w), fg.vmap(lambda a: 3.0 * a + 1)(w)):
        assert t.weak_type and t.dtype == (3.0 * w + 1).dtype
    seen.clear()
    fg.grad(lambda a: jnp.sum(f(a)))(w)
    assert seen == [(w.dtype, True)]


@pytest.mark.parametrize("sa,sb", [((3, 4, 5), (5, 2)), ((2, 3, 4, 5), (5, 6)), ((4, 5), (3, 5, 2)),
                                   ((4, 5), (2, 3, 5, 6)), ((5,), (3, 5, 2)), ((3, 4, 5), (5,)),
                                   ((2, 1, 4, 5), (3, 5, 2))])
def test_matmul_with_a_shared_matrix_is_one_product(sa, sb):
    """A stack of matrices times one matrix (or one matrix times a stack) contracts directly, as JAX's
    matmul: no copy of the shared matrix per batch entry, and its gradient is one product rather than
    a stack of per-entry products summed. Values and gradients against NumPy / torch."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    want = np.matmul(a, b)
    r = rng.standard_normal(want.shape)
    got = jnp.matmul(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (torch.matmul(ta, tb) * torch.tensor(r)).sum().backward()
    ga, gb = fg.grad(lambda x, y: jnp.sum(jnp.matmul(x, y) * r), (0, 1))(a, b)
    np.testing.assert_allclose(ga, ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-10)
    if len(sa) >= 2 and len(sb) >= 2 and (len(sa) == 2) != (len(sb) == 2):
        jx = fg.make_jaxpr(fg.grad(lambda x, y: jnp.sum(jnp.matmul(x, y) * r), (0, 1)))(a, b)
        dots = [e for e in jx.eqns if e.prim.name == "dot_general"]
        assert len(dots) == 3 and all(e.params["dimension_numbers"][1] == ((), ()) for e in dots), jx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [7, 5000])
def test_tensor_relu_is_one_primitive_with_torchs_values_and_gradient(dtype, n):
    """torch.relu as one relu primitive (one recorded node): NaN stays NaN with gradient 1, zero and
    negatives give 0 with gradient 0, as torch's threshold backward; small and large tensors alike."""
    from funcgrad._src.prims.elementwise import relu_p
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(dtype)
    a[:7] = [-0.0, 0.0, -1.0, np.nan, 2.0, -np.inf, np.inf]
    x = fg.tensor(a, requires_grad=True)
    y = fg.relu(x)
    r = rng.standard_normal(n).astype(dtype)
    (y * fg.tensor(r)).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    ty = torch.relu(tx)
    (ty * torch.tensor(r)).sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    # the functional face: one relu equation under grad and jit (the card with torch's convention)
    f = lambda v: jnp.sum(relu_p.bind(v, kink="torch") * r)
    assert [e.prim.name for e in fg.make_jaxpr(f)(a).eqns][0] == "relu"
    g = fg.grad(f)(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(g), tx.grad.numpy())
