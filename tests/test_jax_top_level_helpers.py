"""JAX's top-level helpers on funcgrad: custom_gradient, float0, make_mesh and shard_map (one device), process
names, the config context managers, jax.custom_batching (custom_vmap, sequential_vmap), and programs written
against `jax` run through the import shim. Checked against analytic values; against real JAX where installed."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp


# --- top level ----------------------------------------------------------------------------------------
def test_custom_gradient():
    @fg.custom_gradient
    def f(x):
        return jnp.sin(x), lambda g: (g * 100.0,)

    assert float(f(1.0)) == pytest.approx(np.sin(1.0))
    assert float(fg.grad(f)(1.0)) == 100.0
    assert float(fg.jit(fg.grad(f))(1.0)) == 100.0
    np.testing.assert_array_equal(np.asarray(fg.vmap(fg.grad(f))(jnp.ones(3))), [100.0] * 3)

    @fg.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x * 2)

    gx, gy = fg.grad(h, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 4.0)

    @fg.custom_gradient
    def bad(x, y):
        return x * y, lambda g: g

    with pytest.raises(TypeError, match="cotangents"):
        fg.grad(bad)(2.0, 3.0)
    assert fg.custom_derivatives.custom_gradient is fg.custom_gradient
    assert fg.custom_derivatives.custom_jvp is fg.custom_jvp and fg.custom_derivatives.custom_vjp is fg.custom_vjp


def test_float0_for_integer_gradients():
    assert fg.float0.itemsize == 0 and fg.float0.names == ("float0",)
    gx, gi = fg.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert isinstance(gi, np.ndarray) and gi.dtype == fg.float0 and gi.shape == ()
    gi = fg.grad(lambda x, i: (x * i).sum(), argnums=1, allow_int=True)(jnp.ones(3), jnp.arange(3))
    assert gi.dtype == fg.float0 and gi.shape == (3,)
    gj = fg.jit(fg.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True))(2.0, 3)
    assert float(gj[0]) == 3.0 and not np.any(np.asarray(gj[1]))  # under jit: integer zeros
    with pytest.raises(TypeError):
        fg.grad(lambda i: i * 2.0)(3)


def test_float0_tangents_and_cotangents_are_zeros():
    # JAX takes a float0 (co)tangent for an integer or boolean primal/output and treats it as zero
    # (HIPS autograd's grad of a comparison relies on it); on an inexact one it is an error.
    f0 = np.zeros((), fg.float0)
    y, pull = fg.vjp(lambda x, z: (x == z, x * z), 0.7, 1.5)
    gx, gz = pull((f0, 1.0))
    assert (float(gx), float(gz)) == (1.5, 0.7)
    assert [float(g) for g in fg.vjp(lambda x: x > 0, 0.7)[1](f0)] == [0.0]
    out, t = fg.jvp(lambda x, i: x * i, (2.0, 3), (1.0, f0))
    assert (float(out), float(t)) == (6.0, 3.0)
    with pytest.raises(TypeError):
        fg.jvp(lambda x: x * 2.0, (1.5,), (f0,))
    with pytest.raises(ValueError):
        fg.vjp(lambda x: x * 2.0, 1.5)[1](f0)
    with pytest.raises(ValueError):
        fg.vjp(lambda x: x > 0, jnp.ones(2))[1](f0)  # shape () for an output of shape (2,)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        jf0 = np.zeros((), jax.dtypes.float0)
        want = jax.vjp(lambda x, z: (x == z, x * z), 0.7, 1.5)[1]((jf0, 1.0))
        assert [float(w) for w in want] == [float(gx), float(gz)]
        assert float(jax.jvp(lambda x, i: x * i, (2.0, 3), (1.0, jf0))[1]) == float(t)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_make_mesh_and_shard_map_one_device():
    mesh = fg.make_mesh((1,), ("data",))
    assert mesh.shape == {"data": 1} and mesh.axis_names == ("data",)
    with pytest.raises(ValueError):
        fg.make_mesh((len(fg.devices()) + 1,), ("data",))
    assert fg.NamedSharding is fg.sharding.NamedSharding and fg.P is fg.sharding.PartitionSpec

    def body(a, b):
        return fg.lax.psum(a * b, "data"), a

    sm = fg.shard_map(body, mesh=mesh, in_specs=(fg.P("data"), fg.P()), out_specs=(fg.P(), fg.P("data")))
    x = jnp.arange(4.0)
    for fn in (sm, fg.jit(sm)):
        s, a = fn(x, 2 * jnp.ones(4))
        np.testing.assert_array_equal(np.asarray(s), [0, 2, 4, 6])
        np.testing.assert_array_equal(np.asarray(a), [0, 1, 2, 3])
    g = fg.grad(lambda v: sm(v, v)[0].sum())(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * np.arange(4.0))
    with pytest.raises(ValueError, match="model"):
        fg.shard_map(body, mesh=mesh, in_specs=(fg.P("model"), fg.P()), out_specs=fg.P())(x, x)
    with pytest.raises(ValueError, match="rank"):
        fg.shard_map(body, mesh=mesh, in_specs=(fg.P("data", None), fg.P()), out_specs=fg.P())(x, x)
    deco = fg.shard_map(mesh=mesh, in_specs=fg.P(), out_specs=fg.P())(lambda v: v + 1)
    np.testing.assert_array_equal(np.asarray(deco(x)), np.arange(4.0) + 1)


def test_process_names_and_modules():
    assert (fg.host_count(), fg.host_id(), fg.host_ids(), fg.process_indices()) == (1, 0, [0], [0])
    assert fg.stages.Wrapped is type(fg.jit(lambda v: v))
    low = fg.jit(lambda v: v + 1).lower(1.0)
    assert isinstance(low, fg.stages.Lowered) and isinstance(low.compile(), fg.stages.Compiled)
    assert fg.typing.ArrayLike is not None and fg.typing.DTypeLike is not None
    np.testing.assert_array_equal(np.asarray(fg.dlpack.from_dlpack(np.arange(3.0))), [0.0, 1.0, 2.0])
    a = fg.dlpack.from_dlpack(jnp.arange(3))
    assert isinstance(a, fg.Array) and np.asarray(a).tolist() == [0, 1, 2]
    assert fg.dlpack.is_supported_dtype(np.float32) and not fg.dlpack.is_supported_dtype(object)
    with pytest.raises(TypeError):
        fg.dlpack.from_dlpack([1, 2])


def test_config_context_managers():
    assert fg.debug_nans.value is False
    with fg.debug_nans(True):
        assert fg.debug_nans.value is True
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.array(-1.0))
    assert fg.debug_nans.value is False
    with fg.debug_infs(True):
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.array(0.0))
    with fg.enable_x64(False):
        assert jnp.array(1.0).dtype == np.float32
        with fg.enable_x64(True):
            assert jnp.array(1.0).dtype == np.float64
        assert jnp.array(1.0).dtype == np.float32
    with fg.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError):
            jnp.ones(3) + jnp.ones((2, 3))
    assert fg.numpy_rank_promotion.value == "allow"
    with fg.default_matmul_precision("highest"):
        assert fg.default_matmul_precision.value == "highest"
    assert fg.default_matmul_precision.value is None
    with fg.log_compiles(True):
        assert fg.config.read("log_compiles")
    assert not fg.config.read("log_compiles")
    with fg.checking_leaks(), fg.transfer_guard("allow"), fg.enable_checks(True):
        pass
    with pytest.raises(ValueError):
        with fg.numpy_rank_promotion("sometimes"):
            pass


def test_top_level_matches_jax():
    jax = pytest.importorskip("jax")
    assert fg.float0 == jax.float0
    f_j = jax.custom_gradient(lambda x: (jax.numpy.sin(x) * x, lambda g: (g * jax.numpy.cos(x),)))
    f_f = fg.custom_gradient(lambda x: (jnp.sin(x) * x, lambda g: (g * jnp.cos(x),)))
    assert float(fg.grad(f_f)(0.7)) == pytest.approx(float(jax.grad(f_j)(0.7)), rel=1e-6)
    names = ["custom_gradient", "float0", "make_mesh", "shard_map", "host_count", "host_id", "host_ids",
             "process_indices", "numpy_rank_promotion", "debug_nans", "debug_infs", "enable_x64",
             "default_matmul_precision", "log_compiles", "NamedSharding", "P", "typing", "stages", "dlpack",
             "custom_derivatives", "custom_batching", "checking_leaks", "transfer_guard"]
    assert [n for n in names if not hasattr(jax, n)] == []
    for mod in ("typing", "stages"):
        assert set(getattr(fg, mod).__all__) <= set(dir(getattr(jax, mod)))


# --- custom_batching ----------------------------------------------------------------------------------
def test_custom_vmap_uses_the_rule():
    from funcgrad.custom_batching import custom_vmap
    seen = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        seen.append((axis_size, list(in_batched)))
        return jnp.sin(x) * y + 100.0, any(in_batched)

    x = jnp.arange(3.0)
    assert float(f(1.0, 2.0)) == pytest.approx(2 * np.sin(1.0))
    np.testing.assert_allclose(np.asarray(fg.vmap(f)(x, x)), np.sin(x) * x + 100, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(fg.vmap(f, in_axes=(0, None))(x, 2.0)), 2 * np.sin(x) + 100, rtol=1e-6)
    assert seen == [(3, [True, True]), (3, [True, False])]
    np.testing.assert_allclose(np.asarray(fg.jit(fg.vmap(f))(x, x)), np.sin(x) * x + 100, rtol=1e-6)
    assert float(fg.grad(f)(1.0, 2.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
    g = fg.grad(lambda a: fg.vmap(f)(a, a).sum())(x)  # through the rule's computation
    np.testing.assert_allclose(np.asarray(g), np.cos(x) * x + np.sin(x), rtol=1e-6)
    with pytest.raises(AttributeError):
        fg.vmap(custom_vmap(lambda v: v))(x)


def test_sequential_vmap_loops():
    from funcgrad.custom_batching import sequential_vmap
    calls = []

    def g(v):
        calls.append(v.shape)
        return v * 2, v.sum()

    sg = sequential_vmap(g)
    a, s = fg.vmap(sg)(jnp.ones((4, 2)))
    np.testing.assert_array_equal(np.asarray(a), 2 * np.ones((4, 2)))
    np.testing.assert_array_equal(np.asarray(s), [2.0] * 4)
    assert calls.count((2,)) >= 5  # traced once, then once per batch member


def test_custom_vmap_matches_jax():
    jax = pytest.importorskip("jax")
    def make(lib, np_):
        f = lib.custom_batching.custom_vmap(lambda x, y: np_.sin(x) * y)
        f.def_vmap(lambda n, b, x, y: (np_.sin(x) * y + n, b[0] or b[1]))
        return f
    fj, ff = make(jax, jax.numpy), make(fg, jnp)
    x = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(fg.vmap(ff, in_axes=(0, None))(x, 2.0)),
                               np.asarray(jax.vmap(fj, in_axes=(0, None))(x, 2.0)), rtol=1e-6)


def test_programs_through_the_shim():
    import sys
    import os
    sys.path.insert(0, os.path.dirname(__file__))
    from jax_shim import jax_is_funcgrad
    program = """
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.experimental.shard_map import shard_map
from jax.experimental import mesh_utils
from jax.sharding import Mesh, PartitionSpec as P
import jax.image, jax.ops

