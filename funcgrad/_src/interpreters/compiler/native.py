"""The native tier: regions of an optimised jaxpr lowered to machine code through Numba (the `fast` extra).

    nat = native.compile_native(jaxpr)   # a codegen.Compiled, or None when nothing lowers (or no numba)

A program made of many small operations spends its time in Python calling NumPy once per operation.
Here the equations Numba can take become one generated `@njit` function per *region* (a maximal run of
supported equations in program order): elementwise equations are fused into loop nests (one loop per
group of fusion.plan, intermediate values in registers, broadcasting by index arithmetic; outer
products join them), matrix products, reductions, slices, reshapes, transposes and concatenations are
explicit loops or Numba's array operations, and whole `scan` / `while` loops (fori_loop lowers to one
of them) become loops of the generated function with their bodies inlined. The remaining equations keep
the NumPy code generation (codegen.py): each region is one call there. Regions with arrays above
`jit_native_max_size` elements stay on the NumPy path (its SIMD loops and blocked kernels win on large
arrays).

Loops run without allocating: a body's arrays are allocated once before the loop, the carries of a loop
outside any other are double-buffered (_Emitter), and a loop-invariant operand of a matrix product that
would be read along a strided dimension is transposed once, before the loop (_emit_dot).

Repeated steps: a Python loop under jit is unrolled (a 50-step RNN gradient is ~900 equations), and
Numba's compile time grows faster than the function. Before regions are cut, each run of supported
equations is searched for a repetition (the same equations, period after period, each reading the
previous period's results, the same values from before, a slice moving by a fixed step, or an earlier
repetition's per-period results, as a backward pass reads the forward's): each becomes one loop over
its first period (_roll, _emit_rolled), so the program compiles as what it was written as. What does
not repeat is cut into regions of `max_region_eqns`, and a program with more than `jit_native_max_eqns`
equations left stays on the NumPy code.

Semantics are the NumPy path's: every result is cast to its jaxpr dtype, scalar constants are typed
literals, maximum/minimum propagate NaN as NumPy's loops do, and no fastmath. exp, tanh, log, pow, ...
call NumPy's own ufunc inner loops (native_rt.call_loop) so they give NumPy's results bit for bit; add,
sub, mul, div, sqrt, comparisons and selections are correctly rounded in both and agree bitwise. Sums
and products accumulate in order (NumPy's pairwise summation and BLAS may differ in the last bits).

Caching: the generated source is written to `jit_native_cache_dir` (a file named by its hash) and
compiled with Numba's `cache=True`, so another process that generates the same source loads the machine
code instead of compiling it (Numba keys its cache on the file, the argument types and the CPU).
Tiering (when and on which thread this runs) is `NativeTier` below, used by jit.py.
"""
from __future__ import annotations

import bisect
import ctypes
import hashlib
import importlib.util
import logging
import os
import sys
import threading
import types

import numpy as np

from ...core.jaxpr import Eqn, Jaxpr, Var
from ...core.primitive import Primitive
from . import codegen as _codegen
from . import fusion as _fusion
from ._ir import ELEMENTWISE, buffer_of, uniform_value

log = logging.getLogger("funcgrad.jit")

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


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "funcgrad", "native")


class NativeConfig:
    """The native tier's settings, also reachable through funcgrad.config.update: jit_native (on when
    numba is installed), jit_native_threshold (calls of a compiled signature on the NumPy code before its
    native code is built; 0: at its first call), jit_native_background (build on a daemon thread, the
    NumPy code answering meanwhile; False: inside the call that reaches the threshold),
    jit_native_cache_dir (None: no disk cache), jit_native_max_size (largest array of a region),
    jit_native_max_eqns (a larger program stays on the NumPy code: Numba would compile it for minutes)."""

    def __init__(self):
        self.enabled = True
        self.threshold = 100
        self.background = True
        self.cache_dir = os.environ.get("FUNCGRAD_NATIVE_CACHE_DIR") or _default_cache_dir()
        self.max_size = 65536         # largest array (elements) a region may hold
        self.max_dot_flops = 1 << 20  # larger matrix products stay on the NumPy path (BLAS)
        self.min_ops = 2              # a region worth a call: at least this many equations, or a loop
        # Numba's compile time grows faster than linearly with a function's size (an unrolled 900-equation
        # program took minutes as one function): longer runs are cut into regions of this many equations
        self.max_region_eqns = 48
        # ... and the regions of one program together: an unrolled 900-equation RNN gradient still took 150 s
        # in 48-equation pieces, so a program with more lowerable equations than this is not compiled at all
        # (counted once repeated steps are rolled into loops: that gradient is then ~35)
        self.max_program_eqns = 400


config = NativeConfig()


_available = None


def available() -> bool:
    """Whether numba is installed (checked without importing it: importing takes ~0.5 s)."""
    global _available
    if _available is None:
        _available = importlib.util.find_spec("numba") is not None
    return _available


# --- what lowers ---------------------------------------------------------------------------------------

def _ok_aval(a) -> bool:
    return np.dtype(a.dtype) in _DTYPES and a.size <= config.max_size


def _elementwise_form(e: Eqn):
    """(kind, data) for an elementwise equation Numba computes as the NumPy path does, else None:
    ("ufunc", name), ("ipow", y), ("select", None) or ("convert", None)."""
    name = e.prim.name
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


def supported(e: Eqn) -> bool:
    """Whether the native code generator takes e (all its arrays small, dtypes Numba handles)."""
    if not all(_ok_aval(v.aval) for v in list(e.invars) + list(e.outvars)):
        return False
    name = e.prim.name
    if name in ELEMENTWISE:
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
        k = 1
        for d in lc:
            k *= a.shape[d]
        return 2 * k * out.size <= config.max_dot_flops
    if name == "scan":
        j = e.params["jaxpr"]
        return all(supported(q) for q in j.eqns) and _consts_ok(j)
    if name == "while":
        cj, bj = e.params["cond_jaxpr"], e.params["body_jaxpr"]
        return all(supported(q) for q in cj.eqns + bj.eqns) and _consts_ok(cj) and _consts_ok(bj)
    return False


def _consts_ok(j: Jaxpr) -> bool:
    return all(isinstance(buffer_of(c), (np.ndarray, np.generic)) for c in j.consts)


def _is_loop(e: Eqn) -> bool:
    return e.prim.name in ("scan", "while") or e.prim is _ROLLED


# --- the generated function ------------------------------------------------------------------------------

class _Level:
    """A loop being emitted: the block (before its `for` line) that lines hoisted out of it go to, that
    block's indentation, and the names bound before the loop (its invariants)."""
    __slots__ = ("block", "depth", "before")

    def __init__(self, block, depth, before):
        self.block, self.depth, self.before = block, depth, before


