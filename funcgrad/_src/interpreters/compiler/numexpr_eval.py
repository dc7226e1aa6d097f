"""The optional numexpr evaluator for fused elementwise groups (NumPy backend).

numexpr (`pip install funcgrad[fast]`) compiles an expression to a small virtual machine that walks its
operands in cache-sized blocks on its own thread pool, with no Python per block. A group becomes one
numexpr program per output: each output's expression is written over the group's inputs and the
outputs already computed (so nothing is evaluated twice), compiled once at code-generation time, and
run into a preallocated output.

Which groups. Only what numexpr computes with NumPy's dtypes: float32 / float64 arithmetic,
comparisons, where, abs, sqrt and the transcendental functions, maximum/minimum (NaN-propagating, as
NumPy's) where they keep the dtype (numexpr 2.14 computes float32 ones in float64: each function is
probed once per dtype and left to NumPy when it changes it), bool logic. Every operand of a jaxpr equation already has the result's dtype (lax
semantics: converts are explicit), and every constant is passed as a typed 0-d array, never as a
literal (numexpr reads `x * 0.5` as float64), so float32 stays float32. Converts, integer ops and
anything else leave the group to the blocked NumPy kernel (blocked.py), the fallback.

When. Only when asked (`config.fusion_evaluator = "numexpr"`, funcgrad.config.update(
"jit_fusion_evaluator", "numexpr")); the blocked NumPy kernels are the default. Measured on the
2-CPU x86-64 this project benchmarks on (numexpr 2.14.2 without Intel's VML, one thread each, 1M
float32 elements), numexpr was slower for every group tried: p - 0.01 * g 3.4 vs 0.22 ms, a 6-op
arithmetic chain 7.0 vs 3.4 ms, where + add 14.2 vs 12.3 ms, and W1's 100-op exp/tanh chain 664 vs
39 ms (its float32 exp and tanh are scalar libm calls, 2.0 and 14 ns per element against NumPy's
SIMD 0.33 and 0.16). It may pay off with VML or on other CPUs: measure before switching.

Threads: numexpr uses up to the number of cores; NUMEXPR_NUM_THREADS=1 (or numexpr.set_num_threads)
limits it, e.g. on a machine shared with other work.
"""
from __future__ import annotations

import re

import numpy as np

from ...core.jaxpr import Eqn

try:  # optional
    import numexpr as _ne
    from numexpr.necompiler import NumExpr as _NumExpr
except ImportError:  # pragma: no cover - exercised when numexpr is absent
    _ne = _NumExpr = None

_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**",
           "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_LOGIC = {"and": "&", "or": "|"}
_CALLS = {"max": "maximum", "min": "minimum", "atan2": "arctan2", "abs": "abs", "sqrt": "sqrt",
          "exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sin": "sin", "cos": "cos",
          "tan": "tan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asin": "arcsin", "acos": "arccos",
          "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh"}
_CHEAP = frozenset(("add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not",
                    "neg", "select", "max", "min", "abs", "square", "integer_pow"))
_SIG = {np.dtype(np.float32): float, np.dtype(np.float64): np.float64, np.dtype(np.bool_): bool}
_MAX_ARGS = 30          # numexpr's operand limit is a little above this
_MAX_TEXT = 4000        # expression text: beyond this (a DAG written out as a tree) keep NumPy


def available() -> bool:
    return _ne is not None


def has_vml() -> bool:
    return bool(_ne is not None and getattr(_ne, "use_vml", False))


def _expr(e: Eqn, ops: list) -> str | None:
    """The numexpr text of one equation over its operands' texts, or None."""
    name = e.prim.name
    dt = e.outvars[0].aval.dtype
    ins = [v.aval.dtype for v in e.invars]
    if e.params and not (name == "integer_pow" and e.params.get("y") == 2):
        return None
    if any(d not in _SIG for d in ins) or dt not in _SIG:
        return None
    floats = dt.kind == "f" and all(d == dt for d in ins)
    if name in _BINARY and len(ops) == 2:
        cmp = name in ("eq", "ne", "lt", "le", "gt", "ge")
        if (cmp and dt.kind == "b" and ins[0] == ins[1] and ins[0].kind == "f") or \
                (not cmp and floats and _keeps_dtype("({0} %s {1})" % _BINARY[name], 2, dt)):
            return f"({ops[0]} {_BINARY[name]} {ops[1]})"
        return None
    if name in _LOGIC and len(ops) == 2 and dt.kind == "b" and all(d.kind == "b" for d in ins):
        return f"({ops[0]} {_LOGIC[name]} {ops[1]})"
    if name == "not" and dt.kind == "b" and ins[0].kind == "b":
        return f"(~{ops[0]})"
    if not floats:
        if name == "select" and len(ops) == 3 and ins[0].kind == "b" and ins[1] == ins[2] == dt and dt.kind == "f":
            return f"where({ops[0]}, {ops[1]}, {ops[2]})"
        return None
    if name == "neg":
        return f"(-{ops[0]})"
    if name in ("square", "integer_pow"):
        return f"({ops[0]} * {ops[0]})"  # integer_pow y=2 and square are x * x in NumPy's code too
    if name in _CALLS and _keeps_dtype(_CALLS[name] + "(" + ", ".join("{%d}" % i for i in range(len(ops))) + ")",
                                       len(ops), dt):
        return f"{_CALLS[name]}({', '.join(ops)})"
    return None


