"""funcgrad.random draws JAX's numbers: every sampler against jax.random (0.10.2) bit for bit, in both
of JAX's x64 modes (x64 off: default int32 / float32, x64 on: int64 / float64), with JAX's default
(partitionable) threefry layout; plus known answers that need no JAX.

Bit-identical: keys, split, fold_in, bits, uniform (every float dtype and bounds: XLA fuses its scaling
into one FMA, which funcgrad reproduces), and every sampler whose result is decided by integer
operations or comparisons (randint, choice, permutation, shuffle, bernoulli, rademacher, categorical,
poisson, geometric, binomial, multinomial, triangular). Samplers whose values pass through a
transcendental function (normal's erf_inv, log, log1p, exp, pow, tan) or a matrix factorisation
(orthogonal's QR, multivariate_normal's Cholesky / eigh / SVD) are compared to a few units in the last
place: XLA's CPU backend evaluates those functions with its own polynomial approximations (and LAPACK
other than NumPy's), whose last bits NumPy's libm does not reproduce, so exact equality is impossible
there; the bounds below are per sampler, measured over these keys with headroom for other CPUs.
"""
from fractions import Fraction

import numpy as np
import pytest

import funcgrad
import funcgrad.random as fr
from funcgrad._src.core import dtypes
from funcgrad.lax import _fused

try:
    import ml_dtypes
    BF16 = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - depends on the environment
    BF16 = None


# funcgrad in one of JAX's two modes (the default int, float and complex of 32 or 64 bits), restored after
x64_mode = funcgrad.enable_x64


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def mode(request):
    """JAX and funcgrad in the same x64 mode (and JAX's default partitionable layout); yields
    (x64, jax.random, A) with A(value, kind) an input array of the mode's default float ('f') or int
    ('i'), the dtype JAX canonicalises a NumPy input to."""
    jax = pytest.importorskip("jax")
    import jax.random as jjr
    previous = (jax.config.jax_enable_x64, jax.config.jax_threefry_partitionable,
                funcgrad.config.read("jax_threefry_partitionable"))
    jax.config.update("jax_enable_x64", request.param)
    jax.config.update("jax_threefry_partitionable", True)
    funcgrad.config.update("jax_threefry_partitionable", True)
    fdt, idt = (np.float64, np.int64) if request.param else (np.float32, np.int32)

    def A(value, kind):
        return np.asarray(value, fdt if kind == "f" else idt)
    try:
        with x64_mode(request.param):
            yield request.param, jjr, A
    finally:
        jax.config.update("jax_enable_x64", previous[0])
        jax.config.update("jax_threefry_partitionable", previous[1])
        funcgrad.config.update("jax_threefry_partitionable", previous[2])


SEEDS = (0, 42)
SHAPES = [(), (0,), (3, 5)]   # (3, 5): an odd size


def _pair(fn, jjr, A, seed):
    """fn evaluated on funcgrad and on JAX with the key of `seed` (an exception counts as a result)."""
    out = []
    for r in (fr, jjr):
        try:
            out.append(np.asarray(fn(r, r.PRNGKey(seed), A)))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(e)
    return out


def _same_exception(ours, theirs):
    if isinstance(ours, Exception) or isinstance(theirs, Exception):
        assert type(ours) is type(theirs), (ours, theirs)
        return True
    return False


def assert_identical(ours, theirs):
    """Same shape, dtype and bits (NaNs and signed zeros included)."""
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, ours.dtype,
                                                                       theirs.shape, theirs.dtype)
    a = np.ascontiguousarray(ours).reshape(-1).view(np.uint8)
    b = np.ascontiguousarray(theirs).reshape(-1).view(np.uint8)
    if not np.array_equal(a, b):
        bad = np.flatnonzero(ours.reshape(-1) != theirs.reshape(-1))[:5]
        raise AssertionError(f"not bit-identical at {bad}: {ours.reshape(-1)[bad]} vs {theirs.reshape(-1)[bad]}")