class _Emitter:
    """Writes the body of one Numba function: `lines` at increasing indentation (a nested list is the
    block of lines hoisted before a loop), variable names, and the constant arrays it takes as extra
    arguments.

    Inside loops, arrays of static shape are allocated once, before the outermost loop (`alloc`), and
    rewritten at each iteration; the exceptions are the values that become a loop's carry (`no_hoist`):
    a carry takes such an array by reference (it was allocated in this iteration, `fresh`) and any
    other value by copy, so that no carry ever holds a buffer that the next iteration rewrites. A loop
    outside any other has two buffers per carry instead (`spare`): the body writes the new value into
    the one the carry does not hold, and the two swap."""

    def __init__(self):
        self.lines: list = []
        self.names: dict = {}
        self.const_args: list = []   # (name, buffer)
        self.literals: dict = {}     # Var -> literal expression of a uniform constant
        self.ntemp = 0
        self.loops: list = []        # (address, data) of the NumPy inner loops the function calls
        self.uses_calls = False
        self.levels: list = []       # the loops being emitted, outermost first
        self.no_hoist: set = set()   # Vars that become a carry of a loop being emitted
        self.fresh: set = set()      # names of arrays allocated where they are computed (not hoisted)
        self.slice_shift: dict = {}  # id(slice eqn) -> (loop index name, start step per axis): rolled loops
        self.needed: set = set()     # Vars read outside the rolled loop that makes them (set per region)
        self.stacks: dict = {}       # (id(_Rolled), m) -> the array of equation m's results, one row per period
        self.spare: dict = {}        # Var -> the spare buffer it is written to (a double-buffered carry)
        self.used_spare: set = set()

    def loop_index(self, uf, sig) -> int:
        lp = ufunc_loop(uf, sig)
        if lp not in self.loops:
            self.loops.append(lp)
        return self.loops.index(lp)

    def name(self, v: Var) -> str:
        lit = self.literals.get(v)
        if lit is not None:
            return lit
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = f"v{len(self.names)}"
        return n

    def temp(self, hint="t") -> str:
        self.ntemp += 1
        return f"{hint}{self.ntemp}"

    def emit(self, depth: int, line: str, block: list | None = None) -> None:
        (self.lines if block is None else block).append("    " * depth + line)

    # loops and hoisting ---------------------------------------------------------------------------
    def open_loop(self, depth: int, header: str) -> None:
        """Emit a loop's `for`/`while` line (its body follows at depth + 1)."""
        block = []
        self.lines.append(block)
        before = set(self.names.values()) | {n for n, _ in self.const_args}
        self.levels.append(_Level(block, depth, before))
        self.emit(depth, header)

    def close_loop(self) -> None:
        self.levels.pop()

    def invariant_level(self, names):
        """The outermost loop being emitted inside which none of `names` changes (an index into
        levels), or None when the innermost loop changes one of them (or no loop is being emitted)."""
        consts = {n for n, _ in self.const_args}
        k = len(self.levels)
        while k > 0 and all(n in self.levels[k - 1].before or n in consts for n in names):
            k -= 1
        return k if k < len(self.levels) else None

    def alloc(self, depth: int, name: str, shape, dtype, var=None, fill=None) -> None:
        """`name` = a new array of `shape` (then set to `fill`, a scalar expression, if given); hoisted
        out of the loops being emitted unless `var` becomes a carry."""
        shape = tuple(shape)
        cast = _cast(dtype)
        if var is not None and var in self.spare:
            self.emit(depth, f"{name} = {self.spare[var]}")
            self.used_spare.add(var)
            if fill is not None:
                self.emit(depth, f"{name}[:] = {fill}")
            return
        if self.levels and shape and (var is None or var not in self.no_hoist):
            lv = self.levels[0]
            self.emit(lv.depth, f"{name} = np.empty({shape!r}, {cast})", lv.block)
            if fill is not None:
                self.emit(depth, f"{name}[:] = {fill}")
            return
        self.emit(depth, f"{name} = np.empty({shape!r}, {cast})")
        if fill is not None:  # (not np.full, nor below a row assigned an array: Numba compiles both slowly)
            self.emit(depth, f"{name}[:] = {fill}")
        self.fresh.add(name)

    def source_lines(self) -> list[str]:
        out = []

        def walk(ls):
            for x in ls:
                if isinstance(x, list):
                    walk(x)
                else:
                    out.append(x)
        walk(self.lines)
        return out

    # constants ------------------------------------------------------------------------------------
    def bind_consts(self, j: Jaxpr, depth: int) -> None:
        for v, c in zip(j.constvars, j.consts):
            if v in self.names or v in self.literals:
                continue
            buf = buffer_of(c)
            u = uniform_value(c, limit=0)
            if u is not None:
                # a uniform value (array: a scalar read at every index)
                self.literals[v] = _literal(u, v.aval.dtype)
            else:
                n = self.name(v)
                self.const_args.append((n, np.asarray(buf)))

    def is_scalar(self, v: Var) -> bool:
        """Held as a Numba scalar: a rank-0 value or a uniform constant."""
        return not v.aval.shape or v in self.literals


def _literal(u, dtype) -> str:
    dt = np.dtype(dtype)
    cast = f"np.{_DTYPES[dt]}"
    if dt.kind == "b":
        return "True" if bool(u) else "False"
    if dt.kind == "f":
        x = float(u)
        if x != x:
            s = "np.nan"
        elif x in (float("inf"), float("-inf")):
            s = "np.inf" if x > 0 else "-np.inf"
        else:
            s = repr(x)
        return f"{cast}({s})"
    return f"{cast}({int(u)})"


def _cast(dtype) -> str:
    return f"np.{_DTYPES[np.dtype(dtype)]}"


def _idx(names) -> str:
    return ", ".join(names) if names else "()"


def _loops(em: _Emitter, depth: int, shape, block=None) -> tuple[list[str], int]:
    idx = []
    for d in shape:
        i = em.temp("i")
        em.emit(depth, f"for {i} in range({d}):", block)
        idx.append(i)
        depth += 1
    return idx, depth


def _read(em: _Emitter, v: Var, idx, shape, local: dict, views: dict) -> str:
    """The element of v at the loop index `idx` over `shape` (right-aligned broadcasting)."""
    if v in local:
        return local[v]
    if v in views:
        arr, expanded = views[v]
        sub = [i if expanded[k] != 1 or shape[k] == 1 else "0" for k, i in enumerate(idx)]
        return f"{arr}[{_idx(sub)}]"
    if em.is_scalar(v):
        return em.name(v)
    vs = tuple(v.aval.shape)
    off = len(shape) - len(vs)
    sub = [idx[off + k] if vs[k] != 1 or shape[off + k] == 1 else "0" for k in range(len(vs))]
    return f"{em.name(v)}[{_idx(sub)}]"


def _read_at(em: _Emitter, v: Var, sub, views: dict) -> str:
    """The element of v at the index names `sub` (one per dimension of v)."""
    if v in views:
        arr, expanded = views[v]
        return f"{arr}[{_idx([i if expanded[k] != 1 else '0' for k, i in enumerate(sub)])}]"
    if em.is_scalar(v):
        return em.name(v)
    return f"{em.name(v)}[{_idx(sub)}]"


def _is_outer(e: Eqn) -> bool:
    """A dot_general without contracted or batch dimensions: out[i..., j...] = a[i...] * b[j...], one
    rounded product per element (as in any BLAS), so an elementwise member of a fused group."""
    return e.prim.name == "dot_general" and not any(_dot_dims(e)) and supported(e)


def _scalar_expr(e: Eqn, ops: list[str]) -> str:
    out = e.outvars[0].aval.dtype
    if e.prim.name == "dot_general":  # an outer product (_is_outer)
        return f"{_cast(out)}(({ops[0]} * {ops[1]}))"
    kind, data = _elementwise_form(e)
    if kind == "ufunc":
        tmpl = _UNARY.get(data) or _BINARY[data]
        expr = tmpl.format(*ops)
    elif kind == "ipow":
        expr = f"({ops[0]} * {ops[0]})" if data == 2 else f"np.power({ops[0]}, {_cast(out)}({float(data)!r}))"
    elif kind == "select":
        expr = f"({ops[1]} if {ops[0]} else {ops[2]})"
    else:  # convert
        if np.dtype(out).kind == "b":
            expr = f"({ops[0]} != 0)"
        else:
            expr = ops[0]
    return f"{_cast(out)}({expr})"


