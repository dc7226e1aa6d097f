"""The native tier: regions of an optimised jaxpr lowered to machine code through Numba (the `fast` extra).

    nat = native.compile_native(jaxpr)   # a codegen.Compiled, or None when nothing lowers (or no numba)

A program made of many small operations spends its time in Python calling NumPy once per operation.
Here the equations Numba can take become one generated `@njit` function per *region* (a maximal run of
supported equations in program order): elementwise equations are fused into loop nests (one loop per
group of fusion.plan, intermediate values in registers, broadcasting by index arithmetic), matrix
products, reductions, slices, reshapes, transposes and concatenations are explicit loops or Numba's array
operations, and whole `scan` / `while` loops (fori_loop lowers to one of them) become loops of the
generated function with their bodies inlined. The remaining equations keep the NumPy code generation
(codegen.py): each region is one call there. Regions with arrays above `jit_native_max_size` elements
stay on the NumPy path (its SIMD loops and blocked kernels win on large arrays).

Semantics are the NumPy path's: every result is cast to its jaxpr dtype, scalar constants are typed
literals, maximum/minimum propagate NaN as NumPy's loops do, and no fastmath. The transcendental functions
(exp, tanh, log, ...) are the C library's through LLVM, which may differ from NumPy's SIMD loops in the
last bit; add, sub, mul, div, sqrt, comparisons and selections are correctly rounded in both and agree
bitwise. Sums and products accumulate in order (NumPy's pairwise summation and BLAS may differ in the
last bits).

Caching: the generated source is written to `jit_native_cache_dir` (a file named by its hash) and
compiled with Numba's `cache=True`, so another process that generates the same source loads the machine
code instead of compiling it (Numba keys its cache on the file, the argument types and the CPU).
Tiering (when and on which thread this runs) is `NativeTier` below, used by jit.py.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading

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
    # NumPy's loops: in1 >= in2 || isnan(in1) ? in1 : in2 (NaN propagates from either operand)
    "maximum": "({0} if ({0} >= {1} or {0} != {0}) else {1})",
    "minimum": "({0} if ({0} <= {1} or {0} != {0}) else {1})",
    "equal": "({0} == {1})", "not_equal": "({0} != {1})", "less": "({0} < {1})",
    "less_equal": "({0} <= {1})", "greater": "({0} > {1})", "greater_equal": "({0} >= {1})",
    "bitwise_and": "({0} & {1})", "bitwise_or": "({0} | {1})", "bitwise_xor": "({0} ^ {1})",
    "logical_and": "({0} and {1})", "logical_or": "({0} or {1})", "logical_xor": "({0} != {1})",
}
_FLOAT_ONLY = {"true_divide", "divide", "power", "arctan2", "sqrt", "exp", "exp2", "expm1", "log", "log2",
               "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
               "arcsinh", "arccosh", "arctanh", "floor", "ceil", "cbrt", "sign"}
_INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert"}

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
    jit_native_cache_dir (None: no disk cache), jit_native_max_size (largest array of a region)."""

    def __init__(self):
        self.enabled = True
        self.threshold = 100
        self.background = True
        self.cache_dir = os.environ.get("FUNCGRAD_NATIVE_CACHE_DIR") or _default_cache_dir()
        self.max_size = 65536         # largest array (elements) a region may hold
        self.max_dot_flops = 1 << 20  # larger matrix products stay on the NumPy path (BLAS)
        self.min_ops = 2              # a region worth a call: at least this many equations, or a loop


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
    return e.prim.name in ("scan", "while")


# --- the generated function ------------------------------------------------------------------------------

class _Emitter:
    """Writes the body of one Numba function: `lines` at increasing indentation, variable names, and
    the constant arrays it takes as extra arguments."""

    def __init__(self):
        self.lines: list[str] = []
        self.names: dict = {}
        self.const_args: list = []   # (name, buffer)
        self.literals: dict = {}     # Var -> literal expression of a uniform constant
        self.ntemp = 0

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

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    # constants ------------------------------------------------------------------------------------
    def bind_consts(self, j: Jaxpr, depth: int) -> None:
        for v, c in zip(j.constvars, j.consts):
            if v in self.names or v in self.literals:
                continue
            buf = buffer_of(c)
            u = uniform_value(c, limit=0)
            if u is not None and not v.aval.shape:
                self.literals[v] = _literal(u, v.aval.dtype)
            elif u is not None:
                # a uniform array: a scalar read at every index
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