def ulp_distance(ours, theirs) -> float:
    """The largest |ours - theirs| in units in the last place of the larger magnitude, or of 1/16 for
    results smaller than that: a rounding difference in an O(1) intermediate (a bound's erf, a log's
    argument) moves a result near 0 by an ulp of the intermediate, many of its own. NaN == NaN."""
    if ours.dtype.kind == "c":
        return max(ulp_distance(ours.real, theirs.real), ulp_distance(ours.imag, theirs.imag))
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    equal = (a == b) | (np.isnan(a) & np.isnan(b))
    if equal.all():
        return 0.0
    big = np.maximum(np.maximum(np.abs(ours), np.abs(theirs)), 1 / 16).astype(ours.dtype)
    spacing = np.spacing(big).astype(np.float64)
    return float(np.max(np.where(equal, 0.0, np.abs(a - b) / spacing)))


# --- bit-identical samplers -------------------------------------------------------------------------

def _shape_cases(s):
    return {
        "split": lambda r, k, A: r.split(k, s),
        "bits": lambda r, k, A: r.bits(k, s),
        "bits8": lambda r, k, A: r.bits(k, s, np.uint8),
        "bits16": lambda r, k, A: r.bits(k, s, np.uint16),
        "uniform": lambda r, k, A: r.uniform(k, s),
        "uniform_f16": lambda r, k, A: r.uniform(k, s, np.float16, -3.3, 7.1),
        "uniform_bounds": lambda r, k, A: r.uniform(k, s, minval=-3.3, maxval=7.1),
        "randint": lambda r, k, A: r.randint(k, s, 0, 10),
        "randint_neg": lambda r, k, A: r.randint(k, s, -1000, 1000),
        "bernoulli": lambda r, k, A: r.bernoulli(k, 0.3, s),
        "bernoulli_high": lambda r, k, A: r.bernoulli(k, 0.3, s, mode="high"),
        "rademacher": lambda r, k, A: r.rademacher(k, s),
        "choice": lambda r, k, A: r.choice(k, 7, s),
        "choice_p": lambda r, k, A: r.choice(k, 4, s, p=A([0.1, 0.2, 0.3, 0.4], "f")),
        "triangular": lambda r, k, A: r.triangular(k, 0.0, 0.3, 1.0, s),
    }


