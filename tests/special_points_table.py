"""The special-points derivative matrix's table: which public functions, with which inputs and points.

The rows are generated from the public namespaces (see FACES): every public callable of each namespace
is probed once, with float64 inputs, and classified by what it does with them:

- "unary_elem":  f(x) elementwise (f(x)[i] == f(x[i]) at a probe vector): one row, at UNARY_POINTS
                 (0, -0.0, +-1, +-0.5, +-2, tiny, huge, domain edges), all points in one vector;
- "binary_elem": f(x, y) elementwise: one row, at every pair of BINARY_VALUES (ties x == y included);
- "unary_array": f(x) on a vector, not elementwise (reductions, scans, sort, softmax, ...): a row per
                 input of VECTOR_INPUTS (ties of max and min, one zero, two zeros, all equal);
- "binary_array": f(x, y) on two vectors (dot, convolve, ...): a row per VECTOR_PAIRS;
- "matrix":      f(A) needing a matrix (det, inv, norms, ...): a row per MATRIX_INPUTS (singular of rank
                 2 and 1, zero, identity, a regular one, a symmetric one with a repeated eigenvalue);
- "matrix2":     f(A, B) with two matrices or a matrix and a vector (solve, matmul, ...).

A name the probe cannot classify (it needs integer, index, shape or callable arguments, or it is not
differentiable) must appear in EXPLICIT (its own argument builder) or in SKIP / NOT_DIFFERENTIABLE with a
reason (or match a listed SKIP_PATTERNS entry): test_every_public_name_is_covered_or_listed checks it.
Names whose float probe returns only integer/bool arrays are classified NOT_DIFFERENTIABLE automatically
(the summary counts them). Names are never called before the SKIP_PATTERNS check, so setters, seeds, I/O
and random functions are never probed.
"""
from __future__ import annotations

import importlib
import math
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import funcgrad

# --- the faces --------------------------------------------------------------------------------------

# face -> (funcgrad module path, reference module path, kind). kind "jax": Arrays and funcgrad's JAX
# transforms; "torch": float64 Tensors, torch.func.jvp forward and autograd.grad reverse.
FACES = {
    "jnp": ("funcgrad.numpy", "jax.numpy", "jax"),
    "lax": ("funcgrad.lax", "jax.lax", "jax"),
    "jax.nn": ("funcgrad._jax.nn", "jax.nn", "jax"),
    "jsp.special": ("funcgrad.scipy.special", "jax.scipy.special", "jax"),
    "jsp.stats": ("funcgrad.scipy.stats", "jax.scipy.stats", "jax"),
    "jnp.linalg": ("funcgrad.numpy.linalg", "jax.numpy.linalg", "jax"),
    "torch": ("funcgrad", "torch", "torch"),
    "Tensor": ("funcgrad.Tensor", "torch.Tensor", "torch"),
    "F": ("funcgrad.nn.functional", "torch.nn.functional", "torch"),
    "torch.linalg": ("funcgrad.linalg", "torch.linalg", "torch"),
    "torch.special": ("funcgrad.special", "torch.special", "torch"),
}

# --- the points -------------------------------------------------------------------------------------

TINY = 1e-300
UNARY_POINTS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, TINY, -TINY, 1e-8, 3.5, -3.5, 30.0,
                         -30.0, 6.0, 0.25])
BINARY_VALUES = [0.0, 1.0, -1.0, 0.5, 2.0, -2.0]
BINARY_X = np.array([a for a in BINARY_VALUES for b in BINARY_VALUES])
BINARY_Y = np.array([b for a in BINARY_VALUES for b in BINARY_VALUES])

VECTOR_INPUTS = {
    "ties": np.array([1.0, 3.0, 3.0, -2.0, 0.5]),       # repeated maximum
    "minties": np.array([-1.0, 2.0, -1.0, 0.5, 1.5]),   # repeated minimum
    "zero": np.array([2.0, 0.0, -1.5, 0.5, 1.25]),      # one zero inside products
    "zeros2": np.array([0.0, 3.0, 0.0, 1.0, -0.5]),     # two zeros
    "equal": np.array([1.5, 1.5, 1.5, 1.5, 1.5]),       # all equal (median, std, sort, ...)
}
VECTOR_PAIRS = {
    "generic": (np.array([1.0, -2.0, 0.5, 3.0, 0.0]), np.array([0.5, 1.0, -1.5, 2.0, 1.0])),
    "zeros": (np.array([0.0, 0.0, 1.0, -1.0, 2.0]), np.array([0.0, 1.0, 0.0, -1.0, 2.0])),
    "equal": (np.array([1.0, -2.0, 0.5, 3.0, 0.0]), np.array([1.0, -2.0, 0.5, 3.0, 0.0])),
}
_A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
MATRIX_INPUTS = {
    "rank2": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    "rank1": np.outer([1.0, -2.0, 2.0], [2.0, 1.0, -1.0]),
    "zero": np.zeros((3, 3)),
    "identity": np.eye(3),
    "regular": _A,
    "sym_repeated": np.array([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 5.0]]),  # repeated eigenvalue
    "spd": np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]]),
}
MATRIX_PAIRS = {
    "singular_vec": (MATRIX_INPUTS["rank2"], np.array([1.0, 2.0, 3.0])),
    "regular_vec": (_A, np.array([1.0, -1.0, 2.0])),
    "regular_mat": (_A, np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [3.0, 1.0, 0.0]])),
    "singular_mat": (MATRIX_INPUTS["rank1"], np.eye(3)),
}

# The probes: a generic vector (unsorted, positive, inside every function's domain) and a matrix.
PROBE_X = np.array([0.7, 0.3, 0.45])
PROBE_Y = np.array([0.6, 0.4, 0.9])
PROBE_M = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.5, 3.0]])
PROBE_M2 = np.array([[1.0, 0.2, 0.0], [0.3, 1.2, 0.1], [0.0, 0.4, 0.9]])

# --- names never probed (side effects, randomness, I/O) or not differentiable ---------------------

SKIP_PATTERNS = {
    r"^(set_|use_|enable|disable|manual_seed|seed$|initial_seed|get_rng_state)": "global state setter/getter",
    r"(^|_)(rand|randn|randint|randperm|random|normal|bernoulli|poisson|multinomial|binomial|\w*dropout\w*|rrelu|"
    r"gumbel|exponential|cauchy|geometric|log_normal)(_|$|_like)": "random: no deterministic value",
    r"^(save|load|from_file|frombuffer|fromfile|fromstring|loadtxt|savetxt|savez|savez_compressed|genfromtxt|"
    r"print|compile|pmap|jit|checkpoint|remat|hub|onnx)": "I/O, printing or a transform: no array function",
    r"^(empty|empty_like|empty_strided|new_empty|new_empty_strided)$": "uninitialised memory: no value",
    r"_$": "in-place variant: its out-of-place function has the row",
    r"^(is_|are_|can_cast|issubdtype|isdtype|result_type|promote_types|iinfo|finfo|get_|isscalar|ndim$|shape$|"
    r"size$|numel|dim$|nelement|element_size|data_ptr|storage|stride|has_|device|type$|type_as|to$|cpu|cuda|"
    r"numpy|tolist|item|dtype|layout|register_|retain|backward|requires_grad|detach|named|rename|align|refine)":
    "a query, conversion or autograd bookkeeping: not a differentiable array function",
}

# explicit reasons, per face (a name listed here is not classified by the probe)
NOT_DIFFERENTIABLE: dict[str, dict[str, str]] = {face: {} for face in FACES}
SKIP: dict[str, dict[str, str]] = {face: {} for face in FACES}


def _skip_pattern(name: str) -> str | None:
    for pat, reason in SKIP_PATTERNS.items():
        if re.search(pat, name):
            return reason
    return None


# --- explicit rows ----------------------------------------------------------------------------------

@dataclass
class Explicit:
    """A row with its own argument builder: call(ns, *diff) -> output, diff inputs as NumPy arrays.

    `ns` is the face's namespace (funcgrad's or the reference's module, or for "Tensor" the method is
    looked up on the first operand); `inputs` maps a point-set id to the tuple of differentiable inputs.
    """
    call: Callable[..., Any]
    inputs: dict[str, tuple]
    elementwise: bool = False


EXPLICIT: dict[str, dict[str, Explicit]] = {face: {} for face in FACES}


# --- rows ----------------------------------------------------------------------------------------

@dataclass
class Row:
    face: str
    name: str
    kind: str                      # unary_elem, binary_elem, unary_array, ..., explicit
    point_set: str                 # which inputs
    inputs: tuple                  # NumPy float64 arrays (the differentiable operands)
    call: Callable[..., Any] = field(repr=False, default=None)  # call(ns, *operands)
    elementwise: bool = False

    @property
    def id(self) -> str:
        return f"{self.face}:{self.name}[{self.point_set}]"


