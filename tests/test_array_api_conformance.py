"""funcgrad.numpy against the Array API standard (2024.12), differentially against array-api-strict.

array-api-strict is the standard's reference implementation: it has exactly the standard's names and
signatures and raises on everything the standard leaves unspecified. For every name it exports we check
that funcgrad has it with a compatible signature (the rules the published array-api-tests suite applies),
and on the same inputs, for every dtype the standard allows, that results agree in values, dtype and
shape. Where the standard leaves behaviour unspecified (array-api-strict raises), funcgrad may do what
NumPy or JAX does; those cases are skipped, not compared.

Deliberate, permitted deviation: funcgrad arrays are immutable, so `x[i] = v` raises TypeError (the
standard allows libraries without mutation to raise there) and augmented assignment rebinds the name.
"""
from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

xp = pytest.importorskip("array_api_strict")

import funcgrad.numpy as fnp  # noqa: E402

API_VERSION = "2024.12"
xp.set_array_api_strict_flags(api_version=API_VERSION)

# --- dtypes -----------------------------------------------------------------------------------------
BOOL = ["bool"]
SINT = ["int8", "int16", "int32", "int64"]
UINT = ["uint8", "uint16", "uint32", "uint64"]
INT = SINT + UINT
REAL = ["float32", "float64"]
CPLX = ["complex64", "complex128"]
ALL = BOOL + INT + REAL + CPLX


def sdt(name):
    """array-api-strict's dtype object called `name`."""
    return getattr(xp, name)


def dtype_name(dt) -> str:
    """A dtype's name, for funcgrad's (numpy) and array-api-strict's dtype objects alike."""
    return str(dt).rsplit(".", 1)[-1]


def host(a) -> np.ndarray:
    """A NumPy copy of an array from either library (array-api-strict arrays through DLPack)."""
    if isinstance(a, np.ndarray):
        return a
    if type(a).__module__.startswith("array_api_strict"):
        return np.from_dlpack(a).copy()
    return np.asarray(a)


def both(v: np.ndarray):
    return xp.asarray(v), fnp.asarray(v)