def _emit_group(em: _Emitter, depth: int, g: _fusion.FusedGroup) -> None:
    """A fused elementwise group: runs of inline members as one loop nest over the group's shape (values
    in registers), each member computed by a NumPy inner loop as one call over the whole shape. A value
    is stored to an array when read after its loop (by a call, a later loop or after the group)."""
    shape = g.shape
    if not g.outputs:
        return
    views, local0 = {}, {}
    for w, (x, expanded) in g.broadcasts.items():
        if em.is_scalar(x):
            local0[w] = em.name(x)
            continue
        t = em.temp("b")
        em.emit(depth, f"{t} = np.ascontiguousarray({em.name(x)}).reshape({tuple(expanded)!r})")
        views[w] = (t, tuple(expanded))
    calls = {id(e): None if e.prim.name == "dot_general" else _call_form(e) for e in g.eqns}
    seg, segs = 0, {}
    for e in g.eqns:
        if calls[id(e)] is not None:
            seg += 1
            segs[id(e)] = ("call", seg)
            seg += 1
        else:
            segs[id(e)] = seg
    made = {e.outvars[0]: e for e in g.eqns}
    last = {}
    for n, e in enumerate(g.eqns):
        for v in e.invars:
            last[v] = n
    outs = set(g.outputs)
    stored = set(outs)
    for e in g.eqns:
        for v in e.invars:
            p = made.get(v)
            if p is not None and (calls[id(e)] is not None or segs[id(p)] != segs[id(e)]):
                stored.add(v)
    for e in g.eqns:
        if calls[id(e)] is not None:
            stored.add(e.outvars[0])
    arr = {}          # stored group value -> its array's name
    free = []         # arrays of dead stored values (not outputs): (name, dtype)
    n = 1
    for d in shape:
        n *= d

    def alloc(v):
        """The array name for stored value v (allocated here, or a dead value's array of its dtype);
        scalars: v's own name."""
        if not shape:
            return em.name(v)
        dt = np.dtype(v.aval.dtype)
        if v not in outs:
            for k, (nm, fdt) in enumerate(free):
                if fdt == dt:
                    del free[k]
                    return nm
        nm = em.name(v) if v in outs else em.temp("m")
        em.alloc(depth, nm, shape, dt, v)
        return nm

    def release(k):
        for v in dict.fromkeys(g.eqns[k].invars):
            if v in arr and last.get(v) == k and v not in outs:
                free.append((arr[v], np.dtype(v.aval.dtype)))

    k = 0
    eqns = g.eqns
    while k < len(eqns):
        e = eqns[k]
        if calls[id(e)] is not None:
            _emit_call(em, depth, e, calls[id(e)], shape, n, arr, views, local0, alloc)
            release(k)
            k += 1
            continue
        # one loop over the run of inline members starting here
        run = []
        while k < len(eqns) and calls[id(eqns[k])] is None:
            run.append(k)
            k += 1
        dests = {}
        for j in run:
            o = eqns[j].outvars[0]
            if o in stored:
                dests[o] = alloc(o)
        if shape:
            idx, d = _loops(em, depth, shape)
        else:
            idx, d = [], depth
        local = dict(local0)
        for j in run:
            e = eqns[j]
            if e.prim.name == "dot_general" and shape:  # an outer product: a at the leading indices
                na = e.invars[0].aval.ndim
                ops = [_read_at(em, v, sub, views) for v, sub in zip(e.invars, (idx[:na], idx[na:]))]
            else:
                ops = [local[v] if v in local else (f"{arr[v]}[{_idx(idx)}]" if v in arr and shape else
                       arr[v] if v in arr else _read(em, v, idx, shape, local, views)) for v in e.invars]
            o = e.outvars[0]
            t = em.temp()
            em.emit(d, f"{t} = {_scalar_expr(e, ops)}")
            local[o] = t
            if o in dests:
                em.emit(d, f"{dests[o]}[{_idx(idx)}] = {t}" if shape else f"{dests[o]} = {t}")
        for j in run:
            o = eqns[j].outvars[0]
            if o in dests:
                arr[o] = dests[o]
            release(j)
    for v in g.outputs:
        if arr.get(v) != em.name(v):
            em.emit(depth, f"{em.name(v)} = {arr[v]}")


def _emit_call(em: _Emitter, depth: int, e: Eqn, form, shape, n: int, arr: dict, views: dict, local0: dict,
               alloc) -> None:
    """e as one call of NumPy's inner loop over the group's n elements (contiguous operands, or stride
    0 for a scalar), writing a stored array of the group's shape."""
    uf, sig, extra = form
    k = em.loop_index(uf, sig)
    ptrs, steps = [], []
    ins = list(e.invars)
    dts = [np.dtype(c) for c in sig.split("->")[0]]
    operands = [(v, dts[j]) for j, v in enumerate(ins)]
    if extra is not None:
        operands.append((None, dts[1]))
    for v, dt in operands:
        if v is None or em.is_scalar(v) or v in local0 or (v in arr and not shape):
            val = _literal(extra, dt) if v is None else local0.get(v) or (arr[v] if v in arr else em.name(v))
            t = em.temp("x")
            em.alloc(depth, t, (1,), dt)
            em.emit(depth, f"{t}[0] = {val}")
            ptrs.append(t)
            steps.append("0")
        elif v in arr:
            ptrs.append(arr[v])
            steps.append(str(dt.itemsize))
        else:
            src = views[v][0] if v in views else em.name(v)
            t = em.temp("x")
            if v in views or tuple(v.aval.shape) != tuple(shape):
                em.emit(depth, f"{t} = np.ascontiguousarray(np.broadcast_to({src}, {shape!r}))")
            else:
                em.emit(depth, f"{t} = np.ascontiguousarray({src})")
            ptrs.append(t)
            steps.append(str(dt.itemsize))
    o = e.outvars[0]
    odt = np.dtype(o.aval.dtype)
    if shape:
        on = alloc(o)
    else:
        on = em.temp("r")
        em.alloc(depth, on, (1,), odt)
    ptrs.append(on)
    steps.append(str(odt.itemsize))
    em.uses_calls = True
    for j, (pn, st) in enumerate(zip(ptrs, steps)):
        em.emit(depth, f"_P[{j}] = {pn}.ctypes.data")
        em.emit(depth, f"_S[{j}] = {st}")
    em.emit(depth, f"_D[0] = {n}")
    em.emit(depth, f"call_loop(_L[{k}], _LD[{k}], _P.ctypes.data, _D.ctypes.data, _S.ctypes.data)")
    em.emit(depth, f"_D[1] = {' + '.join(f'{pn}.size' for pn in ptrs)}")  # (keeps the operands alive)
    if shape:
        arr[o] = on
    else:  # a scalar group: the value itself, read as such by later members
        em.emit(depth, f"{em.name(o)} = {on}[0]")
        arr[o] = em.name(o)