def resolve(path: str):
    """Import `a.b.C` (a module path, possibly ending with a class)."""
    try:
        return importlib.import_module(path)
    except ImportError:
        mod, _, attr = path.rpartition(".")
        return getattr(importlib.import_module(mod), attr)


def public_names(face: str) -> list[str]:
    """The public names of a face, as the matrix enumerates them."""
    obj = resolve(FACES[face][0])
    if face == "jax.nn":
        return sorted(obj.__all__)
    if face == "jsp.stats":
        out = []
        for d in dir(obj):
            sub = getattr(obj, d)
            if not d.startswith("_") and hasattr(sub, "logpdf"):
                out.append(f"{d}.logpdf")
        return sorted(out)
    names = sorted(n for n in dir(obj) if not n.startswith("_"))
    return names


def lookup(ns, name: str):
    for part in name.split("."):
        ns = getattr(ns, part)
    return ns


# --- face adapters (shared by funcgrad and the reference libraries) ---------------------------------

def is_array(x, kind: str) -> bool:
    if kind == "jax":
        return hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, (np.ndarray, np.generic))
    return type(x).__name__ in ("Tensor", "Parameter") or (hasattr(x, "grad_fn") and hasattr(x, "dtype"))


def float_leaves(out, kind: str) -> list:
    """The floating outputs of a call (tuples, named tuples and lists flattened), in order."""
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in float_leaves(o, kind)]
    if isinstance(out, type) or not is_array(out, kind):
        return []
    try:
        is_float = np.dtype(str(out.dtype).replace("torch.", "")).kind == "f"
    except TypeError:
        return []
    return [out] if is_float else []


def caller(face: str, name: str) -> Callable[..., Any]:
    """call(ns, *operands) for a probed name: a function of the namespace, or a Tensor method."""
    if face == "Tensor":
        return lambda ns, x, *rest: getattr(x, name)(*rest)
    return lambda ns, *ops: lookup(ns, name)(*ops)


def to_host(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "resolve_conj"):
        x = x.resolve_conj()
    if getattr(x, "is_sparse", False) is True:  # to_sparse rows: compare the dense values
        x = x.to_dense()
    if getattr(x, "_is_zerotensor", lambda: False)():  # torch's forward AD returns a ZeroTensor for a
        x = np.zeros(tuple(x.shape))  # zero tangent: numpy cannot view it
    return np.array(np.asarray(x), dtype=np.float64)


# --- the probe -------------------------------------------------------------------------------------

_CLASSIFIED: dict | None = None


def _make(kind: str):
    if kind == "jax":
        import funcgrad.numpy as fnp
        return lambda a: fnp.asarray(np.asarray(a, np.float64))
    return lambda a: funcgrad.tensor(np.asarray(a, np.float64), dtype=funcgrad.float64)


def _try(call, ns, ops, kind):
    try:
        with np.errstate(all="ignore"):
            out = call(ns, *ops)
    except Exception:  # noqa: BLE001 - the probe tries signatures; failures classify
        return None, False
    leaves = float_leaves(out, kind)
    return leaves, True


def _elementwise(call, ns, mk, kind, ops_np, leaves) -> bool:
    if len(leaves) != 1 or tuple(leaves[0].shape) != ops_np[0].shape:
        return False
    full = to_host(leaves[0])
    for i in range(ops_np[0].shape[0]):
        one, ok = _try(call, ns, [mk(o[i]) for o in ops_np], kind)
        if not ok or len(one) != 1 or tuple(one[0].shape) != ():
            return False
        if not np.allclose(to_host(one[0]), full[i], rtol=1e-12, atol=0, equal_nan=True):
            return False
    return True


def classify(face: str, name: str, ns, kind: str):
    """(class, reason): the probe's classification of one public name (see the module docstring)."""
    mk = _make(kind)
    call = caller(face, name)
    attempts = [("unary", [PROBE_X]), ("binary", [PROBE_X, PROBE_Y]), ("matrix", [PROBE_M]),
                ("matrix2", [PROBE_M, PROBE_M2]), ("matrix2", [PROBE_M, PROBE_X])]
    returned_nonfloat = False
    for label, ops_np in attempts:
        if face == "Tensor" and label == "unary" and name in ("__call__",):
            continue
        leaves, ok = _try(call, ns, [mk(o) for o in ops_np], kind)
        if not ok:
            continue
        if not leaves:
            returned_nonfloat = True
            continue
        if label in ("unary", "binary"):
            if _elementwise(call, ns, mk, kind, ops_np, leaves):
                return f"{label}_elem", ops_np
            return f"{label}_array", ops_np
        return label, ops_np
    if returned_nonfloat:
        return "not_differentiable", "returns no floating array for floating input"
    return "unclassified", None


def classification() -> dict:
    """{face: {name: (class, detail)}} for every public name (cached; probes with x64 on)."""
    global _CLASSIFIED
    if _CLASSIFIED is not None:
        return _CLASSIFIED
    prev = funcgrad.config.read("enable_x64") if hasattr(funcgrad.config, "read") else \
        funcgrad.config.enable_x64
    funcgrad.config.update("enable_x64", True)
    try:
        out: dict = {}
        for face, (path, _, kind) in FACES.items():
            ns = resolve(path)
            res = out[face] = {}
            for name in public_names(face):
                if name in EXPLICIT[face]:
                    res[name] = ("explicit", None)
                    continue
                if name in SKIP[face]:
                    res[name] = ("skip", SKIP[face][name])
                    continue
                if name in NOT_DIFFERENTIABLE[face]:
                    res[name] = ("not_differentiable", NOT_DIFFERENTIABLE[face][name])
                    continue
                reason = _skip_pattern(name.split(".")[-1] if face != "jsp.stats" else "")
                if reason:
                    res[name] = ("skip", reason)
                    continue
                obj = getattr(ns, name.split(".")[0], None) if face != "jsp.stats" else ns
                if face != "jsp.stats" and (obj is None or isinstance(obj, type) or not callable(obj)
                                            or type(obj).__name__ == "module"):
                    res[name] = ("not_a_function", "a class, module or constant")
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res[name] = classify(face, name, ns, kind)
        _CLASSIFIED = out
    finally:
        funcgrad.config.update("enable_x64", prev)
    return out


# --- exact values (mpmath, from the math) ---------------------------------------------------------

def _mp():
    import mpmath
    return mpmath


def _exact_unary() -> dict[str, tuple[Callable, tuple]]:
    """canonical name -> (f as an mpmath function, kinks: points where f is not smooth)."""
    mp = _mp()
    sig = lambda x: 1 / (1 + mp.exp(-x))  # noqa: E731
    sp = lambda x: mp.log1p(mp.exp(x))  # noqa: E731
    phi = lambda x: mp.ncdf(x)  # noqa: E731
    return {
        "abs": (abs, (0.0,)), "acos": (mp.acos, ()), "acosh": (mp.acosh, ()), "asin": (mp.asin, ()),
        "asinh": (mp.asinh, ()), "atan": (mp.atan, ()), "atanh": (mp.atanh, ()), "cbrt": (mp.cbrt, (0.0,)),
        "cos": (mp.cos, ()), "cosh": (mp.cosh, ()), "deg2rad": (lambda x: x * mp.pi / 180, ()),
        "rad2deg": (lambda x: x * 180 / mp.pi, ()), "exp": (mp.exp, ()), "exp2": (lambda x: 2 ** x, ()),
        "expm1": (mp.expm1, ()), "log": (mp.log, ()), "log10": (mp.log10, ()), "log1p": (mp.log1p, ()),
        "log2": (lambda x: mp.log(x, 2), ()), "sigmoid": (sig, ()), "neg": (lambda x: -x, ()),
        "positive": (lambda x: x, ()), "reciprocal": (lambda x: 1 / x, (0.0,)),
        "rsqrt": (lambda x: 1 / mp.sqrt(x), ()), "sin": (mp.sin, ()), "sinh": (mp.sinh, ()),
        "sinc": (lambda x: mp.sinc(mp.pi * x), ()), "sqrt": (mp.sqrt, ()), "square": (lambda x: x * x, ()),
        "tan": (mp.tan, ()), "tanh": (mp.tanh, ()), "erf": (mp.erf, ()), "erfc": (mp.erfc, ()),
        "erfinv": (mp.erfinv, ()), "lgamma": (lambda x: mp.log(abs(mp.gamma(x))), ()),
        "gamma": (mp.gamma, ()), "digamma": (mp.digamma, ()), "i0": (lambda x: mp.besseli(0, x), ()),
        "i1": (lambda x: mp.besseli(1, x), ()), "i0e": (lambda x: mp.exp(-abs(x)) * mp.besseli(0, x), (0.0,)),
        "i1e": (lambda x: mp.exp(-abs(x)) * mp.besseli(1, x), (0.0,)),
        "erfcx": (lambda x: mp.exp(x * x) * mp.erfc(x), ()), "ndtr": (phi, ()),
        "log_ndtr": (lambda x: mp.log(phi(x)), ()), "ndtri": (lambda p: mp.sqrt(2) * mp.erfinv(2 * p - 1), ()),
        "dawsn": (lambda x: mp.sqrt(mp.pi) / 2 * mp.exp(-x * x) * mp.erfi(x), ()),
        "exp1": (lambda x: mp.e1(x), ()), "expi": (mp.ei, (0.0,)),
        "spence": (lambda x: mp.polylog(2, 1 - x), ()), "entr": (lambda x: -x * mp.log(x), ()),
        "relu": (lambda x: max(x, 0), (0.0,)), "relu6": (lambda x: min(max(x, 0), 6), (0.0, 6.0)),
        "elu": (lambda x: x if x > 0 else mp.expm1(x), (0.0,)),
        "selu": (lambda x: mp.mpf("1.0507009873554804934193349852946") *
                 (x if x > 0 else mp.mpf("1.6732632423543772848170429916717") * mp.expm1(x)), (0.0,)),
        "gelu": (lambda x: x * phi(x), ()),
        "gelu_tanh": (lambda x: x / 2 * (1 + mp.tanh(mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x ** 3))), ()),
        "silu": (lambda x: x * sig(x), ()), "mish": (lambda x: x * mp.tanh(sp(x)), ()), "softplus": (sp, ()),
        "log_sigmoid": (lambda x: -sp(-x), ()), "soft_sign": (lambda x: x / (1 + abs(x)), (0.0,)),
        "tanhshrink": (lambda x: x - mp.tanh(x), ()), "hard_tanh": (lambda x: min(max(x, -1), 1), (-1.0, 1.0)),
        "hard_sigmoid": (lambda x: min(max(x + 3, 0), 6) / 6, (-3.0, 3.0)),
        "hard_swish": (lambda x: x * min(max(x + 3, 0), 6) / 6, (-3.0, 3.0)),
        "leaky_relu": (lambda x: x if x >= 0 else mp.mpf("0.01") * x, (0.0,)),
        "squareplus": (lambda x: (x + mp.sqrt(x * x + 4)) / 2, ()),
        "log1mexp": (lambda x: mp.log(1 - mp.exp(-x)), ()), "logit": (lambda p: mp.log(p / (1 - p)), ()),
        "identity": (lambda x: x, ()),
    }