EXACT = {f"{name}{list(s)}": fn for s in SHAPES for name, fn in _shape_cases(s).items()}
EXACT.update({  # samplers with while loops (JAX compiles each shape for seconds): one shape each
    "poisson": lambda r, k, A: r.poisson(k, 3.5, (3, 5)),
    "geometric": lambda r, k, A: r.geometric(k, 0.3, (3, 5)),
    "binomial": lambda r, k, A: r.binomial(k, 20.0, 0.3, (3, 5)),
    "categorical": lambda r, k, A: r.categorical(k, A([0.1, 0.5, -1.0, 2.0], "f"), shape=(3, 5)),
    "categorical_empty": lambda r, k, A: r.categorical(k, A([0.1, 0.5, -1.0, 2.0], "f"), shape=(0,)),
    "binomial_empty": lambda r, k, A: r.binomial(k, 20.0, 0.3, (2, 0)),
})
EXACT.update({
    "key": lambda r, k, A: k,
    "fold_in": lambda r, k, A: r.fold_in(k, 7),
    "fold_in_max": lambda r, k, A: r.fold_in(k, 2 ** 32 - 1),
    "fold_in_np": lambda r, k, A: r.fold_in(k, np.int32(-5)),
    "split_shape": lambda r, k, A: r.split(k, (2, 3)),
    "uniform_bf16": lambda r, k, A: r.uniform(k, (9,), BF16, -3.3, 7.1),
    "uniform_tiny_span": lambda r, k, A: r.uniform(k, (9,), minval=-1e-3, maxval=1e-3),
    "uniform_array_bounds": lambda r, k, A: r.uniform(k, (2, 3), minval=A([[0.1], [-5.0]], "f"),
                                                      maxval=A([0.3, 1.0, 2.5], "f")),
    "randint_int8": lambda r, k, A: r.randint(k, (9,), -5, 100, np.int8),
    "randint_uint8": lambda r, k, A: r.randint(k, (9,), 0, 256, np.uint8),
    "randint_int16": lambda r, k, A: r.randint(k, (9,), -300, 300, np.int16),
    "randint_uint16": lambda r, k, A: r.randint(k, (9,), 0, 70000, np.uint16),
    "randint_int32": lambda r, k, A: r.randint(k, (9,), -5, 100, np.int32),
    "randint_uint32": lambda r, k, A: r.randint(k, (9,), 0, 2 ** 32 - 1, np.uint32),
    "randint_int8_outside_range": lambda r, k, A: r.randint(k, (9,), -1000, 1000, np.int8),
    "randint_full_int32": lambda r, k, A: r.randint(k, (9,), -2 ** 31, 2 ** 31 - 1),
    "randint_outside_int32": lambda r, k, A: r.randint(k, (9,), A(-2 ** 31, "i"), A(2 ** 31 - 1, "i"), np.int32),
    "randint_empty_range": lambda r, k, A: r.randint(k, (9,), 5, 5),
    "randint_reversed_range": lambda r, k, A: r.randint(k, (9,), 7, 3),
    "randint_array_bounds": lambda r, k, A: r.randint(k, (2, 3), A([0, 10, 100], "i"), A([[5], [1000]], "i")),
    "randint_float_bounds": lambda r, k, A: r.randint(k, (6,), 0.5, 7.9),
    "choice_no_replace": lambda r, k, A: r.choice(k, 10, (4,), replace=False),
    "choice_no_replace_p": lambda r, k, A: r.choice(k, 4, (3,), replace=False, p=A([0.1, 0.2, 0.3, 0.4], "f")),
    "choice_axis1": lambda r, k, A: r.choice(k, A(np.arange(12).reshape(3, 4), "i"), (2, 3), axis=1),
    "choice_axis1_no_replace": lambda r, k, A: r.choice(k, A(np.arange(12).reshape(3, 4), "i"), (3,),
                                                        replace=False, axis=1),
    "choice_axis0_p": lambda r, k, A: r.choice(k, A(np.arange(12).reshape(3, 4), "f"), (5,),
                                               p=A([0.5, 0.2, 0.3], "f")),
    "choice_scalar": lambda r, k, A: r.choice(k, 5),
    "permutation_int": lambda r, k, A: r.permutation(k, 10),
    "permutation_1": lambda r, k, A: r.permutation(k, 1),
    "permutation_0": lambda r, k, A: r.permutation(k, 0),
    "permutation_array": lambda r, k, A: r.permutation(k, A(np.arange(15).reshape(3, 5), "i")),
    "permutation_axis1": lambda r, k, A: r.permutation(k, A(np.arange(15).reshape(3, 5), "f"), axis=1),
    "permutation_independent": lambda r, k, A: r.permutation(k, A(np.arange(15).reshape(3, 5), "i"), axis=1,
                                                             independent=True),
    "permutation_independent0": lambda r, k, A: r.permutation(k, A(np.arange(15).reshape(3, 5), "i"),
                                                              independent=True),
    "categorical_axis0": lambda r, k, A: r.categorical(k, A(np.linspace(-1, 1, 12).reshape(3, 4), "f"), axis=0),
    "categorical_no_replace": lambda r, k, A: r.categorical(k, A(np.linspace(-1, 1, 12).reshape(3, 4), "f"),
                                                            shape=(2, 3), replace=False),
    "categorical_batch": lambda r, k, A: r.categorical(k, A(np.linspace(-1, 1, 12).reshape(3, 4), "f"),
                                                       shape=(5, 3)),
    "gumbel_via_choice_high": lambda r, k, A: r.choice(k, 5, (3,), replace=False,
                                                       p=A([0.1, 0.2, 0.3, 0.2, 0.2], "f"), mode="high"),
    "poisson_rates": lambda r, k, A: r.poisson(k, A([0.0, 0.5, 3.0, 9.9, 10.0, 20.0, 100.0, 1e4], "f")),
    "poisson_int16": lambda r, k, A: r.poisson(k, 3.0, (8,), np.int16),
    "geometric_int8": lambda r, k, A: r.geometric(k, 0.3, (8,), np.int8),
    "bernoulli_p_array": lambda r, k, A: r.bernoulli(k, A([0.0, 0.5, 1.0, 1e-9], "f")),
    "binomial_counts": lambda r, k, A: r.binomial(k, A([0.0, 1.0, 5.0, 50.0, 1000.0, 1e6], "f"),
                                                  A([0.5, 0.1, 0.9, 0.3, 0.01, 0.999], "f")),
    "binomial_edges": lambda r, k, A: r.binomial(k, A([np.inf, -1.0, np.nan, 5.0, 5.0, 5.5], "f"),
                                                 A([0.3, 0.5, 0.5, 1.5, np.nan, 0.5], "f")),
    "multinomial": lambda r, k, A: r.multinomial(k, A([5.0, 500.0], "f"), A([0.1, 0.0, 0.6, 0.3], "f"),
                                                 shape=(2, 4)),
    "rademacher_float": lambda r, k, A: r.rademacher(k, (7,), np.float32),
})


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bit_identical(mode, name):
    if "bf16" in name and BF16 is None:
        pytest.skip("ml_dtypes is not installed")
    _, jjr, A = mode
    for seed in SEEDS:
        ours, theirs = _pair(EXACT[name], jjr, A, seed)
        if not _same_exception(ours, theirs):
            assert_identical(ours, theirs)


