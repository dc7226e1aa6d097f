"""Tensor's method table and the torch functions, declared by family (funcgrad/_torch/ops/): each function is
defined in one family module, which lists it in `__all__` (exported at the top level), METHODS (a Tensor method of
the same name) and INPLACE (an `op_` method); `_methods.install` sets every Tensor attribute once, adding torch's
complex-input errors as it does."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import funcgrad
from funcgrad._torch import _complex_reject, _methods, _methods_ops
from funcgrad._torch._tensor import Tensor

FAMILIES = _methods.CORE + _methods_ops.FAMILIES


def _unwrapped(f):
    while hasattr(f, "__wrapped__"):
        f = f.__wrapped__
    return f


def test_each_name_is_declared_by_one_family():
    for what in ("__all__", "METHODS", "INPLACE"):
        counts = collections.Counter(n for fam in FAMILIES for n in getattr(fam, what))
        twice = sorted(n for n, k in counts.items() if k > 1)
        assert not twice, f"declared in two families' {what}: {twice}"


@pytest.mark.parametrize("fam", _methods.CORE, ids=lambda m: m.__name__.rpartition(".")[2])
def test_core_family_is_what_funcgrad_and_tensor_hold(fam):
    for name in fam.__all__:
        assert _unwrapped(getattr(funcgrad, name)) is _unwrapped(getattr(fam, name)), name
    for name in fam.METHODS:
        assert _unwrapped(Tensor.__dict__[name]) is _unwrapped(getattr(fam, name)), name
    for name in fam.INPLACE:
        assert callable(Tensor.__dict__[name + "_"]), name


def test_install_refuses_a_name_declared_twice():
    with pytest.raises(RuntimeError, match="declared twice: \\['_probe_attr'\\]"):
        _methods.install({"_probe_attr": 1}, {"_probe_attr": 2})
    assert not hasattr(Tensor, "_probe_attr")  # (nothing installed)


def test_guard_method_wraps_only_the_ruled_names():
    def f(self):
        return self
    assert _complex_reject.guard_method("add", f) is f  # (no wrapper in front of an op without a rule)
    assert _complex_reject.guard_method("T", property(f)).__class__ is property
    g = _complex_reject.guard_method("floor_", f)
    assert g is not f and g.__wrapped__ is f
    x = funcgrad.ones(2, dtype=funcgrad.complex64)
    with pytest.raises(NotImplementedError, match="floor is not supported for complex inputs"):
        g(x)


def test_installed_methods_carry_torch_complex_errors():
    x = funcgrad.tensor([1 + 1j, 2.0])
    with pytest.raises(NotImplementedError, match="floor is not supported for complex inputs"):
        x.floor_()
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'ComplexFloat'"):
        x < x
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors."):
        x.abs_()
    with pytest.raises(NotImplementedError, match="\"addmm_impl_cpu_\" not implemented for 'Bool'"):
        funcgrad.ones(2, 2, dtype=funcgrad.bool) @ funcgrad.ones(2, 2, dtype=funcgrad.bool)
    y = funcgrad.tensor([3.0, -1.5])
    y += 1
    np.testing.assert_array_equal(y.numpy(), [4.0, -0.5])
    y %= 3
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.5])


def test_complex_errors_match_torch():
    torch = pytest.importorskip("torch")
    for fn in (lambda m, x: x.floor_(), lambda m, x: x < x, lambda m, x: x.abs_(), lambda m, x: m.sort(x)):
        with pytest.raises(Exception) as want:
            fn(torch, torch.tensor([1 + 1j, 2.0]))
        with pytest.raises(want.type) as got:
            fn(funcgrad, funcgrad.tensor([1 + 1j, 2.0]))
        assert str(got.value) == str(want.value)