mesh = Mesh(mesh_utils.create_device_mesh((1,)), ("batch",))
step = shard_map(lambda x: lax.pmean(x.sum(), "batch"), mesh, in_specs=P("batch"), out_specs=P())
total = jax.jit(step)(jnp.arange(6.0))
seg = jax.ops.segment_sum(jnp.arange(6.0), jnp.array([0, 0, 1, 1, 2, 2]), num_segments=3)
img = jax.image.resize(jnp.ones((4, 4, 3)), (8, 8, 3), "bilinear")
with jax.debug_nans(False), jax.numpy_rank_promotion("allow"):
    g = jax.grad(jax.custom_gradient(lambda x: (x * x, lambda ct: (3.0 * ct,))))(2.0)
result = (float(total), np.asarray(seg).tolist(), img.shape, float(g))
"""
    ns = {}
    with jax_is_funcgrad():
        exec(program, ns)
    assert ns["result"] == (15.0, [1.0, 5.0, 9.0], (8, 8, 3), 3.0)


def test_explicit_sharding_names_set_mesh_and_reshard_as_jax():
    # JAX's examples/spmd_mnist_classifier_fromscratch.py: make_mesh(..., axis_types=(AxisType.Explicit,)),
    # `with jax.set_mesh(mesh):` and reshard(x, NamedSharding(mesh, P("batch")))
    jax = pytest.importorskip("jax")
    from funcgrad.sharding import AxisType, NamedSharding, PartitionSpec as P, reshard
    assert [(a.name, a.value) for a in AxisType] == [(a.name, a.value) for a in jax.sharding.AxisType]
    assert fg.make_mesh((1,), ("b",)).axis_types == (AxisType.Explicit,)  # (JAX's make_mesh default)
    assert [t.name for t in jax.make_mesh((1,), ("b",)).axis_types] == ["Explicit"]
    mesh = fg.make_mesh((1,), ("batch",), axis_types=(AxisType.Auto,))
    assert mesh.axis_types == (AxisType.Auto,)
    with pytest.raises(ValueError, match="axis_types"):
        fg.make_mesh((1,), ("batch",), axis_types=(AxisType.Auto, AxisType.Auto))
    x = {"w": np.arange(8.0, dtype=np.float32).reshape(4, 2), "b": np.ones(4, np.float32)}
    with pytest.raises(ValueError) as ours:
        reshard(x, P("batch"))
    with pytest.raises(ValueError) as theirs:
        jax.sharding.reshard(x, jax.sharding.PartitionSpec("batch"))
    assert str(ours.value) == str(theirs.value)
    with fg.set_mesh(mesh) as m:
        assert m is None  # (as JAX's)
        y = reshard(x, P("batch"))
        z = reshard(x, {"w": NamedSharding(mesh, P("batch")), "b": P()})
    for out in (y, z):
        for k in x:
            np.testing.assert_array_equal(out[k], x[k])
            assert out[k].devices() == {mesh.devices.flat[0]}  # (one device: the mesh's)
    with pytest.raises(ValueError):  # the block's mesh is gone again
        reshard(x, P())
    fg.set_mesh(mesh)  # (a global setter as well)
    try:
        np.testing.assert_array_equal(reshard(x["b"], P()), x["b"])
    finally:
        fg.set_mesh(None)