def test_shuffle_is_jax_permutation_independent(mode):
    _, jjr, A = mode
    x = A(np.arange(12).reshape(3, 4), "i")
    with pytest.warns(DeprecationWarning):
        ours = np.asarray(fr.shuffle(fr.PRNGKey(3), x, axis=1))
    assert_identical(ours, np.asarray(jjr.permutation(jjr.PRNGKey(3), x, axis=1, independent=True)))


SEED_VALUES = [0, 7, -1, -3, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 5, 2 ** 40 + 7, 2 ** 63 - 1,
               -2 ** 31, -2 ** 31 - 1, -2 ** 63, 2 ** 63, 2 ** 64 - 1, True, np.int8(-1), np.int32(-1),
               np.int64(-1), np.uint32(2 ** 32 - 1), np.int64(2 ** 40 + 7)]


def test_keys_from_every_kind_of_seed(mode):
    x64, jjr, A = mode
    for seed in SEED_VALUES:
        if not x64 and isinstance(seed, np.int64) and dtypes.canonicalize(np.int64) != np.int32:
            continue  # JAX canonicalises the int64 seed to int32; see test_explicit_64_bit_dtypes_x32
        for make in ("PRNGKey", "key"):
            out = []
            for r in (fr, jjr):
                try:
                    k = getattr(r, make)(seed)
                    out.append(np.asarray(k if make == "PRNGKey" else r.key_data(k)))
                except Exception as e:  # noqa: BLE001
                    out.append(e)
            if not _same_exception(*out):
                assert_identical(*out)
    for data in (-1, 2 ** 32):  # Python ints outside uint32 raise, as JAX's conversion does
        with pytest.raises(OverflowError):
            fr.fold_in(fr.PRNGKey(0), data)
        with pytest.raises(OverflowError):
            jjr.fold_in(jjr.PRNGKey(0), data)


