"""funcgrad/__init__.py is the facade only: JAX's top-level names (funcgrad/_jax/top.py), torch's
(funcgrad/_torch/top.py), and the names both claim, settled in funcgrad/_claims.py's table."""
from __future__ import annotations

import ast
import pathlib

import numpy as np

import funcgrad
import funcgrad.numpy as jnp
from funcgrad import _claims
from funcgrad._jax import top as jax_top
from funcgrad._torch import top as torch_top


def test_init_is_the_facade_only():
    src = pathlib.Path(funcgrad.__file__).read_text()
    defs = [n.name for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert not defs, f"funcgrad/__init__.py defines {defs}: put them in their face's package"


def test_every_name_both_faces_export_is_settled_in_the_table():
    both = set(jax_top.__all__) & set(torch_top.__all__)
    assert both, "the two faces share names (vmap, jit, random, ...)"
    assert both <= set(_claims.CLAIMS), f"names both faces export without a row in _claims.CLAIMS: " \
                                        f"{sorted(both - set(_claims.CLAIMS))}"
    assert set(_claims.__all__) == set(_claims.CLAIMS)
    for name in _claims.CLAIMS:
        assert getattr(funcgrad, name) is getattr(_claims, name), name


def test_other_names_come_from_their_face():
    claimed = set(_claims.CLAIMS)
    for name in set(jax_top.__all__) - claimed:
        assert getattr(funcgrad, name) is getattr(jax_top, name), name
    for name in set(torch_top.__all__) - claimed:
        assert getattr(funcgrad, name) is getattr(torch_top, name), name


def test_vmap_serves_both_faces():
    # jax.vmap on arrays: in_axes=1 maps over columns
    x = np.arange(6.0).reshape(2, 3)
    out = funcgrad.vmap(lambda c: c.sum(), in_axes=1)(jnp.asarray(x))
    assert isinstance(out, funcgrad.Array)
    np.testing.assert_array_equal(np.asarray(out), x.sum(axis=0))
    # torch.vmap on tensors: Tensors in, Tensors out; in_dims is torch's keyword
    t = funcgrad.tensor(x)
    tout = funcgrad.vmap(lambda c: c.sum(), in_dims=1)(t)
    assert isinstance(tout, funcgrad.Tensor)
    assert tout.tolist() == [3.0, 5.0, 7.0]


def test_jit_is_jax_jit_with_torch_jit_names():
    f = funcgrad.jit(lambda a: a * 2.0 + 1.0)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray([1.0, 2.0]))), [3.0, 5.0])
    model = funcgrad.nn.Linear(2, 1)
    assert funcgrad.jit.script(model) is model  # torch.jit.script hands back the module itself
    assert funcgrad.jit.ScriptModule is funcgrad.nn.Module


def test_shared_packages():
    assert funcgrad.nn.relu is funcgrad._jax.nn.relu and isinstance(funcgrad.nn.ReLU(), funcgrad.nn.Module)
    np.testing.assert_array_equal(np.asarray(funcgrad.nn.relu(jnp.asarray([-1.0, 2.0]))), [0.0, 2.0])
    assert hasattr(funcgrad.random, "PRNGKey") and hasattr(funcgrad.random, "manual_seed")
    assert hasattr(funcgrad.profiler, "TraceAnnotation") and hasattr(funcgrad.profiler, "profile")
    # one ops module: jax.ops' segment_sum of [1, 2, 3, 4] over segments [0, 0, 1, 1] is [3, 7], and torch.ops'
    # namespaces (aten.add.Tensor is 1 + 2 * 3 = 7)
    seg = funcgrad.ops.segment_sum(jnp.asarray([1.0, 2.0, 3.0, 4.0]), jnp.asarray([0, 0, 1, 1]), num_segments=2)
    np.testing.assert_array_equal(np.asarray(seg), [3.0, 7.0])
    assert funcgrad.ops.aten.add.Tensor(funcgrad.tensor([1.0]), funcgrad.tensor([3.0]), alpha=2).tolist() == [7.0]
    assert callable(funcgrad.ops.load_library)
    assert hasattr(funcgrad.distributed, "init_process_group")  # torch.distributed wins
