"""Fused elementwise groups as CuPy ElementwiseKernels (the CuPy backend's evaluator for fusion.py).

On the GPU every elementwise operation is a kernel launch and a round trip of its operands through
device memory, so a group from `fusion.plan` becomes ONE generated `cupy.ElementwiseKernel`: one typed
parameter per operand, one output parameter per result read after the group, and an operation that is
a straight-line list of C statements, one typed local per member equation:

    in:  float32 i0, float32 b0          (b0: a broadcast operand, passed reshaped, the kernel expands it)
    out: float32 o0
    float t0 = i0 * b0;
    float t1 = tanhf(t0);
    o0 = t1;

`translate(group)` writes that description (a `KernelSource`) or returns None when any member has no
exact C translation; the code generator then emits the group's equations one call each, as before
(never an approximate kernel). `translatable(eqn)` is the per-equation test the CUDA fusion predicate
uses, so an untranslatable equation stays outside groups instead of spoiling one.

Semantics follow what funcgrad computes eagerly (NumPy / CuPy ufuncs, lax rules):
- float32 stays float32: the float functions (`tanhf`, `expf`, ...) and `f`-suffixed literals;
  float64 uses the double ones. Kernels are compiled with `--fmad=false` so a*b+c rounds twice, as the
  per-op eager path does.
- max/min propagate NaN (NumPy's maximum/minimum); comparisons are C's (NaN compares unequal).
- integer add/sub/mul/neg/abs wrap (computed in unsigned arithmetic: signed overflow is undefined in C);
  integer div truncates toward zero and rem takes the dividend's sign (C, as funcgrad's div and fmod),
  with x / 0 == x % 0 == 0 and MIN / -1 == MIN as NumPy gives; shifts by an amount outside [0, bits)
  shift every bit out, as XLA's.
- rsqrt and round use the same formulas as their impls (1 / sqrt, half away from zero); logistic uses the
  exp(-|x|) form, within 2 ulp of the impl's 1 / (1 + exp(-x)) and exact also where the result is
  subnormal (the impl flushes those to 0).
- convert_element_type is a C cast (to bool: != 0). Float to integer casts of NaN/inf/out-of-range
  values are platform-defined in NumPy too (CUDA saturates, x86 gives INT_MIN).
Not translated (the group falls back): complex, float16/bfloat16, integer pow, population_count, the
special functions (erf, erfc, erf_inv, lgamma, digamma, ...: funcgrad's own formulas, not libm's),
random_gamma_grad, real/imag/conj/complex, and primitives with unknown parameters.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ...core.jaxpr import Eqn

# dtype -> (CuPy's parameter type name, the C type used for locals)
CTYPES = {
    np.dtype(np.bool_): ("bool", "bool"),
    np.dtype(np.int8): ("int8", "signed char"),
    np.dtype(np.int16): ("int16", "short"),
    np.dtype(np.int32): ("int32", "int"),
    np.dtype(np.int64): ("int64", "long long"),
    np.dtype(np.uint8): ("uint8", "unsigned char"),
    np.dtype(np.uint16): ("uint16", "unsigned short"),
    np.dtype(np.uint32): ("uint32", "unsigned int"),
    np.dtype(np.uint64): ("uint64", "unsigned long long"),
    np.dtype(np.float32): ("float32", "float"),
    np.dtype(np.float64): ("float64", "double"),
}
_SIGNED = {1: "signed char", 2: "short", 4: "int", 8: "long long"}
_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}

# float functions with a libm / CUDA math name of their own: primitive -> C name (float64; + "f")
_MATH1 = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
          "expm1": "expm1", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
          "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh",
          "acosh": "acosh", "atanh": "atanh", "sqrt": "sqrt", "cbrt": "cbrt", "floor": "floor",
          "ceil": "ceil"}
_MATH2 = {"atan2": "atan2", "nextafter": "nextafter", "pow": "pow", "rem": "fmod"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BITS = {"and": ("&", "&&"), "or": ("|", "||"), "xor": ("^", "!=")}
_MAX_PARAMS = 128     # kernel parameters (inputs + outputs); far below CUDA's 4 KB parameter space


class KernelSource:
    """What one ElementwiseKernel is made of, and how the generated code calls it.

    in_params / out_params / operation / name: ElementwiseKernel's arguments.
    args: one per input parameter, in order: (var, expanded shape or None) — the group input to pass,
    reshaped to `expanded` for a broadcast operand (the kernel broadcasts it itself)."""
    __slots__ = ("in_params", "out_params", "operation", "name", "args", "shape", "out_dtypes")

    def __init__(self, in_params: str, out_params: str, operation: str, args: list, shape: tuple,
                 out_dtypes: list):
        self.in_params, self.out_params, self.operation = in_params, out_params, operation
        self.args, self.shape, self.out_dtypes = args, tuple(shape), out_dtypes
        digest = hashlib.sha1(f"{in_params};{out_params};{operation}".encode()).hexdigest()[:16]
        self.name = f"funcgrad_fused_{digest}"

    @property
    def key(self) -> tuple:
        return (self.in_params, self.out_params, self.operation, self.name)

    def text(self) -> str:
        """The kernel as comment-ready text (shown in Compiled.source)."""
        return "\n".join([f"ElementwiseKernel {self.name} over {self.shape}",
                          f"in:  {self.in_params}", f"out: {self.out_params}", self.operation])


def _types(dt):
    return CTYPES.get(np.dtype(dt))


def literal(value, dt) -> str:
    """A C literal of dtype dt (float32 literals carry the `f` suffix, so arithmetic stays float32)."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        v = float(value)
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("non-finite literal")
        s = repr(v)
        if "e" not in s and "." not in s:
            s += ".0"
        return f"{s}f" if dt == np.float32 else s
    if dt.kind == "b":
        return "true" if value else "false"
    return f"(({CTYPES[dt][1]}){int(value)})"