def assert_same(expected, got, *, label="", rtol=None, zero_sign=True):
    """Same dtype, shape and values (NaN == NaN; signed zeros compared for real floating results)."""
    e, g = host(expected), host(got)
    assert dtype_name(e.dtype) == dtype_name(g.dtype), f"{label}: dtype {g.dtype}, expected {e.dtype}"
    assert e.shape == g.shape, f"{label}: shape {g.shape}, expected {e.shape}"
    if e.dtype.kind in "fc":
        if rtol is None:
            rtol = 1e-5 if e.dtype in (np.float32, np.complex64) else 1e-12
        parts = [(e.real, g.real), (e.imag, g.imag)] if e.dtype.kind == "c" else [(e, g)]
        for a, b in parts:
            bad = ~np.isclose(a, b, rtol=rtol, atol=0, equal_nan=True)
            if zero_sign and e.dtype.kind == "f":
                bad |= (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
            if bad.any():
                i = np.flatnonzero(bad)[:5]
                raise AssertionError(f"{label}: got {g.ravel()[i]}, expected {e.ravel()[i]}")
    else:
        np.testing.assert_array_equal(g, e, err_msg=label)


def strict_or_none(f, *args, **kwargs):
    """f(*args) in array-api-strict, or None where the standard leaves the case unspecified."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args, **kwargs)
    except (TypeError, ValueError, OverflowError, NotImplementedError):
        return None


# --- 1. every name of the standard, with the standard's signature ----------------------------------
_STRICT_ONLY = {"ArrayAPIStrictFlags", "Device", "get_array_api_strict_flags", "set_array_api_strict_flags",
                "reset_array_api_strict_flags"}
NAMES = sorted(n for n in xp.__all__ if not n.startswith("_") and n not in _STRICT_ONLY)
EXTENSIONS = {"linalg": sorted(n for n in xp.linalg.__all__ if not n.startswith("_")),
              "fft": sorted(n for n in xp.fft.__all__ if not n.startswith("_"))}
FUNCTIONS = [("", n) for n in NAMES if inspect.isfunction(getattr(xp, n))] + \
    [(ext, n) for ext, names in EXTENSIONS.items() for n in names]

# Spec defaults that funcgrad spells differently with the same meaning (NumPy's spelling).
_SAME_DEFAULT = {("", "arange", "step"): (None, 1), ("", "from_dlpack", "device"): (None,),
                 ("", "from_dlpack", "copy"): (None,), ("", "astype", "device"): (None,)}
for _f in ("fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft"):
    _SAME_DEFAULT[("fft", _f, "norm")] = (None, "backward")


def _ours(ext, name):
    ns = getattr(fnp, ext) if ext else fnp
    return getattr(ns, name)


def test_every_standard_name_exists():
    assert fnp.__array_api_version__ == API_VERSION
    missing = [n for n in NAMES if not hasattr(fnp, n)]
    missing += [f"{e}.{n}" for e, ns in EXTENSIONS.items() for n in ns if not hasattr(getattr(fnp, e), n)]
    assert missing == []


def test_constants():
    for n in ("e", "pi", "inf", "nan"):
        assert isinstance(getattr(fnp, n), float)
        assert (getattr(fnp, n) == getattr(xp, n)) or (math.isnan(fnp.nan) and n == "nan")
    assert fnp.newaxis is None
    for n in ALL:
        assert dtype_name(getattr(fnp, n)) == n
        assert getattr(fnp, n) == getattr(fnp, n) and getattr(fnp, n) != (fnp.int8 if n != "int8" else fnp.int16)


def _check_signature(label, ours, spec, ext="", name=""):
    """The array-api-tests rules: the spec's positional parameters come first, in order, named as
    in the spec unless positional-only, of the same kind; keyword-only spec parameters exist and are
    keyword-only or positional-or-keyword; and defaults agree (or have an agreed NumPy spelling)."""
    P = inspect.Parameter
    sp = list(spec.parameters.values())
    op = list(ours.parameters.values())
    positional = [p for p in sp if p.kind != P.KEYWORD_ONLY]
    for i, s in enumerate(positional):
        assert i < len(op), f"{label}: parameter {s.name!r} missing"
        o = op[i]
        if s.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert o.kind == s.kind, f"{label}: {o.name} should be *{s.name}"
            continue
        if s.kind == P.POSITIONAL_OR_KEYWORD:
            assert o.name == s.name, f"{label}: parameter {i} is {o.name!r}, the standard calls it {s.name!r}"
            assert o.kind == P.POSITIONAL_OR_KEYWORD, f"{label}: {o.name} must be positional-or-keyword"
        else:
            assert o.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD), f"{label}: {o.name} not positional"
    by_name = {p.name: p for p in op}
    for s in sp:
        if s.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) or (s.kind == P.POSITIONAL_ONLY):
            continue
        if s.kind == P.KEYWORD_ONLY:
            assert s.name in by_name, f"{label}: keyword {s.name!r} missing"
            assert by_name[s.name].kind in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD), f"{label}: {s.name}"
        o = by_name[s.name]
        if s.default is not P.empty:
            allowed = _SAME_DEFAULT.get((ext, name, s.name), ())
            if type(s.default).__name__ == "Undef":  # array-api-strict's marker for "not given"
                allowed = allowed + (None,)
            assert o.default is not P.empty, f"{label}: {s.name!r} needs a default ({s.default!r})"
            assert o.default == s.default or o.default in allowed, \
                f"{label}: {s.name}={o.default!r}, the standard's default is {s.default!r}"


@pytest.mark.parametrize("ext,name", FUNCTIONS, ids=[f"{e}.{n}" if e else n for e, n in FUNCTIONS])
def test_function_signature(ext, name):
    spec = inspect.signature(getattr(getattr(xp, ext) if ext else xp, name))
    _check_signature(f"{ext + '.' if ext else ''}{name}", inspect.signature(_ours(ext, name)), spec, ext, name)


_StrictArray = type(xp.ones(2))
_METHODS = sorted(n for n in dir(_StrictArray) if n.startswith("__") and n.endswith("__")
                  and callable(getattr(_StrictArray, n)) and not n.startswith("__i")
                  and n not in set(dir(object)) | {"__array__", "__buffer__", "__getstate__"}) \
    + ["__getitem__", "__setitem__", "__index__", "__int__", "to_device"]
_METHODS = sorted(set(_METHODS))


@pytest.mark.parametrize("name", _METHODS)
def test_array_method_signature(name):
    x = fnp.ones(2)
    assert hasattr(x, name), f"Array has no {name}"
    _check_signature(f"Array.{name}", inspect.signature(getattr(x, name)),
                     inspect.signature(getattr(xp.ones(2), name)))


def test_array_attributes():
    x = fnp.ones((2, 3), dtype=fnp.int16)
    assert (x.dtype, x.shape, x.ndim, x.size) == (fnp.int16, (2, 3), 2, 6)
    assert isinstance(x.shape, tuple) and isinstance(x.size, int)
    assert x.device == fnp.__array_namespace_info__().default_device()
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert fnp.ones((4, 2, 3)).mT.shape == (4, 3, 2)
    with pytest.raises(ValueError, match="mT"):
        fnp.ones(3).mT  # the standard (and NumPy): at least two dimensions


# --- 2. the inspection namespace -------------------------------------------------------------------
def test_inspection_namespace_matches_the_standard():
    ours, ref = fnp.__array_namespace_info__(), xp.__array_namespace_info__()
    caps = ours.capabilities()
    assert set(caps) == set(ref.capabilities())
    assert isinstance(caps["boolean indexing"], bool) and isinstance(caps["data-dependent shapes"], bool)
    assert caps["max dimensions"] is None or isinstance(caps["max dimensions"], int)
    dev = ours.default_device()
    assert dev in ours.devices() and isinstance(ours.devices(), list)
    dd = ours.default_dtypes(device=dev)
    assert set(dd) == {"real floating", "complex floating", "integral", "indexing"}
    # the defaults are the ones the functions use
    assert fnp.asarray(0.0).dtype == dd["real floating"] and fnp.asarray(0).dtype == dd["integral"]
    assert fnp.asarray(0j).dtype == dd["complex floating"] and fnp.ones(2).dtype == dd["real floating"]
    assert fnp.argmax(fnp.ones(3)).dtype == dd["indexing"]
    kinds = [None, "bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("bool", "real floating"), ("integral", "complex floating")]
    for kind in kinds:
        got, want = ours.dtypes(device=dev, kind=kind), ref.dtypes(kind=kind)
        assert set(got) == set(want), kind
        assert all(dtype_name(v) == k for k, v in got.items())
        assert all(getattr(fnp, k) == v for k, v in got.items())
    with pytest.raises(ValueError, match="kind"):
        ours.dtypes(kind="floating")


def test_array_namespace_version():
    x = fnp.ones(2)
    for v in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=v) is fnp
    for v in ("2025.12", "2020.01", "latest"):
        with pytest.raises(ValueError, match="api_version"):
            x.__array_namespace__(api_version=v)


# --- 3. elementwise functions ----------------------------------------------------------------------
UNARY = """abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1 floor imag isfinite
isinf isnan log log1p log2 log10 logical_not negative positive real reciprocal round sign signbit sin sinh
square sqrt tan tanh trunc""".split()
BINARY = """add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor copysign divide
equal floor_divide greater greater_equal hypot less less_equal logaddexp logical_and logical_or logical_xor
maximum minimum multiply nextafter not_equal pow remainder subtract""".split()
_FSPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.3, 0.7, 2.0, math.pi, 1e-30, 1e30,
             math.inf, -math.inf, math.nan]
_CSPECIAL = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan]


def special_values(dt: str) -> np.ndarray:
    """Every value the standard's special cases mention (NaN, +-inf, +-0, +-1, halves, extremes)."""
    if dt == "bool":
        return np.array([True, False])
    if dt in INT:
        ii = np.iinfo(dt)
        return np.array(sorted({0, 1, 2, 3, 5, 7, ii.max, ii.max - 1, ii.min, ii.min + 1}), dtype=dt)
    if dt in REAL:
        return np.array(_FSPECIAL, dtype=dt)
    return np.array([complex(a, b) for a in _CSPECIAL for b in _CSPECIAL], dtype=dt)


# Complex special cases the standard leaves to the implementation ("handled according to the rules of
# complex number division"), where NumPy's x/|x| gives NaN and funcgrad gives the limit: skip inputs
# with an infinite component there.
def _skip_complex_inf(name, args):
    if name == "sign" and args[0].dtype.kind == "c":
        return ~np.isinf(args[0].real) & ~np.isinf(args[0].imag)
    if name == "reciprocal" and args[0].dtype.kind == "c":  # NumPy's reciprocal(0j) is not 1/0j
        return args[0] != 0                                  # (test_reciprocal_is_one_over_x)
    return None


def _compare_elementwise(name, args):
    ref = strict_or_none(getattr(xp, name), *[xp.asarray(a) for a in args])
    if ref is None:
        return False
    with np.errstate(all="ignore"):
        got = getattr(fnp, name)(*[fnp.asarray(a) for a in args])
    keep = _skip_complex_inf(name, args)
    e, g = host(ref), host(got)
    if keep is not None:
        e, g = e[keep], g[keep]
    assert_same(e, g, label=f"{name}{tuple(a.dtype.name for a in args)}")
    return True


@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values_every_dtype(name):
    """On NaN, +-inf, +-0 and the other values the standard's special cases name, in every dtype."""
    compared = [dt for dt in ALL if _compare_elementwise(name, [special_values(dt)])]
    assert compared, f"{name}: no dtype accepted"


@pytest.mark.parametrize("name", BINARY)
def test_binary_special_values_every_dtype(name):
    compared = []
    for dt in ALL:
        a, b = np.meshgrid(special_values(dt), special_values(dt))
        if _compare_elementwise(name, [a, b]):
            compared.append(dt)
    assert compared, f"{name}: no dtype accepted"


def _valid_dtypes(name, arity):
    out = []
    for dt in ALL:
        args = [xp.asarray(special_values(dt)[:1])] * arity
        if strict_or_none(getattr(xp, name), *args) is not None:
            out.append(dt)
    return out


def _elements(dt):
    if dt in REAL or dt in CPLX:
        return {"allow_nan": True, "allow_infinity": True, "allow_subnormal": False}
    return None


@st.composite
def _operands(draw, name, arity):
    dt = draw(st.sampled_from(_valid_dtypes(name, arity)))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=arity, max_dims=3, max_side=4)).input_shapes
    return [draw(hnp.arrays(np.dtype(dt), s, elements=_elements(dt))) for s in shapes]