def _emit_eqn(em: _Emitter, depth: int, e: Eqn) -> None:
    name = e.prim.name
    if name == "scan":
        return _emit_scan(em, depth, e)
    if name == "while":
        return _emit_while(em, depth, e)
    if e.prim is _ROLLED:
        return _emit_rolled(em, depth, e)
    o = e.outvars[0]
    on = em.name(o)
    oshape = tuple(o.aval.shape)
    x = e.invars[0] if e.invars else None
    if name in _RESHAPES:
        if em.is_scalar(x) and not oshape:
            em.emit(depth, f"{on} = {em.name(x)}")
        elif em.is_scalar(x):
            em.emit(depth, f"{on} = np.full({oshape!r}, {em.name(x)}, {_cast(o.aval.dtype)})")
        elif not oshape:
            em.emit(depth, f"{on} = {em.name(x)}[{_idx(['0'] * x.aval.ndim)}]")
        else:
            em.emit(depth, f"{on} = np.ascontiguousarray({em.name(x)}).reshape({oshape!r})")
        return
    if name == "broadcast_in_dim":
        if em.is_scalar(x):
            em.emit(depth, f"{on} = np.full({oshape!r}, {em.name(x)}, {_cast(o.aval.dtype)})")
            return
        dims = tuple(e.params["broadcast_dimensions"])
        xs = tuple(x.aval.shape)
        em.alloc(depth, on, oshape, o.aval.dtype, o)
        idx, d = _loops(em, depth, oshape)
        sub = [idx[dims[k]] if xs[k] != 1 or oshape[dims[k]] == 1 else "0" for k in range(len(xs))]
        em.emit(d, f"{on}[{_idx(idx)}] = {em.name(x)}[{_idx(sub)}]")
        return
    if name == "transpose":
        if em.is_scalar(x):  # (a uniform constant)
            em.emit(depth, f"{on} = np.full({oshape!r}, {em.name(x)}, {_cast(o.aval.dtype)})")
            return
        perm = tuple(e.params["permutation"])
        em.alloc(depth, on, oshape, o.aval.dtype, o)
        idx, d = _loops(em, depth, oshape)
        sub = [None] * len(perm)
        for k, p in enumerate(perm):
            sub[p] = idx[k]
        em.emit(d, f"{on}[{_idx(idx)}] = {em.name(x)}[{_idx(sub)}]")
        return
    if name == "slice":
        p = e.params
        strides = p.get("strides") or (1,) * len(p["start_indices"])
        if em.is_scalar(x):
            em.emit(depth, f"{on} = np.full({oshape!r}, {em.name(x)}, {_cast(o.aval.dtype)})")
            return
        parts = [f"{s}:{l}" + (f":{k}" if k != 1 else "")
                 for s, l, k in zip(p["start_indices"], p["limit_indices"], strides)]
        shift = em.slice_shift.get(id(e))
        if shift is not None:  # a rolled loop's slice: its start moves by `step` per iteration
            t, steps = shift
            parts = [f"{s} + {d} * {t}:{l} + {d} * {t}" + (f":{k}" if k != 1 else "") if d else part
                     for s, l, k, d, part in zip(p["start_indices"], p["limit_indices"], strides, steps, parts)]
        em.emit(depth, f"{on} = {em.name(x)}[{', '.join(parts)}]")
        return
    if name == "concatenate":
        ax = e.params["dimension"]
        ins = []
        for v in e.invars:
            if em.is_scalar(v):
                t = em.temp("c")
                em.emit(depth, f"{t} = np.full({tuple(v.aval.shape)!r}, {em.name(v)}, {_cast(v.aval.dtype)})")
                ins.append(t)
            else:
                ins.append(em.name(v))
        em.emit(depth, f"{on} = np.concatenate(({', '.join(ins)},), axis={ax})")
        return
    if name in _REDUCE:
        return _emit_reduce(em, depth, e)
    if name == "dot_general":
        return _emit_dot(em, depth, e)
    raise NotImplementedError(f"native: no lowering for {name}")


def _read_any(em: _Emitter, v: Var, sub) -> str:
    return em.name(v) if em.is_scalar(v) else f"{em.name(v)}[{_idx(sub)}]"


def _emit_reduce(em: _Emitter, depth: int, e: Eqn) -> None:
    x, o = e.invars[0], e.outvars[0]
    kind = _REDUCE[e.prim.name]
    axes = set(e.params["axes"])
    xs = tuple(x.aval.shape)
    dt = np.dtype(o.aval.dtype)
    if kind == "sum":  # -0.0 + y == y, as y alone; an empty sum is +0.0, as NumPy's
        empty = any(xs[a] == 0 for a in axes)
        init = _literal(-0.0, dt) if dt.kind == "f" and not empty else _literal(0, dt)
    elif kind == "prod":
        init = _literal(1, dt)
    elif dt.kind == "f":
        init = _literal(-np.inf if kind == "max" else np.inf, dt)
    else:
        info = np.iinfo(dt)
        init = _literal(info.min if kind == "max" else info.max, dt)
    on = em.name(o)
    oshape = tuple(o.aval.shape)
    cast = _cast(dt)
    scalar_out = not oshape
    if scalar_out:
        acc = em.temp("a")
        em.emit(depth, f"{acc} = {init}")
    else:
        em.alloc(depth, on, oshape, dt, o, fill=init)
    idx, d = _loops(em, depth, xs)
    val = _read_any(em, x, idx)
    kept = [i for k, i in enumerate(idx) if k not in axes]
    tgt = acc if scalar_out else f"{on}[{_idx(kept)}]"
    if kind == "sum":
        em.emit(d, f"{tgt} = {cast}({tgt} + {val})")
    elif kind == "prod":
        em.emit(d, f"{tgt} = {cast}({tgt} * {val})")
    else:
        t = em.temp()
        cmp = ">" if kind == "max" else "<"
        em.emit(d, f"{t} = {val}")
        em.emit(d, f"if {t} {cmp} {tgt} or {t} != {t}:")
        em.emit(d + 1, f"{tgt} = {t}")
    if scalar_out:
        em.emit(depth, f"{on} = {acc}")


def _emit_dot(em: _Emitter, depth: int, e: Eqn) -> None:
    """A dot_general as loops: batch, then contracted, then free dimensions, the last free dimension
    innermost (contiguous in the result: the products of one contracted index are independent, and
    vectorise); each element accumulates its products in the order of its contracted indices, as
    one accumulator would. An operand read along a strided innermost dimension is first copied
    transposed, out of the loops when it is a loop invariant (a weight in a scan body)."""
    a, b = e.invars
    o = e.outvars[0]
    lc, rc, lb, rb = _dot_dims(e)
    ash, bsh = tuple(a.aval.shape), tuple(b.aval.shape)
    lf = [d for d in range(len(ash)) if d not in lc and d not in lb]
    rf = [d for d in range(len(bsh)) if d not in rc and d not in rb]
    oshape = tuple(o.aval.shape)
    cast = _cast(o.aval.dtype)
    on = em.name(o)
    if not oshape:  # a dot of vectors: one accumulator
        acc = em.temp("a")
        em.emit(depth, f"{acc} = {_literal(0, o.aval.dtype)}")
        cidx, d2 = _loops(em, depth, [ash[k] for k in lc])
        asub, bsub = [None] * len(ash), [None] * len(bsh)
        for k, (da, db) in enumerate(zip(lc, rc)):
            asub[da] = cidx[k]
            bsub[db] = cidx[k]
        em.emit(d2, f"{acc} = {acc} + {_read_any(em, a, asub)} * {_read_any(em, b, bsub)}")
        em.emit(depth, f"{on} = {cast}({acc})")
        return
    # the innermost loop runs over the last free dimension, of b if it has one, else of a
    inner_b = bool(rf)
    x, xdims = (b, rf) if inner_b else (a, lf)
    xname = em.name(x) if not em.is_scalar(x) else None
    if xname is not None and xdims[-1] != x.aval.ndim - 1 and x.aval.size > 1:
        # read x transposed: its innermost loop dimension last, contiguous
        perm = [d for d in range(x.aval.ndim) if d != xdims[-1]] + [xdims[-1]]
        lvl = em.invariant_level([xname])
        block, dd = (None, depth) if lvl is None else (em.levels[lvl].block, em.levels[lvl].depth)
        t = em.temp("tr")
        tshape = tuple(x.aval.shape[d] for d in perm)
        em.emit(dd, f"{t} = np.empty({tshape!r}, {_cast(x.aval.dtype)})", block)
        tidx, d3 = _loops(em, dd, tshape, block)
        src = [None] * len(perm)
        for k, p in enumerate(perm):
            src[p] = tidx[k]
        em.emit(d3, f"{t}[{_idx(tidx)}] = {xname}[{_idx(src)}]", block)

        def xread(sub, t=t, perm=perm):
            return f"{t}[{_idx([sub[p] for p in perm])}]"
    else:
        def xread(sub):
            return _read_any(em, x, sub)
    em.alloc(depth, on, oshape, o.aval.dtype, o, fill=_literal(0, o.aval.dtype))
    nb = len(lb)
    bidx, d = _loops(em, depth, oshape[:nb])
    cidx, d = _loops(em, d, [ash[k] for k in lc])
    fidx, d = _loops(em, d, oshape[nb:])
    li, ri = fidx[:len(lf)], fidx[len(lf):]
    asub, bsub = [None] * len(ash), [None] * len(bsh)
    for k, dd in enumerate(lb):
        asub[dd] = bidx[k]
    for k, dd in enumerate(rb):
        bsub[dd] = bidx[k]
    for k, dd in enumerate(lf):
        asub[dd] = li[k]
    for k, dd in enumerate(rf):
        bsub[dd] = ri[k]
    for k, (da, db) in enumerate(zip(lc, rc)):
        asub[da] = cidx[k]
        bsub[db] = cidx[k]
    ra = xread(asub) if x is a and not inner_b else _read_any(em, a, asub)
    rb_ = xread(bsub) if inner_b else _read_any(em, b, bsub)
    oi = f"{on}[{_idx(bidx + fidx)}]"
    em.emit(d, f"{oi} = {cast}({oi} + {ra} * {rb_})")