def _maximum(a: str, b: str, kind: str) -> str:
    return f"(({a} >= {b} || {a} != {a}) ? {a} : {b})" if kind == "f" else f"(({a} >= {b}) ? {a} : {b})"


def _minimum(a: str, b: str, kind: str) -> str:
    return f"(({a} <= {b} || {a} != {a}) ? {a} : {b})" if kind == "f" else f"(({a} <= {b}) ? {a} : {b})"


def statements(e: Eqn, ops: list, target: str) -> list | None:
    """C statements computing equation e into a new local `target` from operand texts `ops`, or None
    when e has no exact translation."""
    if e.prim.multiple_results or len(e.outvars) != 1:
        return None
    name = e.prim.name
    dt = np.dtype(e.outvars[0].aval.dtype)
    tys = _types(dt)
    ins = [np.dtype(v.aval.dtype) for v in e.invars]
    if tys is None or any(_types(d) is None for d in ins) or len(ops) != len(e.invars):
        return None
    ct = tys[1]
    kind = dt.kind
    f = "f" if dt == np.float32 else ""
    same = all(d == dt for d in ins)
    params = dict(e.params)
    bits = 8 * dt.itemsize
    wide_u = "unsigned long long" if dt.itemsize == 8 else "unsigned int"

    def one(expr: str) -> list:
        return [f"{ct} {target} = {expr};"]

    def wrap(expr_of_u: str) -> str:  # integer arithmetic done modulo 2**bits, cast back
        return f"({ct})({expr_of_u})"

    a = ops[0] if ops else None
    b = ops[1] if len(ops) > 1 else None
    if name == "convert_element_type":
        if set(params) - {"new_dtype", "weak_type"} or np.dtype(params["new_dtype"]) != dt:
            return None
        if kind == "b":
            return one(f"({a} != 0)")
        return one(f"({ct})({a})")
    if name == "select":
        if len(ops) != 3 or ins[0].kind != "b" or ins[1] != dt or ins[2] != dt or params:
            return None
        return one(f"({a} ? {b} : {ops[2]})")
    if name in _COMPARE:
        if kind != "b" or len(ops) != 2 or ins[0] != ins[1] or params:
            return None
        return one(f"({a} {_COMPARE[name]} {b})")
    if name == "is_finite":
        if kind != "b" or ins[0].kind != "f" or params:
            return None
        return one(f"(bool)isfinite({a})")
    if not same:
        return None
    if name == "round":
        if set(params) != {"rounding_method"} or kind != "f":
            return None
        return one(f"round{f}({a})" if int(params["rounding_method"]) == 0 else f"rint{f}({a})")
    if name == "integer_pow":
        y = params.get("y")
        if set(params) != {"y"} or not isinstance(y, (int, np.integer)):
            return None
        y = int(y)
        if kind == "f":
            return one(f"({a} * {a})" if y == 2 else f"pow{f}({a}, {literal(y, dt)})")
        if kind in "iu" and 0 <= y <= 16:
            return one(wrap(" * ".join([f"({wide_u}){a}"] * y)) if y else literal(1, dt))
        return None
    if name == "clamp":
        if kind not in "iuf" or params or len(ops) != 3:
            return None
        lo, x, hi = ops
        return [f"{ct} {target}_m = {_maximum(x, lo, kind)};",
                f"{ct} {target} = {_minimum(target + '_m', hi, kind)};"]
    if params:
        return None
    if kind == "f":
        if name in _MATH1:
            return one(f"{_MATH1[name]}{f}({a})")
        if name in _MATH2:
            return one(f"{_MATH2[name]}{f}({a}, {b})")
        one_ = literal(1, dt)
        simple = {"add": f"({a} + {b})", "sub": f"({a} - {b})", "mul": f"({a} * {b})", "div": f"({a} / {b})",
                  "neg": f"(-{a})", "square": f"({a} * {a})", "abs": f"fabs{f}({a})",
                  "rsqrt": f"({one_} / sqrt{f}({a}))",
                  "sign": f"(({a} > 0) ? {one_} : (({a} < 0) ? {literal(-1, dt)} : "
                          f"(({a} == 0) ? {literal(0, dt)} : {a})))"}
        if name in simple:
            return one(simple[name])
        if name in ("max", "min"):
            return one((_maximum if name == "max" else _minimum)(a, b, kind))
        if name == "logistic":  # exp(-|x|) never overflows (free here: no extra pass over memory)
            return [f"{ct} {target}_e = exp{f}(-fabs{f}({a}));",
                    f"{ct} {target} = ({a} >= 0) ? {one_} / ({one_} + {target}_e) : {target}_e / ({one_} + {target}_e);"]
        return None
    if kind == "b":
        if name in _BITS:
            return one(f"({a} {_BITS[name][1]} {b})")
        if name == "not":
            return one(f"(!{a})")
        if name in ("max", "min"):
            return one(f"({a} || {b})" if name == "max" else f"({a} && {b})")
        return None
    # integers
    u = wide_u
    signed = kind == "i"
    if name in ("add", "sub", "mul"):
        op = {"add": "+", "sub": "-", "mul": "*"}[name]
        return one(wrap(f"({u}){a} {op} ({u}){b}"))
    if name == "neg":
        return one(wrap(f"0u - ({u}){a}"))
    if name == "square":
        return one(wrap(f"({u}){a} * ({u}){a}"))
    if name == "abs":
        return one(f"(({a} < 0) ? {wrap(f'0u - ({u}){a}')} : {a})" if signed else a)
    if name == "sign":
        return one(f"({ct})(({a} > 0) - ({a} < 0))" if signed else f"({ct})({a} > 0)")
    if name in ("max", "min"):
        return one((_maximum if name == "max" else _minimum)(a, b, kind))
    if name == "div":  # by zero: -1 (all bits set), as XLA and the eager lax.div
        q = f"({ct})({a} / {b})"
        if signed:  # MIN / -1 overflows in C; it wraps to MIN (= -MIN modulo 2**bits)
            return one(f"(({b} == 0) ? ({ct})-1 : (({b} == -1) ? {wrap(f'0u - ({u}){a}')} : {q}))")
        return one(f"(({b} == 0) ? ({ct})-1 : {q})")
    if name == "rem":  # by zero: the dividend, as XLA and the eager lax.rem
        r = f"({ct})({a} % {b})"
        if signed:
            return one(f"(({b} == 0) ? {a} : (({b} == -1) ? ({ct})0 : {r}))")
        return one(f"(({b} == 0) ? {a} : {r})")
    if name in _BITS:
        return one(f"({ct})({a} {_BITS[name][0]} {b})")
    if name == "not":
        return one(f"({ct})(~{a})")
    if name in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
        ok = f"({b} >= 0 && {b} < {bits})"
        us, ss = _UNSIGNED[dt.itemsize], _SIGNED[dt.itemsize]
        if name == "shift_left":
            return one(f"({ok} ? ({ct})(({u})({us}){a} << {b}) : ({ct})0)")
        if name == "shift_right_logical":
            return one(f"({ok} ? ({ct})(({us}){a} >> {b}) : ({ct})0)")
        return one(f"({ok} ? ({ct})(({ss}){a} >> {b}) : ({ct})((({ss}){a} < 0) ? -1 : 0))")
    return None


