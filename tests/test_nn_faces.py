"""One formula per activation across the faces: torch.nn.functional's activations (and their nn modules) are
jax.nn's computation with torch's names, defaults and kink conventions, so on points away from kinks the two
faces give bit-identical values and first derivatives; the torch face still matches torch (importorskip) and
both match the closed forms."""
import math

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as nn
import funcgrad.nn.functional as F
import funcgrad.numpy as jnp
import funcgrad.scipy.special as jsp

SELU = (1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def _phi(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _sig(x):
    return 1 / (1 + np.exp(-x))


# name -> (torch-face function, JAX-face function, closed form in float64)
PAIRS = {
    "gelu": (F.gelu, lambda x: nn.gelu(x, approximate=False), lambda x: x * _phi(x)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), nn.gelu,
                  lambda x: x / 2 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, nn.silu, lambda x: x * _sig(x)),
    "mish": (F.mish, nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0))),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: nn.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    "selu": (F.selu, nn.selu, lambda x: SELU[1] * np.where(x > 0, x, SELU[0] * np.expm1(x))),
    "celu": (lambda x: F.celu(x, 0.5), lambda x: nn.celu(x, 0.5),
             lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5))),
    "softplus": (F.softplus, nn.softplus, lambda x: np.logaddexp(x, 0)),
    "log_sigmoid": (F.logsigmoid, nn.log_sigmoid, lambda x: -np.logaddexp(-x, 0)),
    "sigmoid": (F.sigmoid, nn.sigmoid, _sig),
    "tanh": (F.tanh, nn.tanh, np.tanh),
    "relu": (F.relu, nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, nn.relu6, lambda x: np.clip(x, 0, 6)),
    "hard_tanh": (F.hardtanh, nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (F.hardsigmoid, nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_swish": (F.hardswish, nn.hard_swish, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: nn.leaky_relu(x, 0.2),
                   lambda x: np.where(x > 0, x, 0.2 * x)),
    "soft_sign": (F.softsign, nn.soft_sign, lambda x: x / (1 + np.abs(x))),
    "glu": (lambda x: F.glu(x, -1), lambda x: nn.glu(x, -1),
            lambda x: x[..., :x.shape[-1] // 2] * _sig(x[..., x.shape[-1] // 2:])),
    "softmax": (lambda x: F.softmax(x, -1), lambda x: nn.softmax(x, axis=-1),
                lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    "log_softmax": (lambda x: F.log_softmax(x, 0), lambda x: nn.log_softmax(x, axis=0),
                    lambda x: x - np.log(np.exp(x).sum(0, keepdims=True))),
    # the modules and torch's top-level functions are the same computation
    "nn.GELU": (nn.GELU(), lambda x: nn.gelu(x, approximate=False), lambda x: x * _phi(x)),
    "nn.GELU(tanh)": (nn.GELU("tanh"), nn.gelu, None),
    "nn.SiLU": (nn.SiLU(), nn.silu, None),
    "nn.Mish": (nn.Mish(), nn.mish, None),
    "nn.Hardswish": (nn.Hardswish(), nn.hard_swish, None),
    "nn.Softplus": (nn.Softplus(), nn.softplus, None),
    "nn.CELU": (nn.CELU(1.3), lambda x: nn.celu(x, 1.3), None),
    "nn.Softmax": (nn.Softmax(1), lambda x: nn.softmax(x, axis=1), None),
    "torch.softmax": (lambda x: fg.softmax(x, 1), lambda x: nn.softmax(x, axis=1), None),
    "torch.log_softmax": (lambda x: fg.log_softmax(x, 1), lambda x: nn.log_softmax(x, axis=1), None),
}


# celu and relu are one card each on both faces (the elu card with input scale 1 / alpha; the relu card), so even
# their first derivatives agree bit for bit; only the conventions at the kinks differ (tested below).
VALUE_ONLY = set()


def _inputs(dtype, seed=0):
    """Random points of both signs (no point at a kink: 0, +-1, +-3, 6 are hit with probability 0)."""
    return (np.random.RandomState(seed).randn(5, 8) * 3).astype(dtype)


def _jax_face(fn, x):
    """The JAX face's value and d/dx sum(fn(x) * w), in x's dtype (x64 on for float64, as JAX needs)."""
    w = np.linspace(-1.5, 2.0, fn(jnp.asarray(x)).size).reshape(fn(jnp.asarray(x)).shape).astype(x.dtype)
    y = fg.grad(lambda a: jnp.sum(fn(a) * w))(jnp.asarray(x))
    return np.asarray(fn(jnp.asarray(x))), np.asarray(y), w


def _torch_face(fn, x, w):
    t = fg.tensor(x, requires_grad=True)
    y = fn(t)
    (y * fg.from_numpy(w)).sum().backward()
    return y.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_torch_and_jax_faces_bit_identical(name, dtype):
    tf, jf, exact = PAIRS[name]
    x = _inputs(dtype)
    with fg.enable_x64(dtype == "float64"):
        jval, jgrad, w = _jax_face(jf, x)
    tval, tgrad = _torch_face(tf, x, w)
    assert tval.dtype == jval.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(tval, jval, err_msg=f"{name}: values differ between the faces")
    if name not in VALUE_ONLY:
        np.testing.assert_array_equal(tgrad, jgrad, err_msg=f"{name}: derivatives differ between the faces")
    if exact is not None:  # both against the closed form
        tol = 2e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(tval, exact(x.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(n for n in PAIRS if not n.startswith(("nn.", "torch."))))
def test_torch_face_still_matches_torch(name):
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    ref = {"gelu": TF.gelu, "gelu_tanh": lambda x: TF.gelu(x, approximate="tanh"), "silu": TF.silu,
           "mish": TF.mish, "elu": lambda x: TF.elu(x, 0.7), "selu": TF.selu, "celu": lambda x: TF.celu(x, 0.5),
           "softplus": TF.softplus, "log_sigmoid": TF.logsigmoid, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
           "relu": TF.relu, "relu6": TF.relu6, "hard_tanh": TF.hardtanh, "hard_sigmoid": TF.hardsigmoid,
           "hard_swish": TF.hardswish, "leaky_relu": lambda x: TF.leaky_relu(x, 0.2), "soft_sign": TF.softsign,
           "glu": lambda x: TF.glu(x, -1), "softmax": lambda x: TF.softmax(x, -1),
           "log_softmax": lambda x: TF.log_softmax(x, 0)}[name]
    # (celu with alpha = 0.5: torch rounds 1 / alpha to float32 in its float64 backward)
    for dtype, tol in (("float32", 1e-5), ("float64", 1e-12)):
        x = _inputs(dtype, seed=1)
        w = np.linspace(-1.5, 2.0, 40).reshape(5, 8)[:, :PAIRS[name][1](jnp.asarray(x)).shape[-1]]
        w = np.ascontiguousarray(w[: PAIRS[name][1](jnp.asarray(x)).shape[0]]).astype(dtype)
        tval, tgrad = _torch_face(PAIRS[name][0], x, w)
        tt = torch.tensor(x, requires_grad=True)
        ty = ref(tt)
        (ty * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(tval, ty.detach().numpy(), rtol=tol, atol=tol)
        # (torch's hardsigmoid backward multiplies by 1/6 rounded to float32, also for float64)
        gtol = 1e-7 if name == "hard_sigmoid" else tol
        np.testing.assert_allclose(tgrad, tt.grad.numpy(), rtol=gtol, atol=gtol)


def test_jax_face_imports_nothing_of_the_torch_face():
    """funcgrad._jax.nn (jax.nn's functions) reaches no torch-face module through its module-level imports."""
    import ast
    import pathlib
    root = pathlib.Path(fg.__file__).parent

    def imports(mod):
        rel = mod.split(".")[1:]
        path = root.joinpath(*rel).with_suffix(".py")
        if not path.exists():
            path = root.joinpath(*rel, "__init__.py")
        if not path.exists():
            return set()
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                if base.startswith("funcgrad"):
                    out.add(base)
                    out |= {f"{base}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                out |= {a.name for a in node.names if a.name.startswith("funcgrad.")}
        return out

    torch_face = ("funcgrad.tensor", "funcgrad._torch", "funcgrad.nn", "funcgrad.autograd", "funcgrad.optim", "funcgrad._torch")
    seen, todo = set(), ["funcgrad._jax.nn", "funcgrad._jax.initializers"]
    while todo:
        m = todo.pop()
        if m in seen or m == "funcgrad":  # (the facade imports both faces; `from .. import lax` names it)
            continue
        seen.add(m)
        assert not m.startswith(torch_face), f"the JAX face's nn reaches the torch face: {m}"
        todo += sorted(imports(m))


# --- the kink conventions of the shared relu and celu cards ------------------------------------------------

def test_relu_one_card_faces_differ_only_at_kinks():
    """jax.nn.relu and torch.relu bind the relu card: JAX gives 0.0 at -0.0 and derivative 0 at 0 and NaN, torch
    gives -0.0 at -0.0 and derivative 0 at 0, 1 at NaN; a select, so an infinite cotangent at x < 0 gives 0."""
    x = np.array([-0.0, 0.0, -1.5, 2.0, np.nan, -np.inf, np.inf])
    jv = np.asarray(nn.relu(jnp.asarray(x)))
    tv = F.relu(fg.tensor(x)).numpy()
    np.testing.assert_array_equal(jv, [0, 0, 0, 2, np.nan, 0, np.inf])
    np.testing.assert_array_equal(tv, jv)
    assert not np.signbit(jv[0]) and np.signbit(tv[0])
    jg = np.asarray(fg.vmap(fg.grad(nn.relu))(jnp.asarray(x)))
    np.testing.assert_array_equal(jg, [0, 0, 0, 1, 0, 0, 1])
    t = fg.tensor(x, requires_grad=True)
    F.relu(t).backward(fg.tensor([1.0, 1, np.inf, 1, 1, np.inf, 1]))
    np.testing.assert_array_equal(t.grad.numpy(), [0, 0, 0, 1, 1, 0, 1])
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    np.testing.assert_array_equal(np.signbit(jv), np.signbit(np.asarray(jax.nn.relu(x))))
    np.testing.assert_array_equal(jg, np.asarray(jax.vmap(jax.grad(jax.nn.relu))(x)))


def test_relu_torch_convention_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.array([-0.0, 0.0, -1.5, 2.0, np.nan, -np.inf, np.inf])
    g = np.array([1.0, 1, np.inf, 1, 1, np.nan, 1])
    t, tt = fg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = F.relu(t), torch.relu(tt)
    np.testing.assert_array_equal(np.signbit(out.detach().numpy()), np.signbit(tout.detach().numpy()))
    out.backward(fg.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())


@pytest.mark.parametrize("alpha", [0.5, 1.3])
def test_celu_one_card_second_derivative_at_zero(alpha):
    """At 0 both faces' celu has derivative 1; the second derivative is 1 / (4 alpha) with JAX's convention (max
    and min split the tie) and 0 with torch's; away from 0 both are exp(x / alpha) / alpha (x < 0) and 0."""
    d2 = fg.grad(fg.grad(lambda v: nn.celu(v, alpha)))
    assert float(fg.grad(lambda v: nn.celu(v, alpha))(0.0)) == 1.0
    assert float(d2(0.0)) == pytest.approx(1 / (4 * alpha), rel=1e-6)
    assert float(d2(-1.0)) == pytest.approx(math.exp(-1 / alpha) / alpha, rel=1e-6)
    assert float(d2(1.0)) == 0.0
    x = fg.tensor([0.0, -1.0], dtype=fg.float64, requires_grad=True)
    g, = fg.autograd.grad(F.celu(x, alpha).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [1.0, math.exp(-1 / alpha)], rtol=1e-12)
    gg, = fg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [0.0, math.exp(-1 / alpha) / alpha], rtol=1e-12)
    # -0.0: JAX's max(x, 0) + ... gives 0.0, torch's elu -0.0
    assert not np.signbit(float(nn.celu(jnp.asarray(-0.0), alpha)))
    assert np.signbit(F.celu(fg.tensor([-0.0]), alpha).numpy()[0])
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    assert float(jax.grad(jax.grad(lambda v: jax.nn.celu(v, alpha)))(0.0)) == pytest.approx(1 / (4 * alpha))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_scipy_special_softmax_is_jax_nn_formula(name, axis):
    """jax.scipy.special.softmax/log_softmax are jax.nn's (JAX defines them so): equal bits, values and
    gradients, and the exact value."""
    x = jnp.array([[1.5, -2.0, 0.25], [3.0, 3.0, -1.0]], dtype=jnp.float32)
    ours, nn_ = getattr(jsp, name), getattr(fg.nn, name)
    axis_nn = tuple(range(x.ndim)) if axis is None else axis
    np.testing.assert_array_equal(np.asarray(ours(x, axis=axis)), np.asarray(nn_(x, axis=axis_nn)))
    g1 = fg.grad(lambda v: (ours(v, axis=axis) * jnp.arange(6.).reshape(2, 3)).sum())(x)
    g2 = fg.grad(lambda v: (nn_(v, axis=axis_nn) * jnp.arange(6.).reshape(2, 3)).sum())(x)
    np.testing.assert_array_equal(np.asarray(g1), np.asarray(g2))
    xv = np.asarray(x, np.float64)
    lse = np.log(np.exp(xv).sum(axis=axis_nn, keepdims=True))
    exact = np.exp(xv - lse) if name == "softmax" else xv - lse
    np.testing.assert_allclose(np.asarray(ours(x, axis=axis)), exact, rtol=1e-6, atol=1e-6)