def _emit_body(em: _Emitter, depth: int, j: Jaxpr) -> None:
    """The equations of j (its invars already named), elementwise groups fused."""
    em.bind_consts(j, depth)
    for it in _fusion.plan(j, _fusible, lambda e: True, min_ops=1):
        if isinstance(it, _fusion.FusedGroup):
            _emit_group(em, depth, it)
        else:
            _emit_eqn(em, depth, it)


def _fusible(e: Eqn) -> bool:
    return (e.prim.name in ELEMENTWISE and _elementwise_form(e) is not None) or _is_outer(e)


def _store_row(em: _Emitter, depth: int, dst: str, i: str, v: Var) -> None:
    """dst[i] = v, element by element (Numba compiles an array assigned to a row for seconds)."""
    if not v.aval.shape:
        em.emit(depth, f"{dst}[{i}] = {em.name(v)}")
        return
    idx, d = _loops(em, depth, v.aval.shape)
    em.emit(d, f"{dst}[{_idx([i] + idx)}] = {_read_any(em, v, idx)}")


def _carry_init(em: _Emitter, depth: int, init: Var) -> str:
    """A new name holding a loop carry's initial value (an array: a fresh copy)."""
    n = em.temp("k")
    aval = init.aval
    if not aval.shape:
        em.emit(depth, f"{n} = {em.name(init)}")
    elif em.is_scalar(init):
        em.emit(depth, f"{n} = np.full({tuple(aval.shape)!r}, {em.name(init)}, {_cast(aval.dtype)})")
    else:
        em.emit(depth, f"{n} = np.ascontiguousarray({em.name(init)}).copy()")
    return n


def _spares(em: _Emitter, depth: int, news: list[Var]) -> dict:
    """For a loop outside any other: a spare buffer for each array carry whose new value the body will
    compute (see _Emitter); {} inside another loop."""
    if em.levels:
        return {}
    sp = {}
    for v in news:
        if v.aval.shape and news.count(v) == 1 and v not in em.names and v not in em.literals:
            sp[v] = em.temp("b")
            em.emit(depth, f"{sp[v]} = np.empty({tuple(v.aval.shape)!r}, {_cast(v.aval.dtype)})")
    em.spare.update(sp)
    return sp


def _carry_update(em: _Emitter, depth: int, carries: list[str], news: list[Var], spares=None) -> None:
    """Each carry takes its new value: by reference an array allocated in this iteration (`fresh`) or
    written to its spare buffer (then the spare takes the old value's buffer), by copy anything else (a
    hoisted buffer, a view, another carry); all read before any is rebound."""
    for v in spares or ():
        del em.spare[v]
    swap = {c: spares[v] for c, v in zip(carries, news) if spares and v in spares and v in em.used_spare}
    tmps = []
    for c, v in zip(carries, news):
        n = em.name(v)
        if not v.aval.shape:
            expr = n
        elif em.is_scalar(v):
            expr = f"np.full({tuple(v.aval.shape)!r}, {n}, {_cast(v.aval.dtype)})"
        elif n in em.fresh or c in swap:
            expr = n
        else:
            expr = f"np.ascontiguousarray({n}).copy()"
        if expr == c:
            tmps.append(None)
            continue
        t = em.temp("n")
        em.emit(depth, f"{t} = {expr}")
        tmps.append(t)
    for c, t in zip(carries, tmps):
        if t is not None:
            if c in swap:
                em.emit(depth, f"{swap[c]} = {c}")
            em.emit(depth, f"{c} = {t}")


def _body(em: _Emitter, depth: int, j: Jaxpr, carried: list[Var]) -> None:
    """A loop body, the values that become carries allocated in each iteration (see _Emitter)."""
    added = [v for v in carried if v not in em.no_hoist]
    em.no_hoist.update(added)
    try:
        _emit_body(em, depth, j)
    finally:
        em.no_hoist.difference_update(added)


def _emit_scan(em: _Emitter, depth: int, e: Eqn) -> None:
    p = e.params
    j, nc, k, length, reverse = p["jaxpr"], p["n_consts"], p["n_carry"], p["length"], p["reverse"]
    args = e.invars
    consts, init, xs = args[:nc], args[nc:nc + k], args[nc + k:]
    carries = [_carry_init(em, depth, v) for v in init]
    ys = e.outvars[k:]
    for y in ys:
        em.alloc(depth, em.name(y), y.aval.shape, y.aval.dtype, y)
    i = em.temp("s")
    rng = f"range({length} - 1, -1, -1)" if reverse else f"range({length})"
    bin_ = j.invars
    for bv, v in zip(bin_[:nc], consts):
        _alias(em, bv, v)
    spares = _spares(em, depth, j.outvars[:k])
    em.open_loop(depth, f"for {i} in {rng}:")
    d = depth + 1
    for bv, c in zip(bin_[nc:nc + k], carries):
        em.names[bv] = c
    for bv, x in zip(bin_[nc + k:], xs):
        if em.is_scalar(x):
            _alias(em, bv, x)
        else:
            em.emit(d, f"{em.name(bv)} = {em.name(x)}[{i}]")
    outs = j.outvars
    _body(em, d, j, outs[:k])
    for y, ov in zip(ys, outs[k:]):
        _store_row(em, d, em.name(y), i, ov)
    _carry_update(em, d, carries, outs[:k], spares)
    em.close_loop()
    for c, ov in zip(carries, e.outvars[:k]):
        em.names[ov] = c
        em.fresh.add(c)


def _alias(em: _Emitter, inner: Var, outer: Var) -> None:
    if outer in em.literals:
        em.literals[inner] = em.literals[outer]
    else:
        em.names[inner] = em.name(outer)