def _loops(em: _Emitter, depth: int, shape) -> tuple[list[str], int]:
    idx = []
    for d in shape:
        i = em.temp("i")
        em.emit(depth, f"for {i} in range({d}):")
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


def _scalar_expr(e: Eqn, ops: list[str]) -> str:
    kind, data = _elementwise_form(e)
    out = e.outvars[0].aval.dtype
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
    shape = g.shape
    if not g.outputs:
        return
    views = {}
    for w, (x, expanded) in g.broadcasts.items():
        if em.is_scalar(x):
            views[w] = None
            continue
        t = em.temp("b")
        em.emit(depth, f"{t} = np.ascontiguousarray({em.name(x)}).reshape({tuple(expanded)!r})")
        views[w] = (t, tuple(expanded))
    local = {}
    for w, vw in list(views.items()):
        if vw is None:  # a broadcast scalar
            local[w] = em.name(g.broadcasts[w][0])
            del views[w]
    outs = set(g.outputs)
    if shape:
        for v in g.outputs:
            em.emit(depth, f"{em.name(v)} = np.empty({shape!r}, {_cast(v.aval.dtype)})")
        idx, d = _loops(em, depth, shape)
    else:
        idx, d = [], depth
    for e in g.eqns:
        ops = [_read(em, v, idx, shape, local, views) for v in e.invars]
        o = e.outvars[0]
        t = em.temp() if shape else em.name(o)
        em.emit(d, f"{t} = {_scalar_expr(e, ops)}")
        local[o] = t
        if shape and o in outs:
            em.emit(d, f"{em.name(o)}[{_idx(idx)}] = {t}")


def _emit_eqn(em: _Emitter, depth: int, e: Eqn) -> None:
    name = e.prim.name
    if name == "scan":
        return _emit_scan(em, depth, e)
    if name == "while":
        return _emit_while(em, depth, e)
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
        em.emit(depth, f"{on} = np.empty({oshape!r}, {_cast(o.aval.dtype)})")
        idx, d = _loops(em, depth, oshape)
        sub = [idx[dims[k]] if xs[k] != 1 or oshape[dims[k]] == 1 else "0" for k in range(len(xs))]
        em.emit(d, f"{on}[{_idx(idx)}] = {em.name(x)}[{_idx(sub)}]")
        return
    if name == "transpose":
        if em.is_scalar(x):  # (a uniform constant)
            em.emit(depth, f"{on} = np.full({oshape!r}, {em.name(x)}, {_cast(o.aval.dtype)})")
            return
        perm = tuple(e.params["permutation"])
        em.emit(depth, f"{on} = np.empty({oshape!r}, {_cast(o.aval.dtype)})")
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
    if kind == "sum":
        init = _literal(-0.0, dt) if dt.kind == "f" else _literal(0, dt)  # -0.0 + y == y, as y alone
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
        em.emit(depth, f"{on} = np.full({oshape!r}, {init}, {cast})")
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
    a, b = e.invars
    o = e.outvars[0]
    lc, rc, lb, rb = _dot_dims(e)
    ash, bsh = tuple(a.aval.shape), tuple(b.aval.shape)
    lf = [d for d in range(len(ash)) if d not in lc and d not in lb]
    rf = [d for d in range(len(bsh)) if d not in rc and d not in rb]
    oshape = tuple(o.aval.shape)
    cast = _cast(o.aval.dtype)
    on = em.name(o)
    if oshape:
        em.emit(depth, f"{on} = np.empty({oshape!r}, {cast})")
    idx, d = _loops(em, depth, oshape)
    nb = len(lb)
    bidx, li, ri = idx[:nb], idx[nb:nb + len(lf)], idx[nb + len(lf):]
    acc = em.temp("a")
    em.emit(d, f"{acc} = {_literal(0, o.aval.dtype)}")
    cidx, d2 = _loops(em, d, [ash[k] for k in lc])
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
    em.emit(d2, f"{acc} = {acc} + {_read_any(em, a, asub)} * {_read_any(em, b, bsub)}")
    if oshape:
        em.emit(d, f"{on}[{_idx(idx)}] = {cast}({acc})")
    else:
        em.emit(d, f"{on} = {cast}({acc})")