_probed = {}


def _keeps_dtype(template: str, nargs: int, dt) -> bool:
    """Whether numexpr's operation `template` ("maximum({0}, {1})") returns `dt` for operands of `dt`
    (its maximum/minimum, for one, compute float32 in float64): probed once per operation and dtype."""
    key = (template, nargs, dt)
    ok = _probed.get(key)
    if ok is None:
        names = [f"x{i}" for i in range(nargs)]
        try:
            prog = _NumExpr(template.format(*names), [(n, _SIG[dt]) for n in names])
            ok = prog(*[np.ones(1, dt)] * nargs, ex_uses_vml=False).dtype == dt
        except Exception:  # noqa: BLE001
            ok = False
        _probed[key] = ok
    return ok


class NumexprSpec:
    """What the generated line runs: per output, a compiled program and the indices of its operands
    among [inputs..., outputs computed so far]."""
    __slots__ = ("shape", "steps", "text")

    def __init__(self, shape, steps, text):
        self.shape, self.steps, self.text = tuple(shape), steps, text


def plan(g, operand_dtype, evaluator: str) -> NumexprSpec | None:
    """A NumexprSpec for fused group g, or None when it stays with the blocked NumPy kernel.

    operand_dtype(v): the dtype numexpr will see for input v (its own; 0-d scalars keep it)."""
    if _ne is None or evaluator != "numexpr":
        return None
    srcs = list(g.inputs) + [w for w in g.broadcasts]
    if len(srcs) + len(g.outputs) > _MAX_ARGS:
        return None
    text = {}
    for i, v in enumerate(g.inputs):
        text[v] = f"i{i}"
    for j, w in enumerate(g.broadcasts):
        text[w] = f"b{j}"
    outputs = set(g.outputs)
    steps = []
    var_sig = [(f"i{i}", _SIG.get(np.dtype(operand_dtype(v)))) for i, v in enumerate(g.inputs)]
    var_sig += [(f"b{j}", _SIG.get(np.dtype(operand_dtype(x)))) for j, (x, _) in enumerate(g.broadcasts.values())]
    if any(t is None for _, t in var_sig):
        return None
    for e in g.eqns:
        s = _expr(e, [text[v] for v in e.invars])
        if s is None or len(s) > _MAX_TEXT:
            return None
        out = e.outvars[0]
        if out in outputs:
            k = len(steps)
            used = [n for n, _ in var_sig if _mentions(s, n)]
            sig = [(n, t) for n, t in var_sig if n in used]
            try:
                prog = _NumExpr(s, sig)
            except Exception:  # noqa: BLE001 - anything numexpr cannot compile stays with NumPy
                return None
            index = {n: i for i, (n, _) in enumerate(var_sig)}
            vml = has_vml() and any(e2.prim.name not in _CHEAP for e2 in g.eqns)
            steps.append((prog, tuple(index[n] for n in used), out.aval.dtype, s, vml))
            var_sig.append((f"o{k}", _SIG[out.aval.dtype]))
            text[out] = f"o{k}"
        else:
            text[out] = s
    return NumexprSpec(g.shape, steps, "\n".join(f"o{k} = {st[3]}" for k, st in enumerate(steps)))


def _mentions(s: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", s) is not None


def run(spec: NumexprSpec, ins) -> list:
    """Evaluate the group: each output into a fresh buffer, in order (later ones may read earlier)."""
    vals = list(ins)
    outs = []
    for prog, idx, dt, _, vml in spec.steps:
        o = np.empty(spec.shape, dt)
        prog(*[vals[i] for i in idx], out=o, order="K", casting="safe", ex_uses_vml=vml)
        vals.append(o)
        outs.append(o)
    return outs