@pytest.mark.parametrize("name", UNARY + BINARY)
@given(data=st.data())
def test_elementwise_matches_reference(name, data):
    """Random shapes (broadcast for binary functions) and values of every valid dtype."""
    args = data.draw(_operands(name, 2 if name in BINARY else 1))
    if name in ("bitwise_left_shift", "bitwise_right_shift"):
        args[1] = np.abs(args[1].astype(np.int64)).astype(args[1].dtype) % (8 * args[1].dtype.itemsize)
    assert _compare_elementwise(name, args)


def test_reciprocal_is_one_over_x():
    """The standard: reciprocal's special cases are those of 1.0 / x (also for complex zeros)."""
    for dt in REAL + CPLX:
        x = fnp.asarray(special_values(dt))
        assert_same(fnp.divide(1.0, x), fnp.reciprocal(x), label=dt)


# --- 4. type promotion ------------------------------------------------------------------------------
_DTYPE_PAIRS = [(a, b) for a in ALL for b in ALL]


@pytest.mark.parametrize("name", BINARY)
def test_promotion_of_every_dtype_pair(name):
    """Result dtypes follow the standard's promotion table wherever it defines one."""
    f, g = getattr(xp, name), getattr(fnp, name)
    wrong = []
    for a, b in _DTYPE_PAIRS:
        ref = strict_or_none(f, xp.ones(2, dtype=sdt(a)), xp.ones(2, dtype=sdt(b)))
        if ref is None:
            continue
        got = g(fnp.ones(2, dtype=a), fnp.ones(2, dtype=b))
        if dtype_name(got.dtype) != dtype_name(ref.dtype):
            wrong.append((a, b, got.dtype, ref.dtype))
    assert wrong == []