def _emit_body(em: _Emitter, depth: int, j: Jaxpr) -> None:
    """The equations of j (its invars already named), elementwise groups fused."""
    em.bind_consts(j, depth)
    for it in _fusion.plan(j, _fusible, lambda e: True, min_ops=1):
        if isinstance(it, _fusion.FusedGroup):
            _emit_group(em, depth, it)
        else:
            _emit_eqn(em, depth, it)


def _fusible(e: Eqn) -> bool:
    return e.prim.name in ELEMENTWISE and _elementwise_form(e) is not None


def _assign(em: _Emitter, depth: int, dst: Var, src: Var) -> None:
    """dst's name takes src's value (a carry moving round a loop)."""
    if em.is_scalar(dst) or not dst.aval.shape:
        em.emit(depth, f"{em.name(dst)} = {em.name(src)}")
    elif em.is_scalar(src):
        em.emit(depth, f"{em.name(dst)} = np.full({tuple(dst.aval.shape)!r}, {em.name(src)}, "
                       f"{_cast(dst.aval.dtype)})")
    else:  # (copied contiguous: a loop-carried variable keeps one Numba type)
        em.emit(depth, f"{em.name(dst)} = np.ascontiguousarray({em.name(src)})")


def _carry_var(em: _Emitter, depth: int, init: Var, aval) -> str:
    n = em.temp("k")
    if not aval.shape:
        em.emit(depth, f"{n} = {em.name(init)}")
    elif em.is_scalar(init):
        em.emit(depth, f"{n} = np.full({tuple(aval.shape)!r}, {em.name(init)}, {_cast(aval.dtype)})")
    else:
        em.emit(depth, f"{n} = np.ascontiguousarray({em.name(init)}).copy()")
    return n


def _emit_scan(em: _Emitter, depth: int, e: Eqn) -> None:
    p = e.params
    j, nc, k, length, reverse = p["jaxpr"], p["n_consts"], p["n_carry"], p["length"], p["reverse"]
    args = e.invars
    consts, init, xs = args[:nc], args[nc:nc + k], args[nc + k:]
    carries = [_carry_var(em, depth, v, v.aval) for v in init]
    ys = e.outvars[k:]
    for y in ys:
        em.emit(depth, f"{em.name(y)} = np.empty({tuple(y.aval.shape)!r}, {_cast(y.aval.dtype)})")
    i = em.temp("s")
    rng = f"range({length} - 1, -1, -1)" if reverse else f"range({length})"
    em.emit(depth, f"for {i} in {rng}:")
    d = depth + 1
    bin_ = j.invars
    for bv, v in zip(bin_[:nc], consts):
        _alias(em, bv, v)
    for bv, c in zip(bin_[nc:nc + k], carries):
        em.names[bv] = c
    for bv, x in zip(bin_[nc + k:], xs):
        if em.is_scalar(x):
            _alias(em, bv, x)
        else:
            em.emit(d, f"{em.name(bv)} = {em.name(x)}[{i}]")
    _emit_body(em, d, j)
    outs = j.outvars
    for y, ov in zip(ys, outs[k:]):
        em.emit(d, f"{em.name(y)}[{i}] = {em.name(ov)}")
    news = [_carried(em, ov) for ov in outs[:k]]
    tmps = [em.temp("n") for _ in news]
    for t, n in zip(tmps, news):  # (all read before any carry is rebound)
        em.emit(d, f"{t} = {n}")
    for c, t in zip(carries, tmps):
        em.emit(d, f"{c} = {t}")
    for c, ov in zip(carries, e.outvars[:k]):
        em.emit(depth, f"{em.name(ov)} = {c}")