def test_original_layout_keys_bits_uniform_randint(mode):
    """JAX's original (non-partitionable) threefry layout too."""
    _, jjr, A = mode
    import jax
    jax.config.update("jax_threefry_partitionable", False)
    funcgrad.config.update("jax_threefry_partitionable", False)
    try:
        for name in ("split[3, 5]", "bits[3, 5]", "bits8[3, 5]", "bits16[3, 5]", "uniform[3, 5]",
                     "uniform_bounds[3, 5]", "randint[3, 5]", "permutation_int", "choice_p[3, 5]"):
            for seed in SEEDS:
                assert_identical(*_pair(EXACT[name], jjr, A, seed))
    finally:
        jax.config.update("jax_threefry_partitionable", True)
        funcgrad.config.update("jax_threefry_partitionable", True)


def test_x64_widths(mode):
    """With x64 on the 64-bit words are drawn (bits, randint, uniform and normal in float64...)."""
    x64, jjr, A = mode
    if not x64:
        pytest.skip("64-bit dtypes exist with x64 on only")
    cases = [lambda r, k, A: r.bits(k, (5,), np.uint64), lambda r, k, A: r.randint(k, (5,), -2 ** 40, 2 ** 40),
             lambda r, k, A: r.randint(k, (5,), 0, 10, np.int64), lambda r, k, A: r.randint(k, (5,), 0, 10, np.uint64),
             lambda r, k, A: r.uniform(k, (5,), np.float64, -3.3, 7.1), lambda r, k, A: r.uniform(k, (5,), np.float32),
             lambda r, k, A: r.randint(k, (5,), 0, 10, np.int32), lambda r, k, A: r.bits(k, (5,), np.uint32)]
    for fn in cases:
        for seed in SEEDS:
            assert_identical(*_pair(fn, jjr, A, seed))


# --- samplers through transcendental functions: a few ulps --------------------------------------------

# name -> (sampler, largest ulp distance (see ulp_distance) with x64 off, with x64 on). Reasons: XLA's erf_inv / log / log1p / exp / pow / tan polynomials (and the
# factorisations named) round differently from NumPy's libm.
CLOSE = {
    "normal": (lambda r, k, A: r.normal(k, (3, 5)), 4, 64),                    # erf_inv
    "normal_f16": (lambda r, k, A: r.normal(k, (7,), np.float16), 2, 2),
    "normal_c64": (lambda r, k, A: r.normal(k, (7,), np.complex64), 4, 4),
    "truncated_normal": (lambda r, k, A: r.truncated_normal(k, -1.0, 2.0, (3, 5)), 4, 32),
    "truncated_normal_inf": (lambda r, k, A: r.truncated_normal(k, A([-np.inf, -1.0, 0.5], "f"),
                                                                 A([0.0, np.inf, 0.6], "f")), 4, 8),
    "exponential": (lambda r, k, A: r.exponential(k, (3, 5)), 4, 8),        # log1p
    "gumbel": (lambda r, k, A: r.gumbel(k, (3, 5)), 32, 8),                   # log(-log u) near u = 1/e
    "gumbel_high": (lambda r, k, A: r.gumbel(k, (3, 5), mode="high"), 16, 8),
    "laplace": (lambda r, k, A: r.laplace(k, (3, 5)), 4, 64),
    "logistic": (lambda r, k, A: r.logistic(k, (3, 5)), 8, 4),
    "cauchy": (lambda r, k, A: r.cauchy(k, (3, 5)), 4, 4),                    # tan
    "maxwell": (lambda r, k, A: r.maxwell(k, (3, 5)), 4, 32),
    "double_sided_maxwell": (lambda r, k, A: r.double_sided_maxwell(k, 1.0, 2.0, (5,)), 8, 8),
    "rayleigh": (lambda r, k, A: r.rayleigh(k, 2.0, (5,)), 4, 4),
    "pareto": (lambda r, k, A: r.pareto(k, 3.0, (5,)), 8, 8),
    "weibull_min": (lambda r, k, A: r.weibull_min(k, 2.0, 1.5, (5,)), 4, 4),
    "lognormal": (lambda r, k, A: r.lognormal(k, 0.5, (5,)), 4, 4),
    "wald": (lambda r, k, A: r.wald(k, 1.5, (5,)), 16, 128),
    "gamma": (lambda r, k, A: r.gamma(k, A([0.1, 0.5, 1.0, 2.5, 7.0, 100.0], "f")), 4, 4),   # log, pow
    "loggamma": (lambda r, k, A: r.loggamma(k, A([0.01, 0.5, 1.0, 7.0], "f")), 16, 4),
    "beta": (lambda r, k, A: r.beta(k, 2.0, 0.5, (5,)), 8, 16),
    "dirichlet": (lambda r, k, A: r.dirichlet(k, A([0.5, 1.0, 3.0], "f"), (3,)), 16, 32),
    "chisquare": (lambda r, k, A: r.chisquare(k, 3.0, (5,)), 4, 8),
    "f": (lambda r, k, A: r.f(k, 3.0, 5.0, (5,)), 16, 16),
    "t": (lambda r, k, A: r.t(k, 3.0, (5,)), 8, 8),
    "generalized_normal": (lambda r, k, A: r.generalized_normal(k, 1.5, (5,)), 4, 8),
    "ball": (lambda r, k, A: r.ball(k, 3, 2, (4,)), 8, 8),
    "ball_p1": (lambda r, k, A: r.ball(k, 4, 1.0, (3,)), 8, 8),
    "multivariate_normal": (lambda r, k, A: r.multivariate_normal(k, A([0.0, 1.0], "f"),
                                                                  A([[2.0, 0.5], [0.5, 1.0]], "f"), (3,)), 4, 8),
    "multivariate_normal_eigh": (lambda r, k, A: r.multivariate_normal(
        k, A([0.0, 1.0], "f"), A([[2.0, 0.5], [0.5, 1.0]], "f"), (3,), method="eigh"), 8, 4),
    "orthogonal": (lambda r, k, A: r.orthogonal(k, 3, (2,)), 128, 256),       # QR (LAPACK vs XLA)
}