@pytest.mark.parametrize("name", BINARY)
def test_promotion_with_python_scalars(name):
    """A Python scalar takes the array's dtype (when of a compatible kind), on either side."""
    f, g = getattr(xp, name), getattr(fnp, name)
    wrong = []
    for a in ALL:
        for s in (True, 1, -1, 2.5, 1j):
            for left in (True, False):
                xa, fa = xp.ones(3, dtype=sdt(a)), fnp.ones(3, dtype=a)
                ref = strict_or_none(f, *((xa, s) if left else (s, xa)))
                if ref is None:
                    continue
                with np.errstate(all="ignore"):
                    got = g(*((fa, s) if left else (s, fa)))
                try:
                    assert_same(ref, got)
                except AssertionError as e:
                    wrong.append((a, s, left, str(e)))
    assert wrong == []


_OPERATORS = {"__add__": "add", "__sub__": "subtract", "__mul__": "multiply", "__truediv__": "divide",
              "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "pow", "__and__": "bitwise_and",
              "__or__": "bitwise_or", "__xor__": "bitwise_xor", "__lshift__": "bitwise_left_shift",
              "__rshift__": "bitwise_right_shift", "__eq__": "equal", "__ne__": "not_equal", "__lt__": "less",
              "__le__": "less_equal", "__gt__": "greater", "__ge__": "greater_equal"}


