"""JAX's smaller top-level modules on funcgrad: errors, sharding (one device), flatten_util, profiler
annotations, experimental.enable_x64, default_device, make_jaxpr(...).jaxpr."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding


def test_tracer_conversion_errors_have_jax_names_and_bases():
    e = fg.errors
    for cls in (e.TracerBoolConversionError, e.TracerIntegerConversionError, e.TracerArrayConversionError):
        assert issubclass(cls, e.ConcretizationTypeError) and issubclass(cls, TypeError)
    with pytest.raises(e.TracerBoolConversionError, match="bool"):
        fg.jit(lambda a: 1.0 if a > 0 else 0.0)(jnp.array(1.0))
    with pytest.raises(e.TracerIntegerConversionError):
        fg.jit(lambda n: jnp.zeros(n))(3)
    with pytest.raises(e.TracerArrayConversionError):
        fg.jit(lambda a: np.asarray(a))(jnp.ones(2))
    with pytest.raises(e.UnexpectedTracerError):
        leaked = []
        fg.jit(lambda a: leaked.append(a) or a)(jnp.ones(2))
        leaked[0] + 1


def test_one_device_shardings():
    dev = fg.devices()[0]
    mesh = Mesh(np.array(fg.devices()), ("data",))
    assert mesh.shape == {"data": 1} and mesh.size == 1
    s = NamedSharding(mesh, P("data", None))
    x = fg.device_put(np.arange(4.0).reshape(2, 2), s)
    assert isinstance(x, fg.Array) and x.dtype == np.float32  # x64 off (this module's mode): canonicalised, as JAX
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0).reshape(2, 2))
    assert x.sharding == s and x.sharding.device_set == {dev}   # (JAX's: the NamedSharding it was put with)
    assert (x * 2).sharding == SingleDeviceSharding(dev)        # (JAX propagates it; funcgrad does not yet)
    y = fg.jit(lambda a: fg.lax.with_sharding_constraint(a * 2, s))(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(4.0).reshape(2, 2))
    with pytest.raises(ValueError, match="'model'"):
        NamedSharding(mesh, P("model"))
    two = Mesh(np.array([dev, dev]), ("data",))
    with pytest.raises(NotImplementedError, match="2 devices"):
        fg.device_put(np.ones(2), NamedSharding(two, P()))
    with pytest.raises(TypeError, match="Device or a Sharding"):
        fg.device_put(np.ones(2), "cpu")


def test_device_put_with_a_named_sharding_as_jax():
    """device_put(x, NamedSharding) gives arrays that carry that sharding (x.sharding is it), leaf by leaf
    of a pytree, with JAX's ValueError for a spec longer than a value's rank. Was: SingleDeviceSharding."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp

    def outcome(lib, np_, spec, v):
        mesh = lib.make_mesh((1,), ("x",))
        try:
            leaves = lib.tree_util.tree_leaves(lib.device_put(v, lib.sharding.NamedSharding(mesh, spec)))
        except ValueError as e:
            return str(e).split("is only valid")[1]
        return [(type(a.sharding).__name__, tuple(a.sharding.spec), a.sharding.mesh.axis_names, a.dtype,
                 a.weak_type, a.shape, np.asarray(a).tolist()) for a in leaves]

    for spec in ("x",), (), (None,), ("x", None):
        for v in [np.arange(4.0, dtype=np.float32), np.ones((2, 3), np.float32), {"a": np.ones(2, np.float32), "b": np.zeros((3, 1), np.float32)}]:
            assert outcome(fg, jnp, P(*spec), v) == outcome(jax, jjnp, jax.sharding.PartitionSpec(*spec), v)
    from funcgrad.experimental import enable_x64
    with enable_x64(bool(jax.config.read("jax_enable_x64"))):  # (JAX's mode, which another test may have left on)
        for spec in (), (None,):   # a Python scalar: weakly typed; rank 0 takes only P()
            assert outcome(fg, jnp, P(*spec), 1.0) == outcome(jax, jjnp, jax.sharding.PartitionSpec(*spec), 1.0)


def test_default_device_and_device_put():
    cpu = fg.devices("cpu")[0]
    with fg.default_device(cpu):
        assert fg.device_put(1.5).device == cpu
    placed = fg.device_put({"a": [1.0, np.ones(2)]})  # lists are pytrees: each leaf placed
    assert [v.device for v in placed["a"]] == [cpu, cpu] and isinstance(placed["a"], list)


def test_ravel_pytree_round_trip_dtypes_and_gradient():
    tree = {"w": jnp.arange(6.0).reshape(2, 3), "b": (jnp.ones(2), jnp.array([7, 8], dtype=np.int32))}
    flat, unravel = fg.flatten_util.ravel_pytree(tree)
    assert flat.shape == (10,)
    np.testing.assert_array_equal(np.asarray(flat), [1, 1, 7, 8, 0, 1, 2, 3, 4, 5])  # keys in sorted order
    back = unravel(flat)
    assert back["w"].shape == (2, 3) and back["b"][1].dtype == np.int32 and back["w"].dtype == np.float32
    np.testing.assert_array_equal(np.asarray(back["b"][1]), [7, 8])
    floats = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(2)}
    f, unr = fg.flatten_util.ravel_pytree(floats)
    g = fg.grad(lambda v: jnp.sum(unr(v)["w"] ** 2) + jnp.sum(unr(v)["b"]))(f)
    np.testing.assert_allclose(np.asarray(g), [1, 1, 0, 2, 4, 6, 8, 10])
    jv = fg.jit(lambda v: fg.flatten_util.ravel_pytree(unr(v * 2))[0])(f)
    np.testing.assert_allclose(np.asarray(jv), 2 * np.asarray(f))
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        unr(jnp.ones(3))


def test_experimental_x64_contexts():
    assert jnp.zeros(1).dtype == np.float32
    with fg.experimental.enable_x64():
        assert jnp.zeros(1).dtype == np.float64
        with fg.experimental.disable_x64():
            assert jnp.zeros(1).dtype == np.float32
        assert jnp.zeros(1).dtype == np.float64
    assert jnp.zeros(1).dtype == np.float32


def test_profiler_annotations_leave_results_alone():
    @fg.profiler.annotate_function
    def f(x):
        with fg.profiler.TraceAnnotation("inner"), fg.profiler.StepTraceAnnotation("step", step_num=1):
            return x * 3
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2))), [3, 3])
    with pytest.warns(UserWarning, match="no device trace"):
        with fg.profiler.trace("/tmp/unused-trace-dir"):
            pass


def test_make_jaxpr_result_has_closed_jaxpr_attributes():
    closed = fg.make_jaxpr(lambda a: jnp.sin(a) * 2.0)(jnp.ones(3))
    assert closed.jaxpr is closed
    assert [e.prim.name for e in closed.jaxpr.eqns][:1] == ["sin"]
    assert closed.literals == closed.consts and [a.shape for a in closed.in_avals] == [(3,)]


def test_numpy_2_removed_aliases_jax_keeps():
    assert jnp.float_(1.5).dtype == np.float32 and jnp.zeros(2, dtype=jnp.complex_).dtype == np.complex64  # x64 off
    with fg.enable_x64(True):  # (funcgrad's aliases name the mode's default type; JAX's always name the 64-bit one)
        assert jnp.float_ is jnp.float64 and jnp.complex_ is jnp.complex128
        assert jnp.float_(1.5).dtype == np.float64 and jnp.zeros(2, dtype=jnp.complex_).dtype == np.complex128