@pytest.mark.parametrize("name", sorted(CLOSE))
def test_within_ulps(mode, name):
    x64, jjr, A = mode
    fn, bound32, bound64 = CLOSE[name]
    for seed in SEEDS:
        ours, theirs = _pair(fn, jjr, A, seed)
        if _same_exception(ours, theirs):
            continue
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert np.array_equal(np.isnan(ours), np.isnan(theirs))
        d = ulp_distance(ours, theirs)
        assert d <= (bound64 if x64 else bound32), f"{name}: {d} ulps from JAX"


# --- known answers without JAX -------------------------------------------------------------------------

def test_known_keys_and_default_dtypes():
    assert np.asarray(fr.PRNGKey(0)).tolist() == [0, 0]
    with x64_mode(False):   # JAX (x64 off): a Python int seed is an int32
        assert np.asarray(fr.PRNGKey(-1)).tolist() == [0, 2 ** 32 - 1]
        assert np.asarray(fr.PRNGKey(2 ** 40 + 7)).tolist() == [0, 7]
        assert fr.bits(fr.PRNGKey(0), (2,)).dtype == np.uint32
        assert fr.randint(fr.PRNGKey(0), (2,), 0, 5).dtype == np.int32
        assert fr.categorical(fr.PRNGKey(0), np.zeros(3, np.float32), shape=(2,)).dtype == np.int32
        # JAX (x64 off, partitionable): the 32-bit draws
        assert np.asarray(fr.randint(fr.PRNGKey(0), (6,), 0, 10)).tolist() == [9, 0, 2, 3, 1, 7]
        assert np.asarray(fr.bits(fr.PRNGKey(0), (3,))).tolist() == [4070199207, 4202968722, 1427181096]
        assert np.asarray(fr.binomial(fr.PRNGKey(0), 30.0, 0.4, (6,))).tolist() == [8, 11, 8, 15, 10, 13]
    with x64_mode(True):    # JAX (x64 on): 64-bit seeds and draws
        assert np.asarray(fr.PRNGKey(-1)).tolist() == [2 ** 32 - 1, 2 ** 32 - 1]
        assert np.asarray(fr.PRNGKey(2 ** 40 + 7)).tolist() == [256, 7]
        assert np.asarray(fr.PRNGKey(np.int32(-1))).tolist() == [0, 2 ** 32 - 1]
        assert fr.bits(fr.PRNGKey(0), (2,)).dtype == np.uint64
        assert fr.randint(fr.PRNGKey(0), (2,), 0, 5).dtype == np.int64
        assert np.asarray(fr.randint(fr.PRNGKey(0), (6,), 0, 10)).tolist() == [5, 1, 5, 7, 3, 5]
        assert np.asarray(fr.bits(fr.PRNGKey(0), (3,))).tolist() == [7719171245655871230, 3989946895414531357,
                                                                     17807037942121513089]
        assert np.asarray(fr.binomial(fr.PRNGKey(0), 30.0, 0.4, (6,))).tolist() == [13, 14, 7, 16, 12, 14]
        # uniform's scaling rounded once (XLA's FMA): the first value differs from fl(fl(u * span) + lo)
        u = np.asarray(fr.uniform(fr.PRNGKey(0), (4,), np.float64, -3.3, 7.1))
        assert u.tolist() == [1.0519539618504186, -1.050527272102682, 6.739343195637573, 2.6748055507660475]
    for data in (-1, 2 ** 32):
        with pytest.raises(OverflowError, match="uint32"):
            fr.fold_in(fr.PRNGKey(0), data)
    with pytest.raises(OverflowError, match="int64"):
        fr.PRNGKey(2 ** 63)