@pytest.mark.parametrize("op", sorted(_OPERATORS))
def test_operators_match_their_functions(op):
    """x1 OP x2 and x2's reflected operator give the function's result, with arrays and scalars."""
    name = _OPERATORS[op]
    rop = "__r" + op[2:]
    for dt in _valid_dtypes(name, 2):
        v = special_values(dt)[:4]
        x = fnp.asarray(v)
        with np.errstate(all="ignore"):
            assert_same(getattr(fnp, name)(x, x[::-1]), getattr(x, op)(x[::-1]), label=f"{op} {dt}")
            for s in {"bool": [True], "complex64": [1j, 2.0], "complex128": [1j, 2.0]}.get(
                    dt, [2.0, 1] if dt in REAL else [1]):
                assert_same(getattr(fnp, name)(x, s), getattr(x, op)(s), label=f"{op} {dt} {s!r}")
                if hasattr(x, rop):
                    assert_same(getattr(fnp, name)(s, x), getattr(x, rop)(s), label=f"{rop} {dt} {s!r}")


# --- 5. in-place operators --------------------------------------------------------------------------
_INPLACE = ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
            "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"]


@pytest.mark.parametrize("iop", _INPLACE)
def test_in_place_operators_keep_dtype_and_shape(iop):
    """x1 op= x2 equals x1 op x2 when that keeps x1's dtype and shape; funcgrad rebinds the name
    (arrays are immutable), and the other array is unchanged."""
    op = "__" + iop[3:]
    name = _OPERATORS[op]
    for a, b in _DTYPE_PAIRS:
        ref = strict_or_none(getattr(xp, name), xp.ones((2, 3), dtype=sdt(a)), xp.ones(3, dtype=sdt(b)))
        if ref is None or dtype_name(ref.dtype) != a:
            continue
        v1 = special_values(a)[np.arange(6) % len(special_values(a))].reshape(2, 3)
        v2 = special_values(b)[-np.arange(1, 4) % len(special_values(b))]
        if name.startswith("bitwise_") and "shift" in name:
            v2 = np.array([0, 1, 2], dtype=b)
        x1, x2 = fnp.asarray(v1), fnp.asarray(v2)
        y = x1
        with np.errstate(all="ignore"):
            expected = getattr(fnp, name)(x1, x2)
            y = getattr(y, iop)(x2)
        assert_same(expected, y, label=f"{iop} {a} {b}")
        np.testing.assert_array_equal(np.asarray(x1), v1)


def test_in_place_operators_that_would_change_dtype_or_shape_raise():
    """The standard: an in-place operation must not change x1's dtype or shape (NumPy raises too)."""
    x = fnp.ones(3, dtype=fnp.int32)
    with pytest.raises(TypeError, match="int32"):
        x += 1.5
    with pytest.raises(TypeError, match="int32"):
        x /= 2
    with pytest.raises(TypeError, match="bool"):
        b = fnp.ones(3, dtype=fnp.bool)
        b += fnp.ones(3, dtype=fnp.int8)
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        y = fnp.ones(3)
        y += fnp.ones((2, 3))
    z = fnp.ones(3, dtype=fnp.float32)
    z += fnp.ones(3, dtype=fnp.float64)  # same kind: cast back to float32, as NumPy does
    assert z.dtype == fnp.float32


def test_item_assignment_raises_because_arrays_are_immutable():
    """Permitted by the standard for libraries without mutation; funcgrad offers x.at[i].set(v)."""
    x = fnp.zeros(3)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    np.testing.assert_array_equal(x.at[0].set(1.0), [1.0, 0.0, 0.0])