# (face, name) or name -> canonical exact name (the name itself where it is canonical)
_ALIASES = {
    "absolute": "abs", "fabs": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh", "radians": "deg2rad", "degrees": "rad2deg",
    "logistic": "sigmoid", "expit": "sigmoid", "negative": "neg", "erf_inv": "erfinv", "gammaln": "lgamma",
    "psi": "digamma", "bessel_i0e": "i0e", "bessel_i1e": "i1e", "logsigmoid": "log_sigmoid",
    "softsign": "soft_sign", "hardtanh": "hard_tanh", "hardsigmoid": "hard_sigmoid",
    "hardswish": "hard_swish", "swish": "silu", "hard_silu": "hard_swish", "special.expit": "sigmoid",
    ("jax.nn", "gelu"): "gelu_tanh", ("jsp.special", "i0"): "i0", ("F", "hardsigmoid"): "hard_sigmoid",
    "special.ndtr": "ndtr", "special.log_ndtr": "log_ndtr", "special.ndtri": "ndtri", "special.erfcx": "erfcx",
    "special.i0e": "i0e", "special.i1e": "i1e", "special.i1": "i1", "special.entr": "entr",
    "special.digamma": "digamma", "special.psi": "digamma", "special.gammaln": "lgamma", "special.erfinv": "erfinv",
    "special.sinc": "sinc", "special.logit": "logit", "special.erf": "erf", "special.erfc": "erfc",
    "special.expm1": "expm1", "special.exp2": "exp2", "special.log1p": "log1p", "special.i0": "i0",
}
# Functions whose defaults differ from the canonical math (a parameter the face sets), or no exact value
_NO_EXACT = {("jax.nn", "hard_sigmoid"), ("jax.nn", "hard_swish"), ("jax.nn", "hard_silu"),
             ("torch", "logit"), ("Tensor", "logit")}  # jax.nn.hard_* are relu6(x + 3) / 6: checked too


def canonical(face: str, name: str) -> str | None:
    table = _exact_unary()
    if (face, name) in _NO_EXACT:
        return None
    for key in ((face, name), name):
        if key in _ALIASES:
            return _ALIASES[key]
    return name if name in table else None


def _real(v) -> bool:
    mp = _mp()
    return isinstance(v, mp.mpf) and mp.isfinite(v)


def _closed_form_derivs() -> dict[str, tuple[Callable, Callable]]:
    """canonical name -> (f', f'') in closed form, where numerical differentiation in mpmath is slow
    (the gamma family: mp.diff needs many evaluations at hundreds of digits)."""
    mp = _mp()
    return {
        "lgamma": (mp.digamma, lambda x: mp.polygamma(1, x)),
        "digamma": (lambda x: mp.polygamma(1, x), lambda x: mp.polygamma(2, x)),
        "gamma": (lambda x: mp.gamma(x) * mp.digamma(x),
                  lambda x: mp.gamma(x) * (mp.digamma(x) ** 2 + mp.polygamma(1, x))),
    }


def _exact_derivs(f, x: float, kinks, derivs=None) -> tuple[float, float, float] | None:
    """(f, f', f'') at x from mpmath, or None where f is not smooth at x (a kink, an edge of the domain,
    or a non-real value nearby). derivs: (f', f'') in closed form, else mpmath.diff."""
    mp = _mp()
    if x in kinks:
        return None
    digits = 40 + (int(-math.log10(abs(x))) if 0 < abs(x) < 1 else 0)  # resolve steps of 1e-12 |x|
    with mp.workdps(digits):
        xm = mp.mpf(x)
        d = abs(xm) * mp.mpf("1e-6") if x != 0 else mp.mpf("1e-6")
        try:
            vals = [f(xm), f(xm - d), f(xm + d)]
        except (ValueError, ZeroDivisionError, TypeError):
            return None
        if not all(_real(v) for v in vals):
            return None
        for k in kinks:  # a kink within d
            if abs(xm - k) <= d:
                return None
        h = abs(xm) * mp.mpf("1e-12") if x != 0 else mp.mpf("1e-12")
        try:
            if derivs is not None:
                d1, d2 = derivs[0](xm), derivs[1](xm)
            else:
                d1 = mp.diff(f, xm, 1, h=h)
                d2 = mp.diff(f, xm, 2, h=h)
        except (ValueError, ZeroDivisionError, TypeError):
            return None
        if not (_real(d1) and _real(d2)):
            return None
        return float(vals[0]), float(d1), float(d2)


_EXACT_CACHE: dict = {}


def has_exact(row: Row) -> bool:
    """Whether the row has an exact column (cheap: no mpmath evaluation)."""
    return row.kind == "unary_elem" and row.elementwise and canonical(row.face, row.name) is not None


def exact_for(row: Row):
    """{quantity key: (tuple of arrays, mask)} of exact values for an elementwise unary row where mpmath
    knows the function, at the points where it is smooth; None where there is no exact column."""
    if not has_exact(row):
        return None
    canon = canonical(row.face, row.name)
    key = (canon, row.point_set)
    if key not in _EXACT_CACHE:
        f, kinks = _exact_unary()[canon]
        x = row.inputs[0]
        derivs = _closed_form_derivs().get(canon)
        got = [_exact_derivs(f, float(p), kinks, derivs) for p in x]
        mask = np.array([g is not None for g in got])
        val = np.array([g[0] if g else np.nan for g in got])
        d1 = np.array([g[1] if g else np.nan for g in got])
        d2 = np.array([g[2] if g else np.nan for g in got])
        _EXACT_CACHE[key] = {"value": ((val,), mask), "fwd1[0]": ((d1,), mask), "fwd2[0]": ((d2,), mask),
                             "rev1": ((d1,), mask), "rev2[0]": ((d2,), mask)}
    return _EXACT_CACHE[key]


# --- names the probe cannot classify: explicit rows, or a reason ------------------------------------

def _lib(ns):
    """The top-level module (funcgrad or torch) a torch-face namespace belongs to."""
    mod = getattr(ns, "__module__", None) or getattr(ns, "__name__", "")
    return importlib.import_module("torch" if str(mod).split(".")[0] == "torch" else "funcgrad")


_VT = {"ties": (VECTOR_INPUTS["ties"],)}
_VALL = {k: (v,) for k, v in VECTOR_INPUTS.items()}
_MR = {"regular": (_A,)}
_MALL = {k: (v,) for k, v in MATRIX_INPUTS.items()}
_PTS = {"points": (UNARY_POINTS,)}
_POS = {"positive": (np.array([0.5, 1.0, 1.5, 2.0, 3.5, 6.0, 30.0, 1e-8]),)}
_UNITPTS = {"unit": (np.array([0.0, TINY, 0.25, 0.5, 0.75, 1.0, 1e-8]),)}