def _exact(a, b, c=0.0):
    return float(Fraction(a) * Fraction(b) + Fraction(c))   # float() of a Fraction rounds correctly


def _round_f32(x: Fraction) -> np.float32:
    """x rounded to the nearest float32, ties to even (np.float32(float(x)) would round twice)."""
    near = np.float32(float(x))
    cands = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
    errs = [abs(Fraction(float(v)) - x) for v in cands]
    best = min(errs)
    ties = [v for v, e in zip(cands, errs) if e == best]
    return min(ties, key=lambda v: int(np.array(v).view(np.uint32)) & 1)


def test_fma_and_round_to_odd_are_correctly_rounded(x64_on):  # float64 data kept (x64 on)
    rs = np.random.RandomState(0)
    a = np.concatenate([rs.rand(400), rs.rand(100) * 2.0 ** -30, [1 - 2 ** -53, 0.5, 0.0]])
    b = np.concatenate([rs.randn(400) * 10, rs.randn(100), [10.4, 3.0, 7.0]])
    c = np.concatenate([-rs.rand(400) * 5, rs.randn(100) * 1e-9, [-3.3, 2.0 ** -60, -1.0]])
    A = funcgrad.numpy.asarray
    got = np.asarray(_fused.fma(A(a), A(b), A(c)))
    want = np.array([_exact(x, y, z) for x, y, z in zip(a, b, c)])
    np.testing.assert_array_equal(got, want)
    assert (got != a * b + c).any()   # the twice-rounded sum differs somewhere: the test can fail
    # a float64 sum rounded to odd, then to float32, is the correctly rounded float32 sum
    p = (a.astype(np.float32).astype(np.float64) * b.astype(np.float32).astype(np.float64))
    q = c.astype(np.float32).astype(np.float64)
    got32 = np.asarray(_fused.round_to_odd_sum(A(p), A(q))).astype(np.float32)
    want32 = np.array([_round_f32(Fraction(x) + Fraction(y)) for x, y in zip(p, q)])
    np.testing.assert_array_equal(got32, want32)