def _emit_while(em: _Emitter, depth: int, e: Eqn) -> None:
    p = e.params
    cj, bj, ncc, nbc = p["cond_jaxpr"], p["body_jaxpr"], p["n_cond_consts"], p["n_body_consts"]
    args = e.invars
    cc, bc, init = args[:ncc], args[ncc:ncc + nbc], args[ncc + nbc:]
    carries = [_carry_init(em, depth, v) for v in init]
    for bv, v in zip(cj.invars[:ncc], cc):
        _alias(em, bv, v)
    for bv, v in zip(bj.invars[:nbc], bc):
        _alias(em, bv, v)
    spares = _spares(em, depth, bj.outvars)
    em.open_loop(depth, "while True:")
    d = depth + 1
    for bv, c in zip(cj.invars[ncc:], carries):
        em.names[bv] = c
    _body(em, d, cj, [])
    em.emit(d, f"if not {em.name(cj.outvars[0])}:")
    em.emit(d + 1, "break")
    for bv, c in zip(bj.invars[nbc:], carries):
        em.names[bv] = c
    _body(em, d, bj, bj.outvars)
    _carry_update(em, d, carries, bj.outvars, spares)
    em.close_loop()
    for c, ov in zip(carries, e.outvars):
        em.names[ov] = c
        em.fresh.add(c)


# --- rolling: repeated straight-line code as a loop -------------------------------------------------------

_ROLL_MIN_TRIPS = 3      # a repetition worth a loop: at least this many periods
_ROLL_MAX_PERIOD = 512   # longest period looked for (equations)
_ROLL_TRIES = 4          # candidate periods verified at one position


class _Rolled:
    """K periods of P equations that compute the same thing from period to period (a Python loop that
    jit unrolled): emitted as one loop over the first period's equations (_emit_rolled).

    kinds[(i, j)] says where operand j of equation i of a period comes from: ("inv",) the same
    variable every period, from before the loop; ("local",) this period; ("carry", m) the previous
    period's result of equation m (the first period reads inits[m]); ("stack", loop, m, a, b) the
    result of equation m of an earlier rolled loop in period a + b * k (forward values read by a
    backward pass). steps[i]: how far a slice's start moves per period. where[var]: (m, k) for each
    result of each period."""

    def __init__(self, eqns, length, period, kinds, inits, steps):
        self.eqns, self.length, self.period = eqns, length, period
        self.kinds, self.inits, self.steps = kinds, inits, steps
        self.where = {v: divmod(g, period)[::-1] for g, e in enumerate(eqns) for v in e.outvars}
        self.eqn = None  # the native_rolled_loop equation standing for it

    def outside_reads(self) -> list:
        """The variables the loop reads from outside itself, in a fixed order."""
        P, seen = self.period, {}
        for (i, j), kind in sorted(self.kinds.items(), key=lambda kv: kv[0]):
            if kind[0] == "inv":
                seen[self.eqns[i].invars[j]] = None
            elif kind[0] == "carry":
                seen[self.inits[kind[1]]] = None
            elif kind[0] == "stack":
                for k in range(self.length):
                    seen[self.eqns[k * P + i].invars[j]] = None
        return list(seen)


def _rolled_impl(xp):
    def impl(*args, **params):
        raise NotImplementedError("native: a rolled loop runs only as native code")
    return impl


_ROLLED = Primitive("native_rolled_loop", impl=_rolled_impl, abstract_eval=lambda *a, **k: [],
                    multiple_results=True, register=False)


def _sig(e: Eqn):
    """What must be equal for two equations to be the same step of a repetition: primitive, params (a
    slice's start aside: it may move), operand and result types; None for an equation never rolled."""
    if len(e.outvars) != 1 or any(isinstance(p, Jaxpr) or hasattr(p, "jaxpr") for p in e.params.values()):
        return None
    params = e.params
    if e.prim.name == "slice":
        params = {"size": tuple(l - s for s, l in zip(params["start_indices"], params["limit_indices"])),
                  "strides": params.get("strides")}
    return (e.prim.name, id(e.prim), repr(sorted(params.items())),
            tuple((tuple(v.aval.shape), str(v.aval.dtype)) for v in e.invars + e.outvars))