def _ex(call, inputs=_VT, elementwise=False) -> Explicit:
    return Explicit(call, inputs, elementwise)


EXPLICIT["jnp"].update({
    "reshape": _ex(lambda ns, x: ns.reshape(x, (5, 1))),
    "resize": _ex(lambda ns, x: ns.resize(x, (7,))),
    "expand_dims": _ex(lambda ns, x: ns.expand_dims(x, 0)),
    "broadcast_to": _ex(lambda ns, x: ns.broadcast_to(x, (2, 5))),
    "full": _ex(lambda ns, x: ns.full((2, 5), x)),
    "moveaxis": _ex(lambda ns, a: ns.moveaxis(a, 0, 1), _MR),
    "permute_dims": _ex(lambda ns, a: ns.permute_dims(a, (1, 0)), _MR),
    "swapaxes": _ex(lambda ns, a: ns.swapaxes(a, 0, 1), _MR),
    "rollaxis": _ex(lambda ns, a: ns.rollaxis(a, 1), _MR),
    "roll": _ex(lambda ns, x: ns.roll(x, 2)),
    "tile": _ex(lambda ns, x: ns.tile(x, 2)),
    "repeat": _ex(lambda ns, x: ns.repeat(x, 2)),
    "split": _ex(lambda ns, x: ns.split(x, [2])),
    "array_split": _ex(lambda ns, x: ns.array_split(x, 2)),
    "hsplit": _ex(lambda ns, x: ns.hsplit(x, [2])),
    "vsplit": _ex(lambda ns, a: ns.vsplit(a, [1]), _MR),
    "dsplit": _ex(lambda ns, a: ns.dsplit(ns.reshape(a, (1, 3, 3)), [1]), _MR),
    "take": _ex(lambda ns, x: ns.take(x, ns.asarray([0, 2, 2, 4]))),
    "take_along_axis": _ex(lambda ns, x: ns.take_along_axis(x, ns.asarray([4, 1, 1, 0]), axis=0)),
    "pad": _ex(lambda ns, x: ns.pad(x, (1, 2))),
    "delete": _ex(lambda ns, x: ns.delete(x, 1)),
    "insert": _ex(lambda ns, x: ns.insert(x, 1, 7.0)),
    "choose": _ex(lambda ns, x: ns.choose(ns.asarray([0, 1, 0, 1, 0]), [x, 2 * x])),
    "select": _ex(lambda ns, x: ns.select([x > 1, x < 0], [x, -x], 0.5)),
    "piecewise": _ex(lambda ns, x: ns.piecewise(x, [x < 1, x >= 1], [lambda t: t * t, lambda t: 2 * t - 1])),
    "put": _ex(lambda ns, x: ns.put(x, ns.asarray([0, 3]), ns.asarray([9.0, 8.0]), inplace=False)),
    "fill_diagonal": _ex(lambda ns, a: ns.fill_diagonal(a, 0.0, inplace=False), _MR),
    "einsum": _ex(lambda ns, a: ns.einsum("ij,jk->ik", a, a), _MR),
    "interp": _ex(lambda ns, x: ns.interp(x, ns.asarray([-1.0, 0.0, 1.0, 2.0]), ns.asarray([0.0, 1.0, -1.0, 3.0]))),
    "ldexp": _ex(lambda ns, x: ns.ldexp(x, 3), _PTS, True),
    "polyfit": _ex(lambda ns, y: ns.polyfit(ns.asarray([0.0, 1.0, 2.0, 3.0, 4.0]), y, 2)),
    "apply_along_axis": _ex(lambda ns, a: ns.apply_along_axis(lambda v: ns.sum(v * v), 0, a), _MR),
    "apply_over_axes": _ex(lambda ns, a: ns.apply_over_axes(ns.sum, a, [0]), _MR),
    # the order within each side of kth is unspecified (NumPy's and JAX's documentation): the row compares
    # each side sorted, and so the partition property and where the derivatives go
    "partition": _ex(lambda ns, x: (lambda p: ns.concatenate([ns.sort(p[:2]), p[2:3], ns.sort(p[3:])]))(
        ns.partition(x, 2)), _VALL),
    # 7 bins: no data value on a bin edge (10 bins put 0.5 and 1.0 of "ties" exactly on edges, where the
    # count depends on the edges' last-ulp rounding: JAX's linspace gives 0.5000000000000002, NumPy's 0.5)
    "histogram": _ex(lambda ns, x: ns.histogram(x, 7), _VALL),
    # start and stop of one sign and nonzero: a geometric sequence through (or from) 0 does not exist
    "geomspace": _ex(lambda ns, a, b: ns.geomspace(a, b), {
        "generic": (np.array([1.0, -2.0, 0.5, 3.0, 0.25]), np.array([0.5, -1.0, 1.5, 2.0, 1.0])),
        "equal": (np.array([1.0, -2.0, 0.5, 3.0, 0.25]), np.array([1.0, -2.0, 0.5, 3.0, 0.25]))}),
})
# percentiles / quantiles of the vector pairs' first vectors at q inside [0, 100] / [0, 1] (q outside is
# an error, as in NumPy), at positions q (n - 1) between order statistics (where q's derivative exists)
_PCT_Q = np.array([10.0, 30.0, 55.0, 80.0, 95.0])
_PCT = {k: (x, _PCT_Q) for k, (x, _) in VECTOR_PAIRS.items()}
_QNT = {k: (x, _PCT_Q / 100) for k, (x, _) in VECTOR_PAIRS.items()}
EXPLICIT["jnp"].update({n: _ex(lambda ns, x, q, n=n: getattr(ns, n)(x, q), _PCT if "percentile" in n else _QNT)
                        for n in ("percentile", "nanpercentile", "quantile", "nanquantile")})
NOT_DIFFERENTIABLE["jnp"].update({n: "creates an array from shapes, sizes or Python numbers: no differentiable operand"
                                  for n in ("arange", "bartlett", "blackman", "eye", "hamming", "hanning", "identity",
                                            "indices", "kaiser", "ones", "zeros", "tri", "tril_indices",
                                            "triu_indices", "diag_indices", "mask_indices", "fromfunction")})
NOT_DIFFERENTIABLE["jnp"].update({n: "integer, bitwise or index output (or integer-only input)" for n in (
    "argpartition", "base_repr", "binary_repr", "bincount", "bitwise_and", "bitwise_count", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "digitize", "gcd",
    "lcm", "invert", "left_shift", "right_shift", "packbits", "unpackbits", "ravel_multi_index", "unravel_index")})
SKIP["jnp"].update({n: "not an array function (shape arithmetic, an einsum contraction path, floating-point "
                    "error state, a ufunc factory)" for n in ("broadcast_shapes", "einsum_path", "geterr", "seterr",
                                                             "frompyfunc")})
SKIP["jnp"].update({"place": "in place by NumPy's signature (JAX requires inplace=False and returns the array; "
                    "its values enter through a boolean mask: the put row covers the same scatter)",
                    "put_along_axis": "scatter along an axis with inplace=False: the put and take_along_axis rows "
                    "cover its scatter and gather"})

