"""The Array API standard namespace: x.__array_namespace__() is funcgrad.numpy, a superset of the standard."""
import numpy as np
import pytest

import funcgrad.numpy as jnp

STANDARD = """arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like
tril triu zeros zeros_like astype can_cast finfo iinfo isdtype result_type abs acos acosh add asin asinh atan
atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip
conj copysign cos cosh divide equal exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf
isnan less less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or logical_xor maximum
minimum multiply negative nextafter not_equal positive pow real reciprocal remainder round sign signbit sin sinh
square sqrt subtract tan tanh trunc take take_along_axis matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape roll squeeze stack
tile unstack argmax argmin count_nonzero nonzero searchsorted where unique_all unique_counts unique_inverse
unique_values argsort sort cumulative_prod cumulative_sum max mean min prod std sum var all any diff e inf nan
newaxis pi bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128""".split()
LINALG = """cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power matrix_rank
matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot trace vecdot vector_norm""".split()
FFT = "fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift ifftshift".split()


def test_namespace_is_funcgrad_numpy_with_every_standard_name():
    ns = jnp.ones(2).__array_namespace__()
    assert ns is jnp and ns.__array_api_version__ == "2024.12"
    assert [n for n in STANDARD if not hasattr(ns, n)] == []
    assert [n for n in LINALG if not hasattr(ns.linalg, n)] == []
    assert [n for n in FFT if not hasattr(ns.fft, n)] == []


def test_inspection_namespace():
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64  # x64 on in this module, as JAX's info
    assert info.default_dtypes()["integral"] == np.int64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert "bool" in info.dtypes() and "complex128" in info.dtypes()
    assert info.default_device() in info.devices()
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="decimal")


def test_standard_semantics_where_numpy_differs():
    x = jnp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert jnp.permute_dims(x, (1, 0)).shape == (3, 2)
    np.testing.assert_array_equal(jnp.matrix_transpose(x), np.asarray(x).T)
    z = jnp.asarray([1 + 2j, 3 - 1j])
    np.testing.assert_allclose(jnp.vecdot(z, z), np.vdot(np.asarray(z), np.asarray(z)))  # conjugates x1
    np.testing.assert_array_equal(jnp.unique_values(jnp.asarray([3, 1, 3, 2])), [1, 2, 3])
    y = jnp.astype(x, jnp.int32, copy=False)
    assert y.dtype == np.int32
    assert jnp.concat([x, x], axis=0).shape == (4, 3)
    assert jnp.zeros(3, device=jnp.__array_namespace_info__().default_device()).shape == (3,)
    np.testing.assert_array_equal(jnp.from_dlpack(np.arange(3)), [0, 1, 2])


@pytest.mark.parametrize("a,b", [("int8", "int16"), ("uint8", "uint32"), ("int16", "uint8"),
                                 ("float32", "float64"), ("complex64", "float64"), ("bool", "bool")])
def test_promotion_within_kinds_follows_the_standard_table(a, b):
    x, y = jnp.ones(2, dtype=a), jnp.ones(2, dtype=b)
    assert (x + y).dtype == np.result_type(a, b)


def test_in_place_operators_rebind_and_item_assignment_raises():
    x = jnp.ones(2)
    y = x
    x += 1.0  # a new array: immutable arrays are rebound, as in JAX
    np.testing.assert_array_equal(x, [2.0, 2.0])
    np.testing.assert_array_equal(y, [1.0, 1.0])
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 5.0