def _verify(eqns, s: int, P: int, sig, pos, owner):
    """How many periods of P equations from s repeat (see _Rolled), with the kinds, inits and steps
    found; 1 when not even two do."""
    kinds, inits, steps = {}, {}, {}

    def loc(v):
        g = pos.get(v)
        return None if g is None or g < s else divmod(g - s, P)

    def classify(u1, u0, k):
        l1 = loc(u1)
        if l1 is None:
            if u1 is u0:
                return ("inv",)
            o1, o0 = owner.get(u1), owner.get(u0)
            if o1 is not None and o0 is not None and o1[0] is o0[0] and o1[1] == o0[1] and o1[2] != o0[2]:
                b = o1[2] - o0[2]
                return ("stack", o1[0], o1[1], o0[2] - b * (k - 1), b)
            return None
        p1, m = l1
        l0 = loc(u0)
        if p1 == k:
            return ("local",) if l0 == (k - 1, m) else None
        if p1 == k - 1 and ((k == 1 and l0 is None) or (k > 1 and l0 == (k - 2, m))):
            return ("carry", m)
        return None

    K = 1
    for k in range(1, (len(eqns) - s) // P):
        b1, b0 = s + k * P, s + (k - 1) * P
        if sig[b1:b1 + P] != sig[b0:b0 + P]:
            break
        ok = True
        for i in range(P):
            e1, e0 = eqns[b1 + i], eqns[b0 + i]
            if e1.prim.name == "slice":
                d = tuple(x - y for x, y in zip(e1.params["start_indices"], e0.params["start_indices"]))
                if k == 1:
                    if any(d):
                        steps[i] = d
                elif steps.get(i, (0,) * len(d)) != d:
                    ok = False
                    break
            for j, (u1, u0) in enumerate(zip(e1.invars, e0.invars)):
                kind = classify(u1, u0, k)
                if k == 1:
                    if kind is None or (kind[0] == "carry" and inits.setdefault(kind[1], u0) is not u0):
                        ok = False
                        break
                    kinds[(i, j)] = kind
                elif kind != kinds[(i, j)]:
                    ok = False
                    break
            if not ok:
                break
        if ok and k == 1 and any(kinds[(i, 0)][0] != "inv" for i in steps):
            ok = False  # (a moving slice of a value computed in the loop)
        if not ok:
            break
        K = k + 1
    return K, kinds, inits, steps


def _roll(eqns: list) -> list:
    """eqns (a run of supported equations) with each repetition of at least _ROLL_MIN_TRIPS periods
    replaced by one `native_rolled_loop` equation (params["rolled"]: its _Rolled). Greedy in program
    order: at each position the candidate periods whose signatures repeat are verified (dataflow:
    _verify) and the one covering most equations is taken."""
    n = len(eqns)
    ids: dict = {}
    sig = []
    for g, e in enumerate(eqns):
        k = _sig(e)
        sig.append(-1 - g if k is None else ids.setdefault(k, len(ids)))
    pos = {v: g for g, e in enumerate(eqns) for v in e.outvars}
    at: dict = {}  # signature -> positions
    for g, k in enumerate(sig):
        at.setdefault(k, []).append(g)
    owner: dict = {}  # var of a rolled loop -> (that _Rolled, m, period)
    items, s = [], 0
    while s < n:
        best = None
        if sig[s] >= 0:
            tries = 0
            later = at[sig[s]]
            limit = min(_ROLL_MAX_PERIOD, (n - s) // _ROLL_MIN_TRIPS)
            for q in later[bisect.bisect_right(later, s):]:
                P = q - s
                if P > limit:
                    break
                if sig[s:s + P] != sig[s + P:s + 2 * P]:
                    continue
                K, kinds, inits, steps = _verify(eqns, s, P, sig, pos, owner)
                if K >= _ROLL_MIN_TRIPS and (best is None or K * P > best[0] * best[1]):
                    best = (K, P, kinds, inits, steps)
                tries += 1
                if tries >= _ROLL_TRIES:
                    break
        if best is None:
            items.append(eqns[s])
            s += 1
            continue
        K, P, kinds, inits, steps = best
        r = _Rolled(eqns[s:s + K * P], K, P, kinds, inits, steps)
        for v, (m, k) in r.where.items():
            owner[v] = (r, m, k)
        r.eqn = Eqn(_ROLLED, r.outside_reads(), list(r.where), {"rolled": r})
        items.append(r.eqn)
        s += K * P
    return items


def _expand(eqns) -> list:
    """eqns with each rolled loop back as the equations it stands for."""
    out = []
    for e in eqns:
        if e.prim is _ROLLED:
            out.extend(e.params["rolled"].eqns)
        else:
            out.append(e)
    return out


def _emit_rolled(em: _Emitter, depth: int, e: Eqn) -> None:
    """A rolled loop: the first period's equations as the body of `for t in range(K)`, carries from
    period to period, stacked arrays (one row per period) for the results read after the loop."""
    r = e.params["rolled"]
    K, P = r.length, r.period
    tmpl = r.eqns[:P]
    carried = sorted({kind[1] for kind in r.kinds.values() if kind[0] == "carry"})
    # results read after the loop: stacked, except a carry's last (the carry itself holds it)
    stacked = sorted({m for v, (m, k) in r.where.items() if v in em.needed and (k < K - 1 or m not in carried)})
    ys = {}
    for m in stacked:
        ov = tmpl[m].outvars[0]
        ys[m] = em.temp("y")
        em.alloc(depth, ys[m], (K,) + tuple(ov.aval.shape), ov.aval.dtype)
    cvars = {m: Var(tmpl[m].outvars[0].aval) for m in carried}
    cnames = {m: _carry_init(em, depth, r.inits[m]) for m in carried}
    news = [tmpl[m].outvars[0] for m in carried]
    spares = _spares(em, depth, news)
    t = em.temp("r")
    em.open_loop(depth, f"for {t} in range({K}):")
    d = depth + 1
    for m, c in cnames.items():
        em.names[cvars[m]] = c
    svars: dict = {}
    body = []
    for i, e0 in enumerate(tmpl):
        ins = []
        for j, u in enumerate(e0.invars):
            kind = r.kinds[(i, j)]
            if kind[0] == "carry":
                ins.append(cvars[kind[1]])
            elif kind[0] == "stack":
                _, src, m2, a, b = kind
                key = (id(src), m2, a, b)
                if key not in svars:
                    svars[key] = Var(u.aval)
                    em.emit(d, f"{em.name(svars[key])} = {em.stacks[(id(src), m2)]}[{a} + {b} * {t}]")
                ins.append(svars[key])
            else:
                ins.append(u)
        c = Eqn(e0.prim, ins, e0.outvars, e0.params)
        if i in r.steps:
            em.slice_shift[id(c)] = (t, r.steps[i])
        body.append(c)
    j = Jaxpr([], [], list(cvars.values()) + list(svars.values()), body,
              news + [tmpl[m].outvars[0] for m in stacked])
    _body(em, d, j, news)
    for m in stacked:
        _store_row(em, d, ys[m], t, tmpl[m].outvars[0])
    _carry_update(em, d, [cnames[m] for m in carried], news, spares)
    em.close_loop()
    for v, (m, k) in r.where.items():
        if m in ys:
            em.names[v] = f"{ys[m]}[{k}]"
        elif k == K - 1 and m in cnames:
            em.names[v] = cnames[m]
            em.fresh.add(cnames[m])
    for m in stacked:
        em.stacks[(id(r), m)] = ys[m]


# --- regions -----------------------------------------------------------------------------------------

class Region:
    """A run of supported equations: its inputs (read from outside), outputs (read after it) and the
    generated source; `kernel` is the compiled Numba function once built."""

    def __init__(self, eqns, invars, outvars):
        self.eqns, self.invars, self.outvars = eqns, invars, outvars
        self.source = None
        self.const_bufs = ()
        self.kernel = None
        self.scalar_out = ()


def _cut(items: list) -> list:
    """A run (rolled) as pieces of about config.max_region_eqns equations (a rolled loop counts its
    period), never separating a rolled loop from a later one that reads its stacked results."""
    where = {id(e): x for x, e in enumerate(items)}
    blocked = [0] * (len(items) + 1)  # cuts before index x forbidden where blocked[x] > 0
    for y, e in enumerate(items):
        if e.prim is _ROLLED:
            deps = [where[id(ki[1].eqn)] for ki in e.params["rolled"].kinds.values()
                    if ki[0] == "stack" and id(ki[1].eqn) in where]
            if deps:
                blocked[min(deps) + 1] += 1
                blocked[y + 1] -= 1
    pieces, cur, size, run = [], [], 0, 0
    for x, e in enumerate(items):
        run += blocked[x]
        if cur and size >= config.max_region_eqns and run == 0:
            pieces.append(cur)
            cur, size = [], 0
        cur.append(e)
        size += _n_eqns([e])
    if cur:
        pieces.append(cur)
    return pieces


def find_regions(jaxpr: Jaxpr) -> list:
    """The program as a list of Eqn (NumPy path) and Region items, in program order."""
    items, run = [], []

    def close():
        if not run:
            return
        for piece in _cut(_roll(run)):
            if len(piece) >= config.min_ops or any(_is_loop(e) for e in piece):
                items.append(piece)
            else:
                items.extend(piece)
        run.clear()

    for e in jaxpr.eqns:
        if supported(e):
            run.append(e)
        else:
            close()
            items.append(e)
    close()
    # inputs / outputs of each region
    readers_after = {}
    for k, it in enumerate(items):
        for e in (it if isinstance(it, list) else [it]):
            for v in e.invars:
                readers_after.setdefault(v, set()).add(k)
    outset = set(jaxpr.outvars)
    result = []
    for k, it in enumerate(items):
        if not isinstance(it, list):
            result.append(it)
            continue
        made = {v for e in it for v in e.outvars}
        ins = []
        for e in it:
            for v in e.invars:
                if v not in made and v not in ins:
                    ins.append(v)
        outs = [v for e in it for v in e.outvars
                if v in outset or any(r != k for r in readers_after.get(v, ()))]
        result.append(Region(it, ins, outs))
    return result


def region_source(r: Region, const_val: dict, fname: str) -> str:
    """The Numba function of a region: fn(*const_args, *inputs) -> tuple of outputs."""
    em = _Emitter()
    j = Jaxpr([], [], list(r.invars), list(r.eqns), list(r.outvars))
    params = []
    body_start = []
    for v in r.invars:
        if v in const_val:
            u = uniform_value(const_val[v], limit=0)
            if u is not None:
                em.literals[v] = _literal(u, v.aval.dtype)
                continue
            n = em.name(v)
            em.const_args.append((n, np.asarray(buffer_of(const_val[v]))))
            continue
        n = em.name(v)
        if v.aval.shape:
            params.append(n)
        else:
            p = f"{n}_in"
            params.append(p)
            body_start.append(f"{n} = {p}[()]")
    em.needed = {v for e in r.eqns for v in e.invars} | set(r.outvars)
    _emit_body(em, 1, j)
    rets = []
    for v in r.outvars:
        if em.is_scalar(v) and v.aval.shape:
            rets.append(f"np.full({tuple(v.aval.shape)!r}, {em.name(v)}, {_cast(v.aval.dtype)})")
        else:
            rets.append(em.name(v))
    cargs = ["_L", "_LD"] + [n for n, _ in em.const_args]
    head = f"def {fname}({', '.join(cargs + params)}):"
    if em.uses_calls:
        body_start += ["_P = np.empty(4, np.intp)", "_S = np.empty(4, np.intp)", "_D = np.empty(2, np.intp)"]
    lines = [head] + ["    " + s for s in body_start] + em.source_lines() + \
        [f"    return ({''.join(x + ', ' for x in rets)})"]
    loops = em.loops or [(0, 0)]
    r.const_bufs = (np.array([a for a, _ in loops], np.int64), np.array([d for _, d in loops], np.int64)) + \
        tuple(b for _, b in em.const_args)
    r.scalar_out = tuple(np.dtype(v.aval.dtype) if not v.aval.shape else None for v in r.outvars)
    return "\n".join(lines) + "\n"


# --- compiling: source -> cached module -> njit ----------------------------------------------------------

_compile_lock = threading.Lock()


_PRELUDE = "import numpy as np\nfrom funcgrad._src.interpreters.compiler.native_rt import call_loop\n\n"


def _load(source: str, fname: str):
    """The njit-compiled function of `source` (a module in the cache dir, so Numba can cache it)."""
    import numba  # noqa: PLC0415 - optional dependency, imported only when the native tier runs
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    modname = f"funcgrad_native_{digest}"
    d = config.cache_dir
    with _compile_lock:
        mod = sys.modules.get(modname)
        if mod is None:
            if d:
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, modname + ".py")
                if not os.path.exists(path):
                    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
                    with open(tmp, "w") as fh:
                        fh.write(_PRELUDE + source)
                    os.replace(tmp, path)  # (atomic: another process may write the same file)
                spec = importlib.util.spec_from_file_location(modname, path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            else:
                mod = types.ModuleType(modname)
                exec(compile(_PRELUDE, "<native prelude>", "exec"), mod.__dict__)
                exec(compile(source, f"<native {digest}>", "exec"), mod.__dict__)
            sys.modules[modname] = mod
        fn = getattr(mod, fname)
        return numba.njit(cache=bool(d), nogil=True, error_model="numpy")(fn)


def _region_prim(r: Region) -> Primitive:
    def impl(xp):
        return _region_runner(r)
    p = Primitive("native_region", impl=impl, abstract_eval=lambda *a, **k: [v.aval for v in r.outvars],
                  multiple_results=True, register=False)
    return p


def _region_runner(r: Region):
    kern, consts, scal = r.kernel, r.const_bufs, r.scalar_out
    if not any(s is not None for s in scal):
        if consts:
            return lambda *bufs: kern(*consts, *bufs)
        return kern

    def run(*bufs):
        outs = kern(*consts, *bufs)
        return [o if s is None else np.asarray(o, s) for o, s in zip(outs, scal)]
    return run


def _n_eqns(eqns) -> int:
    """Equations to compile, loop bodies included."""
    n = 0
    for e in eqns:
        n += 1
        if e.prim is _ROLLED:
            n += e.params["rolled"].period
            continue
        for p in e.params.values():
            if isinstance(p, Jaxpr):
                n += _n_eqns(p.eqns)
            elif hasattr(p, "jaxpr") and isinstance(getattr(p, "jaxpr"), Jaxpr):
                n += _n_eqns(p.jaxpr.eqns)
    return n


def compile_native(jaxpr: Jaxpr, parallel_ops: bool | None = None):
    """jaxpr (optimised) as a codegen.Compiled whose regions run natively, or None when no region
    lowers. Compiles (or loads from the disk cache) with Numba: seconds for a large program, so jit
    calls this on its tiering thread. `jaxpr` is compiler.lower's result (what codegen compiles);
    `parallel_ops` is codegen's jit_parallel_ops for the code around the regions (None: the setting now)."""
    if not available():
        return None
    items = find_regions(jaxpr)
    regions = [it for it in items if isinstance(it, Region)]
    if not regions:
        return None
    size = sum(_n_eqns(r.eqns) for r in regions)
    if size > config.max_program_eqns:
        log.info("native: %d lowerable equations exceed jit_native_max_eqns (%d): the program stays on the NumPy "
                 "code", size, config.max_program_eqns)
        return None
    const_val = dict(zip(jaxpr.constvars, jaxpr.consts))
    sources = []
    for k, r in enumerate(regions):
        r.source = region_source(r, const_val, f"region{k}")
        try:
            r.kernel = _load(r.source, f"region{k}")
            args = [np.zeros(v.aval.shape, v.aval.dtype) for v in r.invars if v not in const_val]
            with np.errstate(all="ignore"):
                r.kernel(*r.const_bufs, *args)  # compile now (on this thread), for these argument types
        except Exception as err:  # noqa: BLE001 - Numba could not take it: the NumPy path runs it
            log.info("native: region %d falls back to NumPy (%s: %s)", k, type(err).__name__,
                     str(err).splitlines()[0][:200] if str(err) else "")
            r.kernel = None
        sources.append(r.source)
    eqns = []
    for it in items:
        if isinstance(it, Region) and it.kernel is not None:
            eqns.append(Eqn(_region_prim(it), [v for v in it.invars if v not in const_val],
                            list(it.outvars), {}))
        elif isinstance(it, Region):
            eqns.extend(_expand(it.eqns))
        else:
            eqns.append(it)
    if not any(isinstance(it, Region) and it.kernel is not None for it in items):
        return None
    new = Jaxpr(jaxpr.constvars, jaxpr.consts, jaxpr.invars, eqns, jaxpr.outvars)
    compiled = _codegen.generate(new, np, parallel_ops=parallel_ops)
    compiled.source = compiled.source + "\n\n# native regions (Numba)\n" + "\n".join(sources)
    compiled.native_regions = [r for r in regions if r.kernel is not None]
    return compiled


# --- tiering ------------------------------------------------------------------------------------------

def wanted(xp) -> bool:
    """Whether jit should tier up code for array module xp (the NumPy backend, numba installed, on)."""
    return xp is np and config.enabled and available()


def tier(entry, compiled):
    """The function jit's cache entry runs first: `compiled.fn` (the NumPy code), counting calls; at
    `config.threshold` calls the native code is built (on a daemon thread when `config.background`)
    and stored as `entry.fn` (and `entry.native`), or, when nothing lowers, the NumPy code replaces the
    counter. `entry` needs writable `fn` and `native` attributes. The native code keeps the NumPy code's
    jit_parallel_ops (read now, when that code was generated: the setting may have changed since)."""
    fn = compiled.fn
    state = {"n": 0, "started": False}
    lock = threading.Lock()
    parallel_ops = _codegen.config.parallel_ops

    def work():
        try:
            nat = compile_native(compiled.jaxpr, parallel_ops)
        except Exception as err:  # noqa: BLE001 - the NumPy code stays
            log.warning("native: compiling failed, the NumPy code stays (%s: %s)", type(err).__name__, err)
            nat = None
        entry.native = nat
        entry.fn = fn if nat is None else nat.fn

    def start():
        with lock:
            if state["started"]:
                return
            state["started"] = True
        if config.background:
            threading.Thread(target=work, name="funcgrad-native", daemon=True).start()
        else:
            work()

    if config.threshold <= 0 and not config.background:
        work()  # (now: the caller stores what entry.fn became)
        return entry.fn
    threshold = max(config.threshold, 1)  # (a thread starts at the first call, once entry.fn is stored)

    def counting(*bufs):
        state["n"] += 1
        if state["n"] >= threshold and not state["started"]:
            start()
        return fn(*bufs)
    counting.native_pending = True  # (while entry.fn is this counter, the native code is still to come)
    return counting