EXPLICIT["lax"].update({
    "clamp": _ex(lambda ns, x: ns.clamp(-1.0, x, 1.0), _PTS, True),
    "integer_pow": _ex(lambda ns, x: ns.integer_pow(x, 3), _PTS, True),
    "polygamma": _ex(lambda ns, x: ns.polygamma(np.ones(x.shape), x), _POS, True),
    "betainc": _ex(lambda ns, x: ns.betainc(np.full(x.shape, 2.0), np.full(x.shape, 3.0), x), _UNITPTS, True),
    "reduce_sum": _ex(lambda ns, x: ns.reduce_sum(x, (0,)), _VALL),
    "reduce_max": _ex(lambda ns, x: ns.reduce_max(x, (0,)), _VALL),
    "reduce_min": _ex(lambda ns, x: ns.reduce_min(x, (0,)), _VALL),
    "reduce_prod": _ex(lambda ns, x: ns.reduce_prod(x, (0,)), _VALL),
    "reduce_precision": _ex(lambda ns, x: ns.reduce_precision(x, 11, 52), _PTS, True),
    "top_k": _ex(lambda ns, x: ns.top_k(x, 2), _VALL),
    "broadcast": _ex(lambda ns, x: ns.broadcast(x, (2,))),
    "broadcast_in_dim": _ex(lambda ns, x: ns.broadcast_in_dim(x, (2, 5), (1,))),
    "broadcast_to_rank": _ex(lambda ns, x: ns.broadcast_to_rank(x, 2)),
    "collapse": _ex(lambda ns, a: ns.collapse(a, 0, 2), _MR),
    "concatenate": _ex(lambda ns, x: ns.concatenate([x, 2 * x], 0)),
    "dynamic_slice": _ex(lambda ns, x: ns.dynamic_slice(x, (1,), (3,))),
    "dynamic_slice_in_dim": _ex(lambda ns, x: ns.dynamic_slice_in_dim(x, 1, 3)),
    "dynamic_update_slice": _ex(lambda ns, x: ns.dynamic_update_slice(x, 2 * x[:2], (1,))),
    "dynamic_update_slice_in_dim": _ex(lambda ns, x: ns.dynamic_update_slice_in_dim(x, 2 * x[:2], 1, 0)),
    "dynamic_index_in_dim": _ex(lambda ns, x: ns.dynamic_index_in_dim(x, 1, 0, False)),
    "dynamic_update_index_in_dim": _ex(lambda ns, x: ns.dynamic_update_index_in_dim(x, 2 * x[0], 1, 0)),
    "index_in_dim": _ex(lambda ns, x: ns.index_in_dim(x, 1, 0, False)),
    "expand_dims": _ex(lambda ns, x: ns.expand_dims(x, (0,))),
    "pad": _ex(lambda ns, x: ns.pad(x, np.float64(0.0), ((1, 2, 1),))),
    "reshape": _ex(lambda ns, x: ns.reshape(x, (5, 1))),
    "rev": _ex(lambda ns, x: ns.rev(x, (0,))),
    "slice": _ex(lambda ns, x: ns.slice(x, (1,), (4,))),
    "slice_in_dim": _ex(lambda ns, x: ns.slice_in_dim(x, 1, 4)),
    "split": _ex(lambda ns, x: ns.split(x, (2, 3))),
    "squeeze": _ex(lambda ns, x: ns.squeeze(ns.reshape(x, (1, 5)), (0,))),
    "tile": _ex(lambda ns, x: ns.tile(x, (2,))),
    "transpose": _ex(lambda ns, a: ns.transpose(a, (1, 0)), _MR),
    "select": _ex(lambda ns, x: ns.select(x > 1, x, -x)),
    "dot_general": _ex(lambda ns, a: ns.dot_general(a, a, (((1,), (0,)), ((), ()))), _MR),
    "conv": _ex(lambda ns, a: ns.conv(ns.reshape(a, (1, 1, 3, 3)), ns.reshape(a[:2, :2], (1, 1, 2, 2)), (1, 1),
                                      "SAME"), _MR),
    "conv_general_dilated": _ex(lambda ns, a: ns.conv_general_dilated(
        ns.reshape(a, (1, 1, 3, 3)), ns.reshape(a[:2, :2], (1, 1, 2, 2)), (1, 1), "VALID"), _MR),
    "real": _ex(lambda ns, x: ns.real(ns.complex(x, 2 * x))),
    "imag": _ex(lambda ns, x: ns.imag(ns.complex(x, 2 * x))),
    "reduce_window": _ex(lambda ns, x: ns.reduce_window(x, np.float64(0.0), ns.add, (2,), (1,), "VALID")),
    "cond": _ex(lambda ns, x: ns.cond(True, lambda t: ns.sin(t) * t, lambda t: t, x)),
    "switch": _ex(lambda ns, x: ns.switch(1, [lambda t: t, lambda t: ns.exp(t)], x)),
    "fori_loop": _ex(lambda ns, x: ns.fori_loop(0, 3, lambda i, c: c * ns.sin(c) + x, x)),
    "scan": _ex(lambda ns, x: ns.scan(lambda c, t: (c * t, c + t), x[0], x)),
    "map": _ex(lambda ns, x: ns.map(lambda t: t * ns.sin(t), x)),
    "associative_scan": _ex(lambda ns, x: ns.associative_scan(ns.mul, x), _VALL),
    "while_loop": _ex(lambda ns, x: ns.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * ns.sin(c[1])),
                                                  (0, x))[1]),
})
NOT_DIFFERENTIABLE["lax"].update({n: "integer, bitwise, boolean or index output" for n in (
    "argmax", "argmin", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "clz", "mulhi",
    "population_count", "shift_left", "shift_right_arithmetic", "shift_right_logical", "iota", "broadcasted_iota", "reduce_and", "reduce_or", "reduce_xor")})
NOT_DIFFERENTIABLE["lax"]["full"] = "creates an array from a shape and a Python fill value"
SKIP["lax"].update({n: "a collective: needs a named axis bound by pmap / shard_map (not a function of arrays alone)"
                    for n in ("all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
                              "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes")})
SKIP["lax"].update({n: "shape arithmetic or a dimension-numbers constructor: no array operand" for n in (
    "ConvGeneralDilatedDimensionNumbers", "conv_dimension_numbers", "conv_general_shape_tuple", "conv_shape_tuple",
    "conv_transpose_shape_tuple", "padtype_to_pads", "reduce_window_shape_tuple")})
SKIP["lax"].update({
    "approx_max_k": "lax.top_k with a recall target: on CPU it is top_k (the top_k row)",
    "approx_min_k": "lax.top_k of -x with a recall target: on CPU it is top_k (the top_k row)",
    "conv_general_dilated_patches": "an identity-kernel conv_general_dilated (the conv_general_dilated row)",
    "conv_transpose": "conv_general_dilated with lhs dilation (the conv_general_dilated row and the registry "
                      "property tests of its card)",
    "conv_with_general_padding": "conv_general_dilated with explicit padding (the conv_general_dilated row)",
    "custom_linear_solve": "takes a matvec and solver callables: its implicit rule is tested in the custom_root / "
                           "custom_linear_solve tests, not at special points of an array",
    "custom_root": "takes callables (f, initial guess, solvers): implicit-function rule tested in its own tests",
    "fft": "complex output with fft_type/fft_lengths: the fft card is checked by the registry property tests",
    "gather": "GatherDimensionNumbers arguments: the same card as jnp.take / take_along_axis (rows above)",
    "index_take": "a gather with explicit index arrays: the same card as jnp.take (row above)",
    "platform_dependent": "dispatches to per-platform callables: not an array function",
    "ragged_dot": "dot_general per group of rows (group_sizes is an integer argument): the dot_general row",
    "reduce": "a reduction with a callable: lax.reduce_sum/max/min/prod rows cover the monoid reductions",
    "scatter": "ScatterDimensionNumbers arguments: the same card as jnp.put (row above)",
    "scatter_add": "ScatterDimensionNumbers arguments: the scatter card (jnp.put row, registry property tests)",
    "scatter_apply": "ScatterDimensionNumbers and a callable: the scatter card (registry property tests)",
    "scatter_max": "ScatterDimensionNumbers arguments: the scatter card (registry property tests)",
    "scatter_min": "ScatterDimensionNumbers arguments: the scatter card (registry property tests)",
    "scatter_mul": "ScatterDimensionNumbers arguments: the scatter card (registry property tests)",
    "scatter_sub": "ScatterDimensionNumbers arguments: the scatter card (registry property tests)",
})

EXPLICIT["jax.nn"].update({
    "glu": _ex(lambda ns, x: ns.glu(x), {"mixed": (np.array([1.0, 0.0, -2.0, 0.5, 3.0, 0.0]),)}),
    "dot_product_attention": _ex(lambda ns, a: ns.dot_product_attention(
        a.reshape(1, 3, 1, 3), a.reshape(1, 3, 1, 3), a.reshape(1, 3, 1, 3)), _MALL),
})
NOT_DIFFERENTIABLE["jax.nn"]["one_hot"] = "integer labels in, a 0/1 array out"

