"""funcgrad.config: JAX's option names (with and without the `jax_` prefix), debug_nans / debug_infs,
numpy_rank_promotion, platform names, and errors for unknown options and values."""
import sys
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad._src.core.primitive import fp_checks


@pytest.fixture(autouse=True)
def restore():
    yield
    fg.config.update("jax_debug_nans", False)
    fg.config.update("jax_debug_infs", False)
    fg.config.update("jax_numpy_rank_promotion", "allow")
    fg.config.update("jax_enable_x64", False)


def test_jax_spellings_read_and_update_the_same_option():
    fg.config.update("jax_enable_x64", True)
    assert fg.config.read("enable_x64") and fg.config.read("jax_enable_x64")
    assert fg.config.jax_enable_x64 is True and fg.config.x64_enabled is True
    assert jnp.zeros(2).dtype == np.float64
    fg.config.update("enable_x64", False)
    assert fg.config.jax_enable_x64 is False and jnp.zeros(2).dtype == np.float32
    fg.config.update("jax_disable_jit", True)
    try:
        assert fg.config.read("disable_jit") is True and fg.config.jax_disable_jit is True
        seen = []
        fg.jit(lambda x: seen.append(type(x).__name__) or x)(jnp.ones(2))
        assert seen == ["Array"]  # ran eagerly on the concrete array
    finally:
        fg.config.update("jax_disable_jit", False)


def test_unknown_options_and_values_raise():
    with pytest.raises(ValueError, match="unknown config option 'jax_no_such_thing'"):
        fg.config.update("jax_no_such_thing", 1)
    with pytest.raises(AttributeError):
        fg.config.jax_no_such_thing
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
        fg.config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError, match="precision"):
        fg.config.update("jax_default_matmul_precision", "double-double")
    with pytest.raises(NotImplementedError, match="standard"):
        fg.config.update("jax_numpy_dtype_promotion", "strict")


def test_platforms():
    fg.config.update("jax_platform_name", "cpu")
    fg.config.update("jax_platforms", "cpu")
    assert fg.config.read("jax_platform_name") == "cpu"
    with pytest.raises(RuntimeError, match="'tpu'"):
        fg.config.update("jax_platforms", "tpu")


def test_accepted_options_keep_their_value():
    fg.config.update("jax_default_matmul_precision", "highest")
    assert fg.config.jax_default_matmul_precision == "highest"
    fg.config.update("jax_default_matmul_precision", None)
    fg.config.update("jax_traceback_filtering", "off")
    assert fg.config.read("traceback_filtering") == "off"


def test_debug_nans_names_the_operation_eagerly_under_jit_and_grad():
    x = jnp.array([-1.0, 4.0])
    assert np.isnan(np.asarray(jnp.log(x))[0])  # off: a value, as usual
    fg.config.update("jax_debug_nans", True)
    assert fp_checks.on and fg.config.jax_debug_nans
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
        jnp.log(x)
    f = fg.jit(lambda v: jnp.sqrt(v) * 2.0)
    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
        f(x)
    # a NaN made inside a derivative: d/dx log(x) * 0 at inf is 0 * inf
    with pytest.raises(FloatingPointError, match="nan"):
        fg.grad(lambda v: jnp.sum(jnp.sqrt(v)))(jnp.array([-1.0]))
    np.testing.assert_allclose(np.asarray(f(jnp.array([4.0, 9.0]))), [4.0, 6.0])  # clean inputs pass
    assert jnp.arange(3).sum() == 3  # integers are never checked
    assert np.isinf(np.asarray(jnp.log(jnp.array(0.0))))  # infinities pass unless debug_infs
    fg.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(x))[0])  # compiled again: values, no error


def test_debug_infs():
    fg.config.update("jax_debug_infs", True)
    with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        jnp.array([1.0]) / jnp.array([0.0])
    assert np.isnan(np.asarray(jnp.array([0.0]) / jnp.array([0.0])))  # NaN is debug_nans' business


def test_rank_promotion_raise_warn_allow():
    a, b = jnp.ones((3, 4)), jnp.ones(4)
    np.testing.assert_array_equal(np.asarray(a + b), np.full((3, 4), 2.0))
    fg.config.update("jax_numpy_rank_promotion", "raise")
    with pytest.raises(ValueError, match=r"add.*\(3, 4\) \(4,\).*rank promotion"):
        a + b
    with pytest.raises(ValueError, match="rank promotion"):
        jnp.where(jnp.ones((2, 3), bool), jnp.ones(3), jnp.zeros((2, 3)))
    # scalars and equal ranks broadcast freely
    np.testing.assert_array_equal(np.asarray(a * 2.0 + jnp.array(1.0)), np.full((3, 4), 3.0))
    np.testing.assert_array_equal(np.asarray(a + jnp.ones((1, 4))), np.full((3, 4), 2.0))
    with pytest.raises(ValueError, match="rank promotion"):
        fg.jit(lambda p, q: p * q)(a, b)
    fg.config.update("jax_numpy_rank_promotion", "warn")
    with pytest.warns(UserWarning, match="rank promotion"):
        a - b
    fg.config.update("jax_numpy_rank_promotion", "allow")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a - b


def test_config_module_imports_nothing_above_core():
    """The options live on the modules that read them (registered in _src.core.options); funcgrad.config reaches
    them through that registry, so it imports only core and nothing of jit, the compiler or random."""
    import ast
    import pathlib
    path = pathlib.Path(fg.__file__).parent / "_src" / "core" / "config.py"  # (the module funcgrad.config)
    assert sys.modules["funcgrad.config"].__file__ == str(path)
    levels = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            levels.append((node.level, node.module))
        assert not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("funcgrad")), node.module
    assert levels and all(level == 1 for level, _ in levels), levels  # `from .x import`: core's own modules


def test_options_reach_the_modules_that_read_them():
    from funcgrad._src.core import options
    from funcgrad._src.interpreters import backward_cache
    from funcgrad._src.interpreters.jit import config as jit_config
    prev = fg.config.read("jit_cache_size")
    try:
        fg.config.update("jax_jit_cache_size", 17)
        assert jit_config.jit_cache_size == 17 and options.read("jit_cache_size") == 17
    finally:
        fg.config.update("jit_cache_size", prev)
    prev = fg.config.read("backward_cache_size")
    try:
        fg.config.update("backward_cache_size", 3)
        assert backward_cache.config.backward_cache_size == 3
    finally:
        fg.config.update("backward_cache_size", prev)
    with pytest.raises(ValueError, match="jit_cache_size must be at least 1"):
        fg.config.update("jit_cache_size", 0)
    assert "jit_fusion" in fg.config._names and "jax_threefry_partitionable" in fg.config._names
