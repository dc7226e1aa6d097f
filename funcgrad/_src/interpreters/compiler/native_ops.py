"""What the native tier lowers: the dtypes, the elementwise operations it inlines or calls as NumPy's own
ufunc loops (through their C function pointers), and `supported`, which says whether one equation can
join a region."""
from __future__ import annotations

import ctypes

import numpy as np

from ...core.jaxpr import Eqn, Jaxpr
from . import codegen as _codegen
from ._ir import ELEMENTWISE, buffer_of
from ._config import native_config as config
from .native_roll import _ROLLED


_DTYPES = {np.dtype(t): n for t, n in ((np.float32, "float32"), (np.float64, "float64"), (np.int32, "int32"),
                                       (np.int64, "int64"), (np.bool_, "bool_"))}


# NumPy ufunc name -> scalar expression over operands {0}, {1} (Numba's NumPy/math functions on scalars)
_UNARY = {
    "negative": "(-{0})", "absolute": "abs({0})", "square": "({0} * {0})", "sqrt": "np.sqrt({0})",
    "exp": "np.exp({0})", "exp2": "np.exp2({0})", "expm1": "np.expm1({0})", "log": "np.log({0})",
    "log2": "np.log2({0})", "log10": "np.log10({0})", "log1p": "np.log1p({0})", "sin": "np.sin({0})",
    "cos": "np.cos({0})", "tan": "np.tan({0})", "arcsin": "np.arcsin({0})", "arccos": "np.arccos({0})",
    "arctan": "np.arctan({0})", "sinh": "np.sinh({0})", "cosh": "np.cosh({0})", "tanh": "np.tanh({0})",
    "arcsinh": "np.arcsinh({0})", "arccosh": "np.arccosh({0})", "arctanh": "np.arctanh({0})",
    "floor": "np.floor({0})", "ceil": "np.ceil({0})", "sign": "np.sign({0})", "cbrt": "np.cbrt({0})",
    "logical_not": "(not {0})", "invert": "(~{0})",
}


_BINARY = {
    "add": "({0} + {1})", "subtract": "({0} - {1})", "multiply": "({0} * {1})",
    "true_divide": "({0} / {1})", "divide": "({0} / {1})", "power": "np.power({0}, {1})",
    "arctan2": "np.arctan2({0}, {1})",
    # as NumPy's (SIMD) loops: NaN propagates from either operand, and of two equal values (0.0 and
    # -0.0) the second is the result
    "maximum": "({0} if ({0} > {1} or {0} != {0}) else {1})",
    "minimum": "({0} if ({0} < {1} or {0} != {0}) else {1})",
    "equal": "({0} == {1})", "not_equal": "({0} != {1})", "less": "({0} < {1})",
    "less_equal": "({0} <= {1})", "greater": "({0} > {1})", "greater_equal": "({0} >= {1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "logical_and": "({0} and {1})", "logical_or": "({0} or {1})", "logical_xor": "({0} != {1})",
}


_FLOAT_ONLY = {"true_divide", "divide", "power", "arctan2", "sqrt", "exp", "exp2", "expm1", "log", "log2",
               "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
               "arcsinh", "arccosh", "arctanh", "floor", "ceil", "cbrt", "sign"}


_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert"}


# computed inline (scalar code in the fused loop): correctly rounded or exact operations, where Numba's
# result is NumPy's bit for bit. Every other ufunc calls NumPy's own inner loop (native_rt.call_loop).
_INLINE = {"add", "subtract", "multiply", "true_divide", "divide", "negative", "absolute", "square", "sqrt",
           "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
           "logical_not", "invert", "floor", "ceil"}


_REDUCE = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod"}


_RESHAPES = ("reshape", "squeeze", "expand_dims")


def _ok_aval(a) -> bool:
    return np.dtype(a.dtype) in _DTYPES and a.size <= config.max_size


def _elementwise_form(e: Eqn):
    """(kind, data) for an elementwise equation Numba computes as the NumPy path does, else None:
    ("ufunc", name), ("ipow", y), ("select", None), ("convert", None) or ("extremum_grad", "max"/"min")
    (relu's backward, patterns.py: one loop instead of NumPy's comparison, product and tie test)."""
    name = e.prim.name
    if name == "extremum_grad":
        ok = len(e.outvars) == 1 and all(np.dtype(v.aval.dtype) == np.dtype(e.outvars[0].aval.dtype)
                                         for v in e.invars) and np.dtype(e.outvars[0].aval.dtype).kind == "f"
        return ("extremum_grad", e.params["kind"]) if ok else None
    if name not in ELEMENTWISE or e.prim.multiple_results or len(e.outvars) != 1:
        return None
    out = e.outvars[0].aval
    kinds = {np.dtype(v.aval.dtype).kind for v in e.invars}
    uf = _codegen.ufunc_of(e)
    if uf is not None:
        n = uf.__name__
        if n not in _UNARY and n not in _BINARY:
            return None
        if n in _FLOAT_ONLY and kinds - {"f"}:
            return None
        if n in _INT_ONLY and kinds - {"i", "b"}:
            return None
        if n == "negative" and kinds & {"b"}:
            return None
        return "ufunc", n
    extra = _codegen._extra_operand(e)
    if extra is not None:
        return "ipow", e.params["y"]
    if name == "select" and len(e.invars) == 3 and np.dtype(e.invars[0].aval.dtype).kind == "b":
        return "select", None
    if name == "convert_element_type" and np.dtype(out.dtype).kind in "fb" and \
            np.dtype(e.invars[0].aval.dtype).kind in "fib":
        return "convert", None
    return None