def translatable(e: Eqn) -> bool:
    """Whether equation e has an exact C translation (the CUDA fusion predicate's test)."""
    return statements(e, [f"x{i}" for i in range(len(e.invars))], "t") is not None


def translate(g) -> KernelSource | None:
    """The ElementwiseKernel of fused group g (fusion.FusedGroup), or None when some member has no
    exact translation (the group then runs one call per equation).

    An input read directly by members is one parameter `iK`; each absorbed broadcast is one parameter
    `bK` (the same source may be broadcast two ways). The caller may pass a parameter an array of the
    group's shape, a smaller array that broadcasts to it, or a scalar of the parameter's dtype."""
    names = {}
    params = []
    args = []
    for v in g.inputs:
        ty = _types(v.aval.dtype)
        if ty is None:
            return None
        direct = any(v in e.invars for e in g.eqns)
        if direct:
            p = f"i{len(args)}"
            names[v] = p
            params.append(f"{ty[0]} {p}")
            args.append((v, None))
    for w, (x, expanded) in g.broadcasts.items():
        ty = _types(x.aval.dtype)
        if ty is None:
            return None
        p = f"b{len(args)}"
        names[w] = p
        params.append(f"{ty[0]} {p}")
        args.append((x, tuple(expanded)))
    outputs = {v: j for j, v in enumerate(g.outputs)}
    if len(args) + len(outputs) > _MAX_PARAMS or not outputs:
        return None
    body = []
    for n, e in enumerate(g.eqns):
        if any(v not in names for v in e.invars):
            return None
        t = f"t{n}"
        st = statements(e, [names[v] for v in e.invars], t)
        if st is None:
            return None
        body += st
        names[e.outvars[0]] = t
    outs = []
    for v, j in outputs.items():
        ty = _types(v.aval.dtype)
        if ty is None:
            return None
        outs.append(f"{ty[0]} o{j}")
        body.append(f"o{j} = {names[v]};")
    return KernelSource(", ".join(params), ", ".join(outs), "\n".join(body), args, g.shape,
                        [np.dtype(v.aval.dtype) for v in g.outputs])


_CACHE: dict = {}
OPTIONS = ("--fmad=false",)


def kernel(xp, src: KernelSource):
    """The ElementwiseKernel object for src on array module xp (cupy), built once per distinct
    source: equal groups, in one program or many, share one compiled kernel."""
    key = (id(xp),) + src.key
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is xp:
        return hit[1]
    k = xp.ElementwiseKernel(src.in_params, src.out_params, src.operation, src.name, options=OPTIONS)
    _CACHE[key] = (xp, k)
    return k


def is_kernel_backend(xp) -> bool:
    """Whether array module xp runs fused groups as ElementwiseKernels (cupy, or a test stand-in)."""
    return xp is not np and hasattr(xp, "ElementwiseKernel")


__all__ = ["KernelSource", "CTYPES", "literal", "statements", "translatable", "translate", "kernel",
           "is_kernel_backend"]