def _carried(em: _Emitter, v: Var) -> str:
    if not v.aval.shape:
        return em.name(v)
    if em.is_scalar(v):
        return f"np.full({tuple(v.aval.shape)!r}, {em.name(v)}, {_cast(v.aval.dtype)})"
    return f"np.ascontiguousarray({em.name(v)})"


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
    carries = [_carry_var(em, depth, v, v.aval) for v in init]
    em.emit(depth, "while True:")
    d = depth + 1
    for bv, v in zip(cj.invars[:ncc], cc):
        _alias(em, bv, v)
    for bv, c in zip(cj.invars[ncc:], carries):
        em.names[bv] = c
    _emit_body(em, d, cj)
    em.emit(d, f"if not {em.name(cj.outvars[0])}:")
    em.emit(d + 1, "break")
    for bv, v in zip(bj.invars[:nbc], bc):
        _alias(em, bv, v)
    for bv, c in zip(bj.invars[nbc:], carries):
        em.names[bv] = c
    _emit_body(em, d, bj)
    news = [_carried(em, ov) for ov in bj.outvars]
    tmps = [em.temp("n") for _ in news]
    for t, n in zip(tmps, news):  # (all read before any carry is rebound)
        em.emit(d, f"{t} = {n}")
    for c, t in zip(carries, tmps):
        em.emit(d, f"{c} = {t}")
    for c, ov in zip(carries, e.outvars):
        em.emit(depth, f"{em.name(ov)} = {c}")


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


def find_regions(jaxpr: Jaxpr) -> list:
    """The program as a list of Eqn (NumPy path) and Region items, in program order."""
    items, run = [], []

    def close():
        if not run:
            return
        if len(run) >= config.min_ops or any(_is_loop(e) for e in run):
            items.append(run[:])
        else:
            items.extend(run)
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
    _emit_body(em, 1, j)
    rets = []
    for v in r.outvars:
        if em.is_scalar(v) and v.aval.shape:
            rets.append(f"np.full({tuple(v.aval.shape)!r}, {em.name(v)}, {_cast(v.aval.dtype)})")
        else:
            rets.append(em.name(v))
    cargs = [n for n, _ in em.const_args]
    head = f"def {fname}({', '.join(cargs + params)}):"
    lines = [head] + ["    " + s for s in body_start] + em.lines + \
        [f"    return ({''.join(x + ', ' for x in rets)})"]
    r.const_bufs = tuple(b for _, b in em.const_args)
    r.scalar_out = tuple(np.dtype(v.aval.dtype) if not v.aval.shape else None for v in r.outvars)
    return "\n".join(lines) + "\n"


# --- compiling: source -> cached module -> njit ----------------------------------------------------------

_compile_lock = threading.Lock()


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
                        fh.write("import numpy as np\n\n" + source)
                    os.replace(tmp, path)  # (atomic: another process may write the same file)
                spec = importlib.util.spec_from_file_location(modname, path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            else:
                import types  # noqa: PLC0415
                mod = types.ModuleType(modname)
                mod.__dict__["np"] = np
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


def compile_native(jaxpr: Jaxpr):
    """jaxpr (optimised) as a codegen.Compiled whose regions run natively, or None when no region
    lowers. Compiles (or loads from the disk cache) with Numba: seconds for a large program, so jit
    calls this on its tiering thread. `jaxpr` is compiler.lower's result (what codegen compiles)."""
    if not available():
        return None
    items = find_regions(jaxpr)
    regions = [it for it in items if isinstance(it, Region)]
    if not regions:
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
            eqns.extend(it.eqns)
        else:
            eqns.append(it)
    if not any(isinstance(it, Region) and it.kernel is not None for it in items):
        return None
    new = Jaxpr(jaxpr.constvars, jaxpr.consts, jaxpr.invars, eqns, jaxpr.outvars)
    compiled = _codegen.generate(new, np)
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
    counter. `entry` needs writable `fn` and `native` attributes."""
    fn = compiled.fn
    state = {"n": 0, "started": False}
    lock = threading.Lock()

    def work():
        try:
            nat = compile_native(compiled.jaxpr)
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
    return counting