class _UFuncObject(ctypes.Structure):
    """The head of NumPy's PyUFuncObject (numpy/ufuncobject.h), up to the loop table and its types."""
    _fields_ = [("ob_refcnt", ctypes.c_ssize_t), ("ob_type", ctypes.c_void_p), ("nin", ctypes.c_int),
                ("nout", ctypes.c_int), ("nargs", ctypes.c_int), ("identity", ctypes.c_int),
                ("functions", ctypes.POINTER(ctypes.c_void_p)), ("data", ctypes.POINTER(ctypes.c_void_p)),
                ("ntypes", ctypes.c_int), ("reserved1", ctypes.c_int), ("name", ctypes.c_char_p)]


_LOOP_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


_LOOP_CACHE: dict = {}


def _run_loop(fptr, data, arrays, n):
    args = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    steps = (ctypes.c_ssize_t * len(arrays))(*[a.strides[0] if a.shape[0] > 1 else 0 for a in arrays])
    _LOOP_T(fptr)(args, (ctypes.c_ssize_t * 1)(n), steps, ctypes.c_void_p(data or 0))


def ufunc_loop(uf: np.ufunc, sig: str):
    """(address, data) of NumPy's inner loop of `uf` for the signature `sig` ("ff->f"), or None when the
    ufunc object does not look as expected or the loop, called on test values (special values included),
    does not give the ufunc's own results bit for bit."""
    key = (uf.__name__, sig)
    if key in _LOOP_CACHE:
        return _LOOP_CACHE[key]
    res = None
    try:
        head = _UFuncObject.from_address(id(uf))
        if (head.nin, head.nout, head.ntypes, head.name) == (uf.nin, uf.nout, uf.ntypes, uf.__name__.encode()) \
                and sig in uf.types and head.functions:
            i = uf.types.index(sig)
            fptr, data = head.functions[i], head.data[i] if head.data else None
            if fptr and _self_test(uf, sig, fptr, data):
                res = (int(fptr), int(data or 0))
    except Exception:  # noqa: BLE001 - an unexpected layout: this ufunc stays on the NumPy path
        res = None
    _LOOP_CACHE[key] = res
    return res


def _self_test(uf, sig, fptr, data) -> bool:
    ins = [np.dtype(c) for c in sig.split("->")[0]]
    out = np.dtype(sig.split("->")[1])
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 1e-30, -1e-30, 1e30, -1e30, np.inf, -np.inf, np.nan,
               88.7, 89.0, 710.0, -745.0, 20.0, -20.0]
    base = np.concatenate([np.array(special), rng.standard_normal(200) * 3, rng.standard_normal(50) * 100])
    arrs = [np.ascontiguousarray((base if k == 0 else rng.permutation(base)).astype(dt))
            for k, dt in enumerate(ins)]
    with np.errstate(all="ignore"):
        want = uf(*arrs)
        got = np.empty(base.size, out)
        _run_loop(fptr, data, arrs + [got], base.size)
    return want.dtype == out and np.array_equal(want, got, equal_nan=True) and \
        np.array_equal(np.signbit(want), np.signbit(got))


def _call_form(e: Eqn):
    """For an elementwise equation computed by one of NumPy's inner loops: (ufunc, signature, extra
    literal operand or None); None for one computed inline."""
    extra = _codegen._extra_operand(e)
    if extra is not None:
        if extra[1] is None:  # x * x
            return None
        dt = np.dtype(e.invars[0].aval.dtype)
        return np.power, dt.char * 2 + "->" + dt.char, float(extra[1])
    uf = _codegen.ufunc_of(e)
    if uf is None or uf.__name__ in _INLINE:
        return None
    sig = "".join(np.dtype(v.aval.dtype).char for v in e.invars) + "->" + np.dtype(e.outvars[0].aval.dtype).char
    return uf, sig, None


def _broadcast_ok(shape, out_shape) -> bool:
    if len(shape) > len(out_shape):
        return False
    return all(a == b or a == 1 for a, b in zip(shape[::-1], out_shape[::-1]))


def _dot_dims(e: Eqn):
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    return tuple(lc), tuple(rc), tuple(lb), tuple(rb)