EXPLICIT["jsp.special"].update({
    "betainc": _ex(lambda ns, x: ns.betainc(np.full(x.shape, 2.0), np.full(x.shape, 3.0), x), _UNITPTS, True),
    "polygamma": _ex(lambda ns, x: ns.polygamma(np.ones(x.shape, np.int64), x), _POS, True),
    "multigammaln": _ex(lambda ns, x: ns.multigammaln(x, 2), {"above": (np.array([1.0, 1.5, 2.0, 3.5, 30.0]),)},
                        True),
    "hyp1f1": _ex(lambda ns, x: ns.hyp1f1(np.full(x.shape, 1.5), np.full(x.shape, 2.5), x), _PTS, True),
    "hyp2f1": _ex(lambda ns, x: ns.hyp2f1(np.full(x.shape, 0.5), np.full(x.shape, 1.5), np.full(x.shape, 2.5), x),
                  {"inside": (np.array([0.0, -0.0, 0.5, -0.5, 0.25, TINY, -1.0]),)}, True),
})
SKIP["jsp.special"].update({
    "full": "not a jax.scipy.special function: a helper imported into funcgrad.scipy.special's namespace",
    "lpmn": "associated Legendre functions with integer m, n (a table of values): value tests in the scipy suite",
    "lpmn_values": "associated Legendre functions with integer m, n: value tests in the scipy suite",
    "sph_harm": "spherical harmonics with integer m, n and complex output: value tests in the scipy suite",
    "sph_harm_y": "spherical harmonics with integer n, m and complex output: value tests in the scipy suite",
})
EXPLICIT["jsp.stats"].update({
    "beta.logpdf": _ex(lambda ns, x: ns.beta.logpdf(x, 2.0, 3.0), _UNITPTS, True),
    "truncnorm.logpdf": _ex(lambda ns, x: ns.truncnorm.logpdf(x, -1.0, 2.0),
                            {"inside": (np.array([0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 1e-8]),)}, True),
    "multivariate_normal.logpdf": _ex(lambda ns, x: ns.multivariate_normal.logpdf(
        x, np.zeros(3), MATRIX_INPUTS["spd"]), {"x": (np.array([0.0, 1.0, -1.0]),)}),
})
SKIP["jsp.stats"]["gaussian_kde.logpdf"] = "a method of a gaussian_kde object built from a dataset: not a function"
EXPLICIT["jnp.linalg"].update({
    "matrix_power": _ex(lambda ns, a: ns.matrix_power(a, 3), _MALL),
    "multi_dot": _ex(lambda ns, a: ns.multi_dot([a, a, a]), _MR),
    "tensorinv": _ex(lambda ns, a: ns.tensorinv(a, ind=1), _MR),
})
SKIP["jnp.linalg"].update({n: "not a jax.numpy.linalg function: a helper imported into funcgrad.numpy.linalg's "
                           "namespace" for n in ("NamedTuple", "broadcast_shapes", "broadcast_to", "dot_general",
                                                 "normalize_index", "user_location")})


# torch face and Tensor methods: name -> (the arguments after the tensor, as f(lib, x) -> (args, kwargs), inputs)
def _a(*args, **kwargs):
    return args, kwargs


_IDX = lambda t, *v: t.tensor(list(v), dtype=t.int64)  # noqa: E731
_TORCH_METHODS = {
    "cumsum": (lambda t, x: _a(0), _VALL), "cumprod": (lambda t, x: _a(0), _VALL),
    "cummax": (lambda t, x: _a(0), _VALL), "cummin": (lambda t, x: _a(0), _VALL),
    "logcumsumexp": (lambda t, x: _a(0), _VALL), "logsumexp": (lambda t, x: _a(0), _VALL),
    "kthvalue": (lambda t, x: _a(2), _VALL), "topk": (lambda t, x: _a(2), _VALL),
    "polygamma": None,  # polygamma(n, x): its own row below
    "mvlgamma": (lambda t, x: _a(p=2), {"above": (np.array([1.0, 1.5, 2.0, 3.5, 30.0]),)}),
    "reshape": (lambda t, x: _a((5, 1)), _VT), "view": (lambda t, x: _a(5, 1), _VT),
    "permute": (lambda t, a: _a(1, 0), _MR), "transpose": (lambda t, a: _a(0, 1), _MR),
    "swapaxes": (lambda t, a: _a(0, 1), _MR), "swapdims": (lambda t, a: _a(0, 1), _MR),
    "moveaxis": (lambda t, a: _a(0, 1), _MR), "movedim": (lambda t, a: _a(0, 1), _MR),
    "unsqueeze": (lambda t, x: _a(0), _VT), "unflatten": (lambda t, x: _a(0, (5, 1)), _VT),
    "broadcast_to": (lambda t, x: _a((2, 5)), _VT), "expand": (lambda t, x: _a(2, 5), _VT),
    "repeat": (lambda t, x: _a(2), _VT), "tile": (lambda t, x: _a((2,)), _VT), "roll": (lambda t, x: _a(2), _VT),
    "repeat_interleave": (lambda t, x: _a(2), _VT),
    "narrow": (lambda t, x: _a(0, 1, 3), _VT), "select": (lambda t, x: _a(0, 1), _VT),
    "chunk": (lambda t, x: _a(2), _VT), "split": (lambda t, x: _a(2), _VT),
    "split_with_sizes": (lambda t, x: _a([2, 3]), _VT), "tensor_split": (lambda t, x: _a(2), _VT),
    "hsplit": (lambda t, x: _a([2]), _VT), "vsplit": (lambda t, a: _a([1]), _MR),
    "dsplit": None,
    "take": (lambda t, x: _a(_IDX(t, 0, 2, 2, 4)), _VT),
    "take_along_dim": (lambda t, x: _a(_IDX(t, 4, 1, 1, 0), 0), _VT),
    "gather": (lambda t, x: _a(0, _IDX(t, 4, 1, 1, 0)), _VT),
    "index_select": (lambda t, x: _a(0, _IDX(t, 0, 2, 2)), _VT),
    "index_add": (lambda t, x: _a(0, _IDX(t, 0, 2), x[:2] * 2), _VT),
    "index_copy": (lambda t, x: _a(0, _IDX(t, 0, 2), x[:2] * 2), _VT),
    "index_fill": (lambda t, x: _a(0, _IDX(t, 0, 2), 7.0), _VT),
    "index_put": (lambda t, x: _a((_IDX(t, 0, 2),), x[:2] * 2), _VT),
    "index_reduce": (lambda t, x: _a(0, _IDX(t, 0, 0), x[:2] * 2, "prod"), _VALL),
    "scatter": (lambda t, x: _a(0, _IDX(t, 0, 2), x[:2] * 2), _VT),
    "scatter_add": (lambda t, x: _a(0, _IDX(t, 0, 0), x[:2] * 2), _VT),
    "scatter_reduce": (lambda t, x: _a(0, _IDX(t, 0, 0, 1), x[:3] * 2, "amax"), _VALL),
    "put": (lambda t, x: _a(_IDX(t, 0, 3), x[:2] * 2), _VT),
    "masked_fill": (lambda t, x: _a(x > 1, 7.0), _VT),
    "masked_scatter": (lambda t, x: _a(x > 1, x * 2), _VT),
    "masked_select": (lambda t, x: _a(x > 1), _VT),
    "lerp": (lambda t, x: _a(x.flip(0), 0.25), _VT),
    "addcmul": (lambda t, x: _a(x, x.flip(0), value=0.5), _VALL),
    "addcdiv": (lambda t, x: _a(x, x.flip(0) + 5.0, value=0.5), _VALL),
    "addmm": (lambda t, a: _a(a, a.T), _MALL), "addmv": (lambda t, x: _a(x.reshape(3, 1) * x.flip(0).reshape(1, 3), x), {"regular": (_A[0],)}),
    "addr": (lambda t, a: _a(a[0], a[1]), _MR), "bmm": None,
    "baddbmm": None, "addbmm": None,
    "matrix_power": (lambda t, a: _a(3), _MALL),
    "renorm": (lambda t, a: _a(2, 0, 1.0), _MALL),
    "logit": None,
}


def _torch_call(name, args):
    return lambda ns, x: getattr(ns, name)(x, *args(_lib(ns), x)[0], **args(_lib(ns), x)[1])


def _tensor_call(name, args):
    return lambda ns, x: getattr(x, name)(*args(_lib(ns), x)[0], **args(_lib(ns), x)[1])


for _n, _spec in _TORCH_METHODS.items():
    if _spec is None:
        continue
    EXPLICIT["torch"][_n] = _ex(_torch_call(_n, _spec[0]), _spec[1])
    EXPLICIT["Tensor"][_n] = _ex(_tensor_call(_n, _spec[0]), _spec[1])

