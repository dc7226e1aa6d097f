"""Comparing the torch face with real PyTorch: `check` runs one function on funcgrad and on torch and compares
values, dtypes and the gradients of a random weighting of the outputs (`check_one`: one input, fixed weights);
`err_or_val` gives a call's value or its error for comparison; `r`, `pos`, `spd` make float64 test data
(normal, positive, symmetric positive definite) from one seeded generator."""
from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _to(lib, x, rg):
    if isinstance(x, np.ndarray):
        t = lib.tensor(x)
        if rg and x.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    return x


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def as_numpy(t):
    return t.detach().resolve_conj().numpy() if hasattr(t, "detach") else np.asarray(t)


def check(fn, *args, grad=True, rtol=1e-5, atol=1e-6):
    """fn(lib, *tensors) agrees between torch and funcgrad: values, dtypes, and gradients of a random
    weighting of the float outputs with respect to every float input."""
    ft = [_to(fg, a, grad) for a in args]
    tt = [_to(torch, a, grad) for a in args]
    fo, to = _flat(fn(fg, *ft)), _flat(fn(torch, *tt))
    assert len(fo) == len(to)
    for a, b in zip(fo, to):
        if not hasattr(b, "dtype"):
            assert a == b
            continue
        assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(as_numpy(a), as_numpy(b), rtol=rtol, atol=atol, equal_nan=True)
    if not grad:
        return
    ins = [(f, t) for f, t in zip(ft, tt) if hasattr(t, "requires_grad") and t.requires_grad]
    outs = [(a, b) for a, b in zip(fo, to) if hasattr(b, "requires_grad") and b.requires_grad]
    if not ins or not outs:
        return
    ws = [RNG.standard_normal(tuple(b.shape)) for _, b in outs]

    def loss(lib, ys):  # a real scalar (the real part of complex outputs)
        terms = [(y * lib.tensor(w.astype(as_numpy(y).real.dtype))) for y, w in zip(ys, ws)]
        return sum((t.real if t.is_complex() else t).sum() for t in terms)
    lf = loss(fg, [a for a, _ in outs])
    lt = loss(torch, [b for _, b in outs])
    gf = fg.autograd.grad(lf, [f for f, _ in ins], allow_unused=True)
    gt = torch.autograd.grad(lt, [t for _, t in ins], allow_unused=True)
    for a, b in zip(gf, gt):
        if a is None or b is None:  # an unused input: None on one side, zeros (or None) on the other
            assert all(g is None or np.allclose(as_numpy(g), 0) for g in (a, b))
            continue
        np.testing.assert_allclose(as_numpy(a), as_numpy(b), rtol=rtol * 10, atol=atol * 10)


def r(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def pos(*shape, dtype=np.float64):
    return (RNG.random(shape) + 0.5).astype(dtype)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def err_or_val(f, m):
    """("value", repr of f(m)) or ("raise", exception type, message start): compare torch's with funcgrad's."""
    try:
        r = f(m)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e), str(e)[:60])
    return ("value", repr(r) if not isinstance(r, tuple) else r)


def check_one(f, x, grad=True):
    """f(lib, t) agrees between torch and funcgrad for one float input: values, shape, dtype and (grad=True)
    the gradient of a fixed random weighting of the output."""
    xt = torch.tensor(x, requires_grad=grad)
    xf = fg.tensor(x, requires_grad=grad)
    rt, rf = f(torch, xt), f(fg, xf)
    np.testing.assert_allclose(rf.detach().numpy(), rt.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert rf.shape == rt.shape and str(rf.dtype) == str(rt.dtype)
    if grad:
        w = np.random.RandomState(1).randn(*rt.shape)
        rt.backward(torch.tensor(w, dtype=rt.dtype))
        rf.backward(fg.tensor(w, dtype=rf.dtype))
        np.testing.assert_allclose(xf.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
