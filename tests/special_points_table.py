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
    "jax.nn": ("funcgrad.nn._jax_nn", "jax.nn", "jax"),
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


def _exact_derivs(f, x: float, kinks) -> tuple[float, float, float] | None:
    """(f, f', f'') at x from mpmath, or None where f is not smooth at x (a kink, an edge of the domain,
    or a non-real value nearby)."""
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
            d1 = mp.diff(f, xm, 1, h=h)
            d2 = mp.diff(f, xm, 2, h=h)
        except (ValueError, ZeroDivisionError, TypeError):
            return None
        if not (_real(d1) and _real(d2)):
            return None
        return float(vals[0]), float(d1), float(d2)


_EXACT_CACHE: dict = {}


def exact_for(row: Row):
    """{quantity key: (tuple of arrays, mask)} of exact values for an elementwise unary row where mpmath
    knows the function, at the points where it is smooth; None where there is no exact column."""
    if row.kind not in ("unary_elem",) or not row.elementwise:
        return None
    canon = canonical(row.face, row.name)
    if canon is None:
        return None
    key = (canon, row.point_set)
    if key not in _EXACT_CACHE:
        f, kinks = _exact_unary()[canon]
        x = row.inputs[0]
        got = [_exact_derivs(f, float(p), kinks) for p in x]
        mask = np.array([g is not None for g in got])
        val = np.array([g[0] if g else np.nan for g in got])
        d1 = np.array([g[1] if g else np.nan for g in got])
        d2 = np.array([g[2] if g else np.nan for g in got])
        _EXACT_CACHE[key] = {"value": ((val,), mask), "fwd1[0]": ((d1,), mask), "fwd2[0]": ((d2,), mask),
                             "rev1": ((d1,), mask), "rev2[0]": ((d2,), mask)}
    return _EXACT_CACHE[key]