_B3 = lambda a: a.reshape(1, 3, 3)  # noqa: E731
EXPLICIT["torch"].update({
    "polygamma": _ex(lambda ns, x: ns.polygamma(1, x), _POS, True),
    "bmm": _ex(lambda ns, a: ns.bmm(_B3(a), _B3(a)), _MR),
    "baddbmm": _ex(lambda ns, a: ns.baddbmm(_B3(a), _B3(a), _B3(a)), _MR),
    "addbmm": _ex(lambda ns, a: ns.addbmm(a, _B3(a), _B3(a)), _MR),
    "dsplit": _ex(lambda ns, a: ns.dsplit(_B3(a), [1]), _MR),
    "cat": _ex(lambda ns, x: ns.cat([x, 2 * x])), "concat": _ex(lambda ns, x: ns.concat([x, 2 * x])),
    "concatenate": _ex(lambda ns, x: ns.concatenate([x, 2 * x])), "stack": _ex(lambda ns, x: ns.stack([x, 2 * x])),
    "hstack": _ex(lambda ns, x: ns.hstack([x, 2 * x])), "vstack": _ex(lambda ns, x: ns.vstack([x, 2 * x])),
    "dstack": _ex(lambda ns, x: ns.dstack([x, 2 * x])), "column_stack": _ex(lambda ns, x: ns.column_stack([x, 2 * x])),
    "row_stack": _ex(lambda ns, x: ns.row_stack([x, 2 * x])), "flip": _ex(lambda ns, x: ns.flip(x, (0,))),
    "einsum": _ex(lambda ns, a: ns.einsum("ij,jk->ik", a, a), _MR),
    "imag": _ex(lambda ns, x: ns.imag(ns.complex(x, 2 * x))),
    "view_as_real": _ex(lambda ns, x: ns.view_as_real(ns.complex(x, 2 * x))),
    "view_as_complex": _ex(lambda ns, a: ns.real(ns.view_as_complex(a[:, :2].contiguous())), _MR),
    "threshold": _ex(lambda ns, x: ns.threshold(x, 0.5, -1.0), _PTS, True),
    "constant_pad_nd": _ex(lambda ns, x: ns.constant_pad_nd(x, (1, 2), 0.5)),
    "layer_norm": _ex(lambda ns, x: ns.layer_norm(x, (5,)), _VALL),
    "rms_norm": _ex(lambda ns, x: ns.rms_norm(x, (5,)), _VALL),
    "group_norm": _ex(lambda ns, a: ns.group_norm(a.reshape(1, 3, 3), 1), _MALL),
    "max_pool1d": _ex(lambda ns, x: ns.max_pool1d(x.reshape(1, 5), 2), _VALL),
    "avg_pool1d": _ex(lambda ns, x: ns.avg_pool1d(x.reshape(1, 5), 2), _VT),
    "adaptive_max_pool1d": _ex(lambda ns, x: ns.adaptive_max_pool1d(x.reshape(1, 5), 2), _VALL),
    "adaptive_avg_pool1d": _ex(lambda ns, x: ns.adaptive_avg_pool1d(x.reshape(1, 5), 2), _VT),
    "conv1d": _ex(lambda ns, x: ns.conv1d(x.reshape(1, 1, 5), x[:2].reshape(1, 1, 2))),
    "conv2d": _ex(lambda ns, a: ns.conv2d(a.reshape(1, 1, 3, 3), a[:2, :2].reshape(1, 1, 2, 2)), _MR),
    "conv_transpose1d": _ex(lambda ns, x: ns.conv_transpose1d(x.reshape(1, 1, 5), x[:2].reshape(1, 1, 2))),
    "margin_ranking_loss": _ex(lambda ns, x: ns.margin_ranking_loss(x, x.flip(0), ns.ones(5)), _VALL),
    "cosine_embedding_loss": _ex(lambda ns, a: ns.cosine_embedding_loss(a, a.flip(0), ns.ones(3)), _MALL),
    "triplet_margin_loss": _ex(lambda ns, a: ns.triplet_margin_loss(a, a.flip(0), a.flip(1)), _MALL),
    "bilinear": _ex(lambda ns, a: ns.bilinear(a, a, _B3(a)), _MR),
    "embedding": _ex(lambda ns, a: ns.embedding(a, _IDX(_lib(ns), 0, 2, 2)), _MR),  # torch.embedding(weight, idx)
    "batch_norm": _ex(lambda ns, a: ns.batch_norm(a, None, None, None, None, True, 0.1, 1e-5, False), _MALL),
    "instance_norm": _ex(lambda ns, a: ns.instance_norm(a.reshape(1, 3, 3), None, None, None, None, True, 0.1,
                                                          1e-5, False), _MALL),
    "pixel_shuffle": _ex(lambda ns, x: ns.pixel_shuffle(x[:4].reshape(1, 4, 1, 1), 2)),
    "pixel_unshuffle": _ex(lambda ns, x: ns.pixel_unshuffle(x[:4].reshape(1, 1, 2, 2), 2)),
    "channel_shuffle": _ex(lambda ns, x: ns.channel_shuffle(x[:4].reshape(1, 4, 1), 2)),
})
EXPLICIT["Tensor"].update({
    "polygamma": _ex(lambda ns, x: x.polygamma(1), _POS, True),
    "bmm": _ex(lambda ns, a: _B3(a).bmm(_B3(a)), _MR),
    "baddbmm": _ex(lambda ns, a: _B3(a).baddbmm(_B3(a), _B3(a)), _MR),
    "addbmm": _ex(lambda ns, a: a.addbmm(_B3(a), _B3(a)), _MR),
    "dsplit": _ex(lambda ns, a: _B3(a).dsplit([1]), _MR),
    "unfold": _ex(lambda ns, x: x.unfold(0, 2, 1)),
    "where": _ex(lambda ns, x: x.where(x > 1, -x)),
    "unsafe_chunk": _ex(lambda ns, x: x.unsafe_chunk(2)), "unsafe_split": _ex(lambda ns, x: x.unsafe_split(2)),
    "unsafe_split_with_sizes": _ex(lambda ns, x: x.unsafe_split_with_sizes([2, 3])),
    "resize": _ex(lambda ns, x: x.resize(1, *x.shape)),  # (out of place: the element count must stay)
})

_COPY = "the out-of-place copy of a view op with the same derivative (its view op has the row)"
for _face in ("torch", "Tensor"):
    SKIP[_face].update({n: _COPY for n in (
        "as_strided_copy", "expand_copy", "narrow_copy", "permute_copy", "select_copy", "split_copy",
        "split_with_sizes_copy", "transpose_copy", "unfold_copy", "unsqueeze_copy", "view_as_complex_copy",
        "view_as_real_copy", "view_copy")})
    SKIP[_face].update({
        "as_strided": "raw strides over the storage: the view ops (view, expand, narrow, ...) have rows",
        "as_strided_scatter": "raw strides over the storage: the scatter rows cover writes into views",
        "select_scatter": "writes a slice into a copy: the index_copy / scatter rows cover the same derivative",
        "lstsq": "torch.lstsq was removed from torch (torch.linalg.lstsq has the row)",
        "solve": "torch.solve was removed from torch (torch.linalg.solve has the row)",
        "lu_solve": "takes LU factors and pivots from lu_factor (torch.linalg.lu_factor has rows)",
        "ormqr": "takes Householder reflectors from geqrf (torch.linalg.qr has rows)",
        "stft": "complex output of windowed FFTs (the fft module is checked against torch in its own tests)",
        "istft": "complex input (the fft module is checked against torch in its own tests)",
        "nonzero_static": "integer index output", "bincount": "integer counts of integer input",
        "gcd": "integer-only", "lcm": "integer-only",
    })
    SKIP[_face].update({n: "integer/bitwise only" for n in (
        "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor")})
SKIP["Tensor"].update({
    "as_subclass": "a type conversion", "coalesce": "sparse tensors only", "indices": "sparse tensors only",
    "values": "sparse tensors only", "pin_memory": "memory placement", "new_full": "creation from a Python number",
    "eig": "Tensor.eig was removed from torch (torch.linalg.eig)", "symeig": "removed from torch (torch.linalg.eigh)",
})
NOT_DIFFERENTIABLE["torch"].update({n: "creates an array from shapes, sizes or Python numbers: no differentiable "
                                    "operand" for n in (
    "arange", "bartlett_window", "blackman_window", "eye", "full", "hamming_window", "hann_window",
    "kaiser_window", "linspace", "logspace", "ones", "range", "zeros", "scalar_tensor", "tril_indices",
    "triu_indices", "sparse_coo_tensor", "from_numpy", "from_dlpack", "unravel_index", "fill")})
NOT_DIFFERENTIABLE["torch"]["matrix_rank"] = "integer output (a rank)"
NOT_DIFFERENTIABLE["torch"]["full_like"] = "fills its input's shape with a Python number: no differentiable operand"
NOT_DIFFERENTIABLE["torch"]["local_devices"] = "lists this process's devices: no array operand"
SKIP["torch"].update({n: "a transform or utility of funcgrad's JAX-style top level, or torch's autocast/compile "
                      "bookkeeping: no array function to differentiate" for n in (
    "autocast_decrement_nesting", "autocast_increment_nesting", "checking_leaks", "clear_autocast_cache",
    "clear_caches", "closure_convert", "cond", "default_backend", "effects_barrier", "ensure_compile_time_eval",
    "eval_shape", "jvp", "vjp", "linearize", "linear_transpose", "local_device_count", "pure_callback",
    "shard_map", "broadcast_shapes")})
SKIP["torch"].update({n: "TorchScript's asynchronous call (torch.fork/torch.wait): runs a function, no array "
                      "function of its own" for n in ("fork", "wait")})
SKIP["torch"].update({
    "conv3d": "conv2d/conv1d rows (one conv card for every dimension)",
    "conv_transpose2d": "conv_transpose1d row (one card for every dimension)",
    "conv_transpose3d": "conv_transpose1d row (one card for every dimension)",
    "max_pool2d": "max_pool1d row (one windowed-max card for every dimension)",
    "max_pool3d": "max_pool1d row (one windowed-max card for every dimension)",
    "max_pool1d_with_indices": "max_pool1d row plus integer indices",
    "native_channel_shuffle": "channel_shuffle row (the same computation)",
    "ctc_loss": "integer targets and lengths: tested against torch in the loss tests",
    "svd_lowrank": "randomised (its test matrix is drawn from torch's generator): compared with torch for the same "
                   "seed, up to the singular vectors' signs, in tests/test_torch_windows_lowrank.py",
    "pca_lowrank": "randomised (svd_lowrank of the centred matrix): compared with torch for the same seed in "
                   "tests/test_torch_windows_lowrank.py",
})
SKIP["torch"].update({n: "quantization: integer representations and fake quantization, checked bit for bit (and "
                      "the straight-through gradient) against torch in tests/test_quantization.py" for n in (
    "quantize_per_tensor", "quantize_per_channel", "quantize_per_tensor_dynamic", "fake_quantize_per_tensor_affine",
    "fake_quantize_per_channel_affine")})
