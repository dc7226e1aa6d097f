"""Composition of transforms: grad/jvp/vjp/vmap/jit nested in every order, checked against
finite differences and closed forms derived by hand."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from fd import fd_grad




X = np.array([0.3, -1.2, 2.0, 0.7])


def f_poly(x):
    return jnp.sum(jnp.tanh(x) ** 2 + jnp.sin(x) * x)


def test_grad_matches_finite_differences():
    g = fg.grad(f_poly)(X)
    np.testing.assert_allclose(g, fd_grad(lambda x: f_poly(jnp.asarray(x)), X), rtol=1e-6, atol=1e-8)


def test_third_derivative_of_sin():
    d3 = fg.grad(fg.grad(fg.grad(jnp.sin)))
    for x in [0.0, 0.5, -2.0]:
        np.testing.assert_allclose(float(d3(np.float64(x))), -np.cos(x), rtol=1e-12)


def test_fourth_derivative_of_exp_times_x():
    # d^n/dx^n (x e^x) = (x + n) e^x
    f = lambda x: x * jnp.exp(x)
    d4 = fg.grad(fg.grad(fg.grad(fg.grad(f))))
    x = np.float64(0.7)
    np.testing.assert_allclose(float(d4(x)), (0.7 + 4) * np.exp(0.7), rtol=1e-10)


def test_hessian_closed_form():
    A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])
    f = lambda x: 0.5 * x @ jnp.asarray(A) @ x + jnp.sum(x ** 3)
    x = np.array([0.1, -0.4, 0.9])
    H = fg.hessian(f)(x)
    np.testing.assert_allclose(H, A + np.diag(6 * x), rtol=1e-12)


def test_jacfwd_equals_jacrev():
    f = lambda x: jnp.stack([jnp.sum(x ** 2), jnp.prod(x), jnp.max(jnp.sin(x))])
    x = np.array([0.2, 1.1, -0.5])
    np.testing.assert_allclose(fg.jacfwd(f)(x), fg.jacrev(f)(x), rtol=1e-12)
    expected = np.stack([2 * x, np.prod(x) / x, np.where(np.arange(3) == np.argmax(np.sin(x)), np.cos(x), 0)])
    np.testing.assert_allclose(fg.jacrev(f)(x), expected, rtol=1e-12)


def test_jacfwd_of_jacrev_matches_hessian_of_log_sum_exp():
    f = lambda x: jnp.log(jnp.sum(jnp.exp(x)))
    x = np.array([0.1, 0.5, -0.3])
    p = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(fg.jacfwd(fg.jacrev(f))(x), np.diag(p) - np.outer(p, p), rtol=1e-12)


def test_vmap_of_grad_is_per_example_gradient():
    w = np.array([0.5, -1.0, 2.0])
    loss = lambda w, x, y: (jnp.dot(x, w) - y) ** 2
    xs = np.random.default_rng(0).normal(size=(5, 3))
    ys = np.arange(5.0)
    per_ex = fg.vmap(fg.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    expected = np.stack([2 * (xs[i] @ w - ys[i]) * xs[i] for i in range(5)])
    np.testing.assert_allclose(per_ex, expected, rtol=1e-12)


def test_jit_vmap_grad_matches_eager():
    w = np.array([0.5, -1.0, 2.0])
    loss = lambda w, x: jnp.tanh(jnp.dot(x, w))
    xs = np.random.default_rng(1).normal(size=(4, 3))
    eager = fg.vmap(fg.grad(loss), in_axes=(None, 0))(w, xs)
    compiled = fg.jit(fg.vmap(fg.grad(loss), in_axes=(None, 0)))(w, xs)
    np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    expected = (1 - np.tanh(xs @ w) ** 2)[:, None] * xs
    np.testing.assert_allclose(compiled, expected, rtol=1e-12)


def test_grad_of_jit_and_jit_of_grad():
    f = fg.jit(f_poly)
    g1 = fg.grad(f)(X)
    g2 = fg.jit(fg.grad(f_poly))(X)
    g3 = fg.grad(f_poly)(X)
    np.testing.assert_allclose(g1, g3, rtol=1e-12)
    np.testing.assert_allclose(g2, g3, rtol=1e-12)


def test_grad_of_grad_of_jit():
    f = fg.jit(lambda x: jnp.sin(x) * x)
    x = np.float64(0.4)
    # d2/dx2 (x sin x) = 2 cos x - x sin x
    np.testing.assert_allclose(float(fg.grad(fg.grad(f))(x)), 2 * np.cos(0.4) - 0.4 * np.sin(0.4), rtol=1e-12)


def test_vmap_of_jit():
    f = fg.jit(lambda x, y: jnp.sum(x * y))
    xs = np.arange(12.0).reshape(4, 3)
    out = fg.vmap(f, in_axes=(0, None))(xs, np.ones(3))
    np.testing.assert_allclose(out, xs.sum(1))


def test_vmap_of_vmap_and_out_axes():
    f = lambda x, y: x * y + 1.0
    xs = np.arange(6.0).reshape(2, 3)
    ys = np.arange(4.0)
    out = fg.vmap(fg.vmap(f, in_axes=(0, None)), in_axes=(None, 0), out_axes=1)(xs, ys)
    expected = np.stack([xs * y + 1 for y in ys], axis=1)
    np.testing.assert_allclose(out, expected)


def test_vmap_in_axes_nonzero_and_pytrees():
    f = lambda d: d["a"] @ d["b"]
    a = np.random.default_rng(2).normal(size=(3, 4, 2))  # batch on axis 2
    b = np.random.default_rng(3).normal(size=(4,))
    out = fg.vmap(f, in_axes=({"a": 2, "b": None},))({"a": a, "b": b})
    expected = np.stack([a[:, :, i] @ b for i in range(2)])
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_vmap_of_jacrev():
    f = lambda x: jnp.sin(x) * jnp.sum(x)
    xs = np.random.default_rng(4).normal(size=(3, 2))
    out = fg.vmap(fg.jacrev(f))(xs)
    for i in range(3):
        np.testing.assert_allclose(out[i], fg.jacrev(f)(xs[i]), rtol=1e-12)


def test_vmap_axis_size_with_no_mapped_args():
    out = fg.vmap(lambda: jnp.ones(2), in_axes=(), axis_size=3)()
    assert out.shape == (3, 2)


def test_jvp_and_linearize():
    f = lambda x: jnp.exp(x) * x
    x = np.array([0.1, 0.2])
    t = np.array([1.0, -2.0])
    y, ty = fg.jvp(f, (x,), (t,))
    np.testing.assert_allclose(y, np.exp(x) * x)
    np.testing.assert_allclose(ty, (np.exp(x) * (1 + x)) * t, rtol=1e-12)
    y2, f_jvp = fg.linearize(f, x)
    np.testing.assert_allclose(f_jvp(t), ty, rtol=1e-12)
    np.testing.assert_allclose(f_jvp(2 * t), 2 * np.asarray(ty), rtol=1e-12)


def test_vjp_with_pytree_output():
    f = lambda x: {"s": jnp.sum(x), "p": x * 2.0}
    x = np.array([1.0, 2.0])
    out, pull = fg.vjp(f, x)
    (ct,) = pull({"s": np.float64(1.0), "p": np.array([1.0, 10.0])})
    np.testing.assert_allclose(ct, [3.0, 21.0])


def test_vjp_pullback_is_a_pytree_of_residuals():
    """JAX's vjp returns a Partial over its residuals; JAX's gradient-checkpointing page flattens it, returns it
    from make_jaxpr and rebuilds it from tracers to print the backward pass as a function of the residuals."""
    jax = pytest.importorskip("jax")
    f = lambda w, x: jnp.sum(jnp.sin(jnp.sin(w @ x) * 2.0))
    w = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 7
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y, pull = fg.vjp(f, w, x)
    res, tree = fg.tree_util.tree_flatten(pull)
    assert res and all(isinstance(r, fg.Array) for r in res)
    ref = jax.vjp(lambda w, x: jax.numpy.sum(jax.numpy.sin(jax.numpy.sin(w @ x) * 2.0)), w, x)[1](np.float32(1.5))
    rebuilt = fg.tree_util.tree_unflatten(tree, res)
    for got in (pull(np.float32(1.5)), rebuilt(np.float32(1.5)),
                fg.jit(lambda *a: fg.tree_util.tree_unflatten(tree, a[:-1])(a[-1]))(*res, np.float32(1.5)),
                fg.jit(lambda w, x: fg.vjp(f, w, x)[1])(w, x)(np.float32(1.5))):
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-6)
    # the backward pass traced over the residuals: its inputs are the residuals and the cotangent
    bwd = fg.make_jaxpr(lambda *a: fg.tree_util.tree_unflatten(tree, a[:-1])(a[-1]))(*res, y).jaxpr
    assert len(bwd.invars) == len(res) + 1 and "cos" in str(bwd)
    # other residual values give the backward pass at those values (here: the point scaled by 0)
    zeros = fg.tree_util.tree_unflatten(tree, [r * 0 for r in res])(np.float32(1.0))
    np.testing.assert_allclose(zeros[0], np.zeros((2, 3)), atol=0)


def test_grad_argnums_and_has_aux():
    f = lambda x, y, z: (jnp.sum(x * y * z), {"aux": x + 1.0})
    x, y, z = np.float64(2.0), np.float64(3.0), np.float64(5.0)
    (gx, gz), aux = fg.grad(f, argnums=(0, 2), has_aux=True)(x, y, z)
    assert float(gx) == 15.0 and float(gz) == 6.0
    assert float(aux["aux"]) == 3.0
    (v, aux2), g = fg.value_and_grad(f, argnums=1, has_aux=True)(x, y, z)
    assert float(v) == 30.0 and float(g) == 10.0


def test_grad_with_pytree_arguments():
    params = {"w": np.array([1.0, 2.0]), "b": np.float64(0.5)}
    f = lambda p, x: jnp.sum(p["w"] * x) + p["b"] ** 2
    g = fg.grad(f)(params, np.array([3.0, 4.0]))
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(g["w"], [3.0, 4.0])
    assert float(g["b"]) == 1.0


def test_grad_through_python_control_flow():
    def f(x):
        y = x
        while y < 10.0:
            y = y * 2.0
        if y > 15.0:
            return y ** 2
        return -y
    # 3 -> 6 -> 12 : -y = -4x, grad -4; 5 -> 10 : ... 10 not < 10 -> -y = -2x -> grad -2
    assert float(fg.grad(f)(np.float64(3.0))) == -4.0
    assert float(fg.grad(f)(np.float64(5.0))) == -2.0
    # 9 -> 18 > 15 : (2x)^2 -> 8x = 72
    assert float(fg.grad(f)(np.float64(9.0))) == 72.0


def test_unused_input_gets_zero_gradient_of_its_shape():
    g = fg.grad(lambda x, y: jnp.sum(x), argnums=1)(np.ones(3), np.ones((2, 2)))
    np.testing.assert_array_equal(g, np.zeros((2, 2)))


def test_nested_grad_perturbation_confusion():
    # d/dx [x * d/dy (x + y)]|_{y=1} = d/dx [x * 1] = 1 (the classic confusion gives 2).
    f = lambda x: x * fg.grad(lambda y: x + y)(np.float64(1.0))
    assert float(fg.grad(f)(np.float64(3.0))) == 1.0


def test_stop_gradient():
    f = lambda x: x * fg.stop_gradient(x)
    assert float(fg.grad(f)(np.float64(3.0))) == 3.0


def test_custom_jvp():
    @fg.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t  # deliberately not cos(x): the rule must be what runs

    x = np.float64(0.3)
    assert float(fg.grad(f)(x)) == 2.0
    assert float(fg.jvp(f, (x,), (np.float64(1.0),))[1]) == 2.0
    assert float(fg.jit(fg.grad(f))(x)) == 2.0
    np.testing.assert_allclose(fg.vmap(fg.grad(f))(np.array([0.1, 0.2])), [2.0, 2.0])
    np.testing.assert_allclose(fg.grad(lambda x: fg.vmap(f)(x).sum())(np.array([0.1, 0.2])), [2.0, 2.0])


def test_custom_jvp_second_order():
    @fg.custom_jvp
    def f(x):
        return x ** 3

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 3.0 * x ** 2 * t

    assert float(fg.grad(fg.grad(f))(np.float64(2.0))) == 12.0


def test_custom_vjp():
    @fg.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(res, g):
        return (jnp.clip(g, -1.0, 1.0),)

    clip_grad.defvjp(fwd, bwd)
    f = lambda x: jnp.sum(clip_grad(x) * 5.0)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(fg.grad(f)(x), [1.0, 1.0])
    np.testing.assert_allclose(fg.jit(fg.grad(f))(x), [1.0, 1.0])
    np.testing.assert_allclose(fg.grad(fg.jit(f))(x), [1.0, 1.0])
    per_ex = fg.vmap(fg.grad(lambda x: clip_grad(x) * 0.5))(x)
    np.testing.assert_allclose(per_ex, [0.5, 0.5])
    with pytest.raises(TypeError, match="custom_vjp"):
        fg.jvp(f, (x,), (x,))


def test_custom_vjp_with_residuals():
    @fg.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), (jnp.cos(x), jnp.sin(x), y)

    def bwd(res, g):
        c, s, y = res
        return (c * y * g, s * g)

    f.defvjp(fwd, bwd)
    x, y = np.float64(0.5), np.float64(2.0)
    gx, gy = fg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose([float(gx), float(gy)], [np.cos(0.5) * 2, np.sin(0.5)], rtol=1e-12)


def test_checkpoint_gives_same_gradients():
    def block(x):
        return jnp.tanh(jnp.sin(x) * 3.0)

    f = lambda x: jnp.sum(fg.checkpoint(block)(x) ** 2)
    g = lambda x: jnp.sum(block(x) ** 2)
    x = np.array([0.1, 0.7, -0.4])
    np.testing.assert_allclose(fg.grad(f)(x), fg.grad(g)(x), rtol=1e-12)
    np.testing.assert_allclose(fg.jit(fg.grad(f))(x), fg.grad(g)(x), rtol=1e-12)
    # second order through checkpoint: d2/dx2 sin x = -sin x
    np.testing.assert_allclose(float(fg.grad(fg.grad(fg.checkpoint(jnp.sin)))(np.float64(0.3))), -np.sin(0.3))
    np.testing.assert_allclose(fg.vmap(fg.grad(lambda x: jnp.sum(fg.checkpoint(block)(x))))(x[:, None]),
                               fg.vmap(fg.grad(lambda x: jnp.sum(block(x))))(x[:, None]), rtol=1e-12)


def test_checkpoint_recomputes_forward_in_backward():
    calls = []

    def block(x):
        calls.append(1)
        return jnp.sin(x)

    f = fg.checkpoint(block)
    fg.grad(lambda x: jnp.sum(f(x)))(np.array([0.1, 0.2]))
    # traced once to a jaxpr; the jaxpr (not the Python function) is re-run for the backward pass
    assert len(calls) == 1
    np.testing.assert_allclose(fg.grad(lambda x: jnp.sum(f(x)))(np.array([0.1, 0.2])), np.cos([0.1, 0.2]))


def test_cotangent_sums_taken_in_place_never_touch_shared_arrays():
    """The backward walk adds later contributions into sums it made itself; arrays it did not make (the
    user's cotangent, a rule's pass-through of a cotangent to two operands) must stay as they were."""
    w = jnp.asarray(np.arange(1.0, 5.0))
    xs = [jnp.asarray(np.full(4, k, np.float64)) for k in range(1, 6)]

    def f(v):
        total = 0.0
        for x in xs:  # v read five times: its cotangent is a sum of five contributions
            y = v * x
            total = total + jnp.sum(y + y)  # add's vjp hands one cotangent to both operands
        return total

    np.testing.assert_allclose(np.asarray(fg.grad(f)(w)), np.full(4, 2.0 * 15))
    ct = jnp.asarray(np.ones(4))
    before = np.asarray(ct).copy()
    _, pull = fg.vjp(lambda v: v * 2.0 + v * 3.0 + v, w)
    (gw,) = pull(ct)
    np.testing.assert_allclose(np.asarray(gw), np.full(4, 6.0))
    np.testing.assert_array_equal(np.asarray(ct), before)  # the user's cotangent is unchanged
    (gw2,) = pull(ct)  # and a second pullback gives the same answer
    np.testing.assert_allclose(np.asarray(gw2), np.full(4, 6.0))
    # higher order: the same walk under an outer trace stays functional
    hess = fg.hessian(lambda v: jnp.sum((v * v) * xs[0] + v * xs[1] + (v * v) * xs[2]))(w)
    np.testing.assert_allclose(np.asarray(hess), np.diag(np.full(4, 2.0 * (1 + 3))))
