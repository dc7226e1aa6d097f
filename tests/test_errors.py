"""Bad input gets a clear error of the type a JAX/NumPy user expects, naming what went wrong and where."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.core.primitive import registry


def test_grad_of_non_scalar_output():
    with pytest.raises(TypeError, match=r"scalar.*shape \(3,\).*(vjp|jacrev)"):
        fg.grad(lambda x: x * 2.0)(np.ones(3))


def test_grad_with_respect_to_integer_input():
    with pytest.raises(TypeError, match="int64"):
        fg.grad(lambda x: x * 2)(np.int64(3))


def test_bad_argnums():
    with pytest.raises(TypeError, match="argnums 2"):  # JAX: TypeError (too few positional arguments)
        fg.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    with pytest.raises(ValueError, match="argnums -3"):
        fg.grad(lambda x, y: x * y, argnums=-3)(1.0, 2.0)


def test_bad_in_axes():
    with pytest.raises(ValueError, match="in_axes"):
        fg.vmap(lambda x: x, in_axes=(0, 0))(np.ones(3))
    with pytest.raises(ValueError, match="out of range"):
        fg.vmap(lambda x: x, in_axes=2)(np.ones((3, 2)))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        fg.vmap(lambda x, y: x + y)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="in_axes must be an int"):
        fg.vmap(lambda x: x, in_axes="a")


def test_shape_mismatch_names_operation_shapes_and_line():
    with pytest.raises(ValueError, match=r"add.*\(3,\).*\(4,\).*test_errors.py"):
        jnp.add(jnp.ones(3), jnp.ones(4))


def test_matmul_shape_mismatch():
    with pytest.raises((ValueError, TypeError), match=r"\(2, 3\).*\(4, 5\)"):
        jnp.ones((2, 3)) @ jnp.ones((4, 5))


def test_primitive_shape_rule_names_line_under_jit():
    from funcgrad._src.prims import elementwise as ew

    def f(x, y):
        return ew.add(x, y)

    with pytest.raises(TypeError, match=r"add.*f32\[3\].*f32\[4\].*test_errors.py"):
        fg.jit(f)(jnp.ones(3), jnp.ones(4))


def test_concretization_error_under_jit_names_user_line():
    def f(x):
        if x > 0:  # the offending line
            return x
        return -x

    with pytest.raises(fg.ConcretizationError, match=r"test_errors.py:\d+.*static_argnums.*cond"):
        fg.jit(f)(1.0)


def test_concretization_error_under_vmap():
    with pytest.raises(fg.ConcretizationError):
        fg.vmap(lambda x: float(x))(np.ones(3))


def test_static_argnums_allow_python_control_flow():
    def f(x, flag):
        return x * 2.0 if flag else x

    jf = fg.jit(f, static_argnums=1)
    assert float(jf(3.0, True)) == 6.0
    assert float(jf(3.0, False)) == 3.0


def test_unhashable_static_argument():
    with pytest.raises(ValueError, match="hashable"):
        fg.jit(lambda x, s: x, static_argnums=1)(1.0, [1, 2])


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0

    fg.jit(f)(1.0)
    with pytest.raises(fg.UnexpectedTracerError, match="leaked.*jit"):
        leaked[0] + 1.0
    fg.grad(f)(1.0)
    with pytest.raises(fg.UnexpectedTracerError, match="grad|vjp"):
        jnp.sin(leaked[1])


def test_setitem_points_to_at():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"\.at\["):
        x[0] = 2.0


def test_bool_of_multi_element_array():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.ones(3))


def test_unknown_numpy_function_is_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="fromregex"):
        jnp.fromregex


def test_every_primitive_has_every_rule():
    for name, p in registry.items():
        assert p.abstract_eval is not None, name
        assert p.impl is not None, name
        assert p.batch is not None, name
        assert p.jvp is not None or p.jvp_full is not None, name
        assert p.vjp is not None or p.vjp_full is not None, name


def test_floating_point_exceptions_are_values_not_warnings():
    """log(0), 0/0, overflow inside funcgrad (eager, Tensor, jit, grad) give inf/nan silently, as JAX and
    PyTorch do; the user's own NumPy calls keep NumPy's warnings."""
    import warnings

    import funcgrad as fg
    import funcgrad.numpy as jnp
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fg.core.errors.ignore_fp_warnings()  # funcgrad's filter (installed on import) goes first again
        z = jnp.zeros(3)
        assert np.isneginf(np.asarray(jnp.log(z))).all()
        assert np.isnan(np.asarray(z / z)).all()
        assert np.isinf(np.asarray(fg.jit(lambda x: jnp.exp(x * 1000.0))(jnp.ones(3)))).all()
        assert np.isinf(np.asarray(fg.grad(lambda x: jnp.sum(jnp.sqrt(x)))(z))).all()
        assert np.isneginf(fg.log(fg.zeros(2)).numpy()).all()
        with pytest.raises(RuntimeWarning, match="divide by zero"):
            np.log(np.zeros(1))