SKIP["Tensor"].update({n: "a quantized tensor's accessor (tests/test_quantization.py): no differentiable function" for n in (
    "int_repr", "q_per_channel_axis", "q_per_channel_scales", "q_per_channel_zero_points", "q_scale", "q_zero_point",
    "qscheme")})
SKIP["Tensor"]["to_padded_tensor"] = ("nested tensors only (a dense tensor is refused, as torch): tests/test_nested.py "
                                      "checks values and gradients against torch")

EXPLICIT["F"].update({
    "conv1d": EXPLICIT["torch"]["conv1d"], "conv2d": EXPLICIT["torch"]["conv2d"],
    "conv_transpose1d": EXPLICIT["torch"]["conv_transpose1d"],
    "max_pool1d": EXPLICIT["torch"]["max_pool1d"], "avg_pool1d": EXPLICIT["torch"]["avg_pool1d"],
    "adaptive_max_pool1d": EXPLICIT["torch"]["adaptive_max_pool1d"],
    "adaptive_avg_pool1d": EXPLICIT["torch"]["adaptive_avg_pool1d"],
    "max_pool2d": _ex(lambda ns, a: ns.max_pool2d(a.reshape(1, 3, 3), 2), _MALL),
    "avg_pool2d": _ex(lambda ns, a: ns.avg_pool2d(a.reshape(1, 3, 3), 2), _MR),
    "adaptive_avg_pool2d": _ex(lambda ns, a: ns.adaptive_avg_pool2d(a.reshape(1, 3, 3), 2), _MR),
    "adaptive_max_pool2d": _ex(lambda ns, a: ns.adaptive_max_pool2d(a.reshape(1, 3, 3), 2), _MALL),
    "lp_pool1d": _ex(lambda ns, x: ns.lp_pool1d(x.reshape(1, 5), 2.0, 2), _VALL),
    "layer_norm": EXPLICIT["torch"]["layer_norm"], "rms_norm": EXPLICIT["torch"]["rms_norm"],
    "group_norm": EXPLICIT["torch"]["group_norm"],
    "batch_norm": _ex(lambda ns, a: ns.batch_norm(a, None, None, training=True), _MALL),
    "instance_norm": _ex(lambda ns, a: ns.instance_norm(a.reshape(1, 3, 3)), _MALL),
    "local_response_norm": _ex(lambda ns, a: ns.local_response_norm(a.reshape(1, 3, 3), 2), _MR),
    "glu": _ex(lambda ns, x: ns.glu(x), {"mixed": (np.array([1.0, 0.0, -2.0, 0.5, 3.0, 0.0]),)}),
    "threshold": EXPLICIT["torch"]["threshold"],
    "pad": _ex(lambda ns, x: ns.pad(x, (1, 2), value=0.5)),
    "embedding": _ex(lambda ns, a: ns.embedding(_IDX(_lib(ns), 0, 2, 2), a), _MR), "bilinear": EXPLICIT["torch"]["bilinear"],
    "margin_ranking_loss": EXPLICIT["torch"]["margin_ranking_loss"],
    "cosine_embedding_loss": EXPLICIT["torch"]["cosine_embedding_loss"],
    "triplet_margin_loss": EXPLICIT["torch"]["triplet_margin_loss"],
    "triplet_margin_with_distance_loss": _ex(lambda ns, a: ns.triplet_margin_with_distance_loss(
        a, a.flip(0), a.flip(1)), _MALL),
    "gaussian_nll_loss": _ex(lambda ns, x: ns.gaussian_nll_loss(x, x.flip(0), x * x + 0.5), _VALL),
    "nll_loss": _ex(lambda ns, a: ns.nll_loss(a, _IDX(_lib(ns), 0, 2, 1)), _MR),
    "multi_margin_loss": _ex(lambda ns, a: ns.multi_margin_loss(a, _IDX(_lib(ns), 0, 2, 1)), _MALL),
    "pixel_shuffle": EXPLICIT["torch"]["pixel_shuffle"], "pixel_unshuffle": EXPLICIT["torch"]["pixel_unshuffle"],
    "channel_shuffle": EXPLICIT["torch"]["channel_shuffle"],
    "unfold": _ex(lambda ns, a: ns.unfold(a.reshape(1, 1, 3, 3), 2), _MR),
    "fold": _ex(lambda ns, a: ns.fold(a.reshape(-1)[:8].reshape(1, 4, 2), (2, 3), 2), _MR),
    "interpolate": _ex(lambda ns, x: ns.interpolate(x.reshape(1, 1, 5), scale_factor=2.0, mode="linear"), _VT),
    "scaled_dot_product_attention": _ex(lambda ns, a: ns.scaled_dot_product_attention(
        a.reshape(1, 3, 3), a.reshape(1, 3, 3), a.reshape(1, 3, 3)), _MALL),
})
_DIMS = "the 1-d/2-d row of the same card (one windowed card for every dimension)"
SKIP["F"].update({n: _DIMS for n in (
    "adaptive_avg_pool3d", "adaptive_max_pool3d", "avg_pool3d", "conv3d", "conv_transpose2d", "conv_transpose3d",
    "lp_pool2d", "lp_pool3d", "max_pool3d")})
SKIP["F"].update({n: "the row of the same function without indices, plus integer indices" for n in (
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices")})
SKIP["F"].update({
    "affine_grid": "builds sampling grids from an affine matrix (tested against torch in the vision tests)",
    "grid_sample": "bilinear sampling at grid points: tested against torch in the vision tests",
    "ctc_loss": "integer targets and lengths: tested against torch in the loss tests",
    "embedding_bag": "integer bags and offsets: tested against torch in the nn tests",
    "fractional_max_pool2d": "random sampling of windows: no deterministic value",
    "fractional_max_pool2d_with_indices": "random sampling of windows: no deterministic value",
    "fractional_max_pool3d": "random sampling of windows: no deterministic value",
    "fractional_max_pool3d_with_indices": "random sampling of windows: no deterministic value",
    "max_unpool1d": "scatters by integer indices from max_pool (max_pool1d has the row)",
    "max_unpool2d": "scatters by integer indices from max_pool (max_pool1d has the row)",
    "max_unpool3d": "scatters by integer indices from max_pool (max_pool1d has the row)",
    "multi_head_attention_forward": "a dozen weight arguments: scaled_dot_product_attention has the row",
    "multilabel_margin_loss": "integer label lists: tested against torch in the loss tests",
    "linear_cross_entropy": "linear then cross_entropy (their rows): tested against torch in test_torch_fidelity",
    "native_channel_shuffle": "channel_shuffle row (the same computation)",
    "one_hot": "integer labels in, a 0/1 array out",
    "upsample": "deprecated alias of interpolate (its row)",
    "upsample_bilinear": "deprecated alias of interpolate (its row)",
    "upsample_nearest": "deprecated alias of interpolate (its row)",
})
EXPLICIT["torch.linalg"].update({
    "matrix_power": _ex(lambda ns, a: ns.matrix_power(a, 3), _MALL),
    "multi_dot": _ex(lambda ns, a: ns.multi_dot([a, a, a]), _MR),
    "tensorinv": _ex(lambda ns, a: ns.tensorinv(a, ind=1), _MR),
    "solve_triangular": _ex(lambda ns, a: ns.solve_triangular(a.triu() + 3 * _lib(ns).eye(3, dtype=a.dtype), a,
                                                              upper=True), _MALL),
})
SKIP["torch.linalg"].update({
    "ldl_solve": "takes LDL factors and pivots from ldl_factor: tested against torch in the linalg tests",
    "lu_solve": "takes LU factors and pivots from lu_factor (lu_factor has rows)",
})
EXPLICIT["torch.special"].update({
    "polygamma": _ex(lambda ns, x: ns.polygamma(1, x), _POS, True),
    "multigammaln": _ex(lambda ns, x: ns.multigammaln(x, 2), {"above": (np.array([1.0, 1.5, 2.0, 3.5, 30.0]),)}),
    "logsumexp": _ex(lambda ns, x: ns.logsumexp(x, 0), _VALL),
    "softmax": _ex(lambda ns, x: ns.softmax(x, 0), _VALL),
    "log_softmax": _ex(lambda ns, x: ns.log_softmax(x, 0), _VALL),
})