def supported(e: Eqn, exact: bool = False) -> bool:
    """Whether the native code generator takes e (all its arrays small, dtypes Numba handles). With `exact`,
    only what gives the NumPy code's results bit for bit: no reduction or contracting product (they
    accumulate in order, where NumPy sums pairwise and BLAS in blocks)."""
    if not all(_ok_aval(v.aval) for v in list(e.invars) + list(e.outvars)):
        return False
    name = e.prim.name
    if name in ELEMENTWISE or name == "extremum_grad":
        f = _elementwise_form(e)
        c = _call_form(e) if f is not None else None
        if c is not None and ufunc_loop(c[0], c[1]) is None:
            return False
        return f is not None and all(_broadcast_ok(tuple(v.aval.shape), tuple(e.outvars[0].aval.shape))
                                     for v in e.invars)
    if name in _RESHAPES or name in ("broadcast_in_dim", "transpose", "slice", "concatenate"):
        return not e.prim.multiple_results and len(e.outvars) == 1 and \
            (name != "slice" or all(s > 0 for s in e.params.get("strides") or (1,)))
    if name in _REDUCE:
        if exact:
            return False
        x = e.invars[0].aval
        return set(e.params) == {"axes"} and np.dtype(x.dtype).kind in "fi" and \
            (name in ("reduce_sum", "reduce_prod") or x.size > 0) and x.dtype == e.outvars[0].aval.dtype
    if name == "dot_general":
        a, b = (v.aval for v in e.invars)
        out = e.outvars[0].aval
        pt = e.params.get("preferred_element_type")
        if a.dtype != b.dtype or a.dtype != out.dtype or (pt is not None and np.dtype(pt) != out.dtype):
            return False
        if np.dtype(out.dtype).kind not in "fi":
            return False
        lc, rc, _, _ = _dot_dims(e)
        if exact and lc:
            return False
        k = 1
        for d in lc:
            k *= a.shape[d]
        return 2 * k * out.size <= config.max_dot_flops
    if name == "scan":
        j = e.params["jaxpr"]
        return all(supported(q, exact) for q in j.eqns) and _consts_ok(j)
    if name == "while":
        cj, bj = e.params["cond_jaxpr"], e.params["body_jaxpr"]
        return all(supported(q, exact) for q in cj.eqns + bj.eqns) and _consts_ok(cj) and _consts_ok(bj)
    return False


def _consts_ok(j: Jaxpr) -> bool:
    return all(isinstance(buffer_of(c), (np.ndarray, np.generic)) for c in j.consts)


def _is_loop(e: Eqn) -> bool:
    return e.prim.name in ("scan", "while") or e.prim is _ROLLED


# --- composites: primitives whose NumPy impl is a few ufunc calls, as the equations of those calls ---------

def expand_composites(jaxpr: Jaxpr) -> Jaxpr:
    """jaxpr with each real float32/float64 `logistic` written as the ufunc calls its NumPy impl makes,
    1 / (exp(-x) + 1) (neg, exp, add, div: bit for bit the impl's result), so that it joins a region
    instead of splitting one (an LSTM step takes three); scan and while bodies too. `jaxpr` itself when
    nothing changes."""
    from ...core.aval import ShapedArray
    from ...core.jaxpr import Var
    from ...prims import elementwise as ew

    changed = False
    constvars, consts, eqns = list(jaxpr.constvars), list(jaxpr.consts), []
    ones: dict = {}

    def one(dtype):
        if dtype not in ones:
            v = Var(ShapedArray((), dtype, False), is_const=True)
            constvars.append(v)
            consts.append(np.ones((), dtype))
            ones[dtype] = v
        return ones[dtype]

    for e in jaxpr.eqns:
        name = e.prim.name
        if name == "logistic" and np.dtype(e.outvars[0].aval.dtype) in (np.dtype(np.float32), np.dtype(np.float64)):
            (x,), (out,) = e.invars, e.outvars
            av = ShapedArray(out.aval.shape, out.aval.dtype, False)
            t1, t2, t3 = Var(av), Var(av), Var(av)
            c = one(np.dtype(out.aval.dtype))
            eqns += [Eqn(ew.neg_p, [x], [t1], {}), Eqn(ew.exp_p, [t1], [t2], {}), Eqn(ew.add_p, [t2, c], [t3], {}),
                     Eqn(ew.div_p, [c, t3], [out], {})]
            changed = True
            continue
        params = e.params
        if name == "scan":
            j = expand_composites(params["jaxpr"])
            params = params if j is params["jaxpr"] else {**params, "jaxpr": j}
        elif name == "while":
            cj, bj = expand_composites(params["cond_jaxpr"]), expand_composites(params["body_jaxpr"])
            if cj is not params["cond_jaxpr"] or bj is not params["body_jaxpr"]:
                params = {**params, "cond_jaxpr": cj, "body_jaxpr": bj}
        if params is not e.params:
            e, changed = Eqn(e.prim, e.invars, e.outvars, params), True
        eqns.append(e)
    if not changed:
        return jaxpr
    return Jaxpr(constvars, consts, jaxpr.invars, eqns, jaxpr.outvars)
