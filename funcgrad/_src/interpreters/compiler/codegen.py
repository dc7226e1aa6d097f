"""Code generation: an optimised jaxpr becomes one straight-line Python function over backend buffers.

    def compiled(v0, v1):
        v2 = _matmul(v0, v1)               # dot_general, specialised to one BLAS call
        v3 = _add(v2, c0, v2)              # v2 dies here: its fresh buffer takes the result (out,
                                           # passed positionally: ~0.2 us less per call than out=)
        ...
        return (v3, )

Each equation is one line calling the backend directly: NumPy ufuncs as globals (`_add(a, b, out)`),
specialised lines for the common structural primitives (`x.reshape(s)`, `x.transpose(p)`, `x.T`,
matmul for 2-D dot_generals, `x.astype(t)`, `sum(x, axes, t)` with np.add.reduce as `sum`), otherwise the
primitive's impl. Scalar constants are 0-d arrays (NumPy's fastest scalar operand) where an elementwise op
broadcasts them.

Buffers. A result is "fresh" when the line that made it allocated it (a ufunc, matmul, astype, a fused
kernel, an impl listed in _FRESH_IMPLS such as a convolution): nothing else refers to it. A fresh buffer whose variable and every view of it are dead, that is
not an output, may be donated as the `out=` of a later ufunc (or matmul) of the same shape and dtype.
Views, inputs, constants and outputs are never written. Dead variables are released (`del`).
Donated inputs (jit's donate_argnums: buffers the caller gives up) count as fresh buffers that die at their
last use, and are preferred as `out=` (the caller holds them until the call returns, so only reusing them
saves memory); `Compiled.donated_used` names those written into. With donation, schedule.py first moves
each elementwise chain that ends in outputs (a parameter update) to just after its inputs are ready.

Fusion (NumPy backend): groups from `fusion.plan` whose arrays have at least `config.fusion_min_size`
elements run as one generated kernel that walks cache-sized blocks (`config.fusion_block_size`
elements, flat slices of contiguous operands, or runs of rows otherwise), evaluating the whole chain on
one block in a few block-sized temporaries and writing each result read later into its preallocated
full-size output; from `config.fusion_parallel_min_size` element-operations the blocks are shared
among `config.fusion_threads` threads (NumPy releases the GIL in its loops). Smaller groups stay
straight-line in-place code, which for a few elements is already one ufunc call per op. With
`config.fusion_evaluator = "numexpr"` a group numexpr can take runs as numexpr programs instead
(numexpr_eval.py).

Fusion (CuPy backend): `cuda_plan` groups every elementwise equation cuda_kernels.py translates
exactly (no minimum size: each op fused away saves a kernel launch and a trip through device memory),
and each group becomes one call of a generated `cupy.ElementwiseKernel`, built at code-generation time
and shared by equal groups; its parameters, results and C operation are shown as a comment in
`Compiled.source`. A group that does not translate runs one backend call per equation. The NumPy path
is unaffected.

BLAS threads (core/threads.py): a matmul line is preceded by `_fit(mac)` (its multiply-adds, from the
static shapes; for a small product the inline `if _threads._current != 1: ...`) only where the wanted
count may change: before the program's first small product, before each large one, and before a small
one after a large one or after an impl that may call BLAS itself (which fits itself); consecutive small
products share one check. Split and paired products (parallel_ops) share the ceiling (fit_shared).
Nothing is emitted without threadpoolctl.

gemm.py: a product and the update or bias add that consumes it (`w - lr * (x.T @ g)`, `x @ w + b`) are one
BLAS gemm with beta = 1 into the update's buffer (a donated parameter's own): no gradient buffer, one pass
less (NumPy backend, without parallel_ops).

Also (patterns.py, parallel.py): relu's backward and its kin are one `extremum_grad` call, and with
`config.parallel_ops` a large matrix product is split between two threads and two independent
convolutions (or batched products) run at once.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...core import threads
from ...core.jaxpr import Eqn, Jaxpr, Var
from ...prims.elementwise import select_bits, select_bits_ok
from . import fusion as _fusion
from . import cuda_kernels, gemm, numexpr_eval, parallel, schedule
from ._config import config  # noqa: F401 - re-exported: compiler.codegen.config
from .blocked import SLOW_SCALAR, _FILLED_LIMIT, _KernelSpec, filled_block, run_fused, scratch
from ._ir import ELEMENTWISE, buffer_of, uniform_value


class Compiled:
    """A generated function over raw backend buffers, with its source for inspection."""

    def __init__(self, fn, source: str, out_weak, jaxpr=None, plan=None, donated_used=frozenset()):
        self.fn, self.source, self.out_weak = fn, source, out_weak
        self.jaxpr, self.plan = jaxpr, plan
        self.donated_used = donated_used  # positions of the donated inputs the code writes into

    def __call__(self, *bufs):
        return self.fn(*bufs)

    def plan_text(self) -> str:
        return _fusion.pretty_plan(self.plan) if self.plan is not None else str(self.jaxpr)


# --- what each primitive becomes --------------------------------------------------------------------

def ufunc_of(e: Eqn):
    """The NumPy ufunc that computes e exactly (same result, same dtype), or None."""
    if e.prim.multiple_results or len(e.outvars) != 1:
        return None
    impl = e.prim.impl
    impl = getattr(impl, "ufunc", impl)  # (a card whose impl takes a convention param wraps its ufunc)
    if not e.params and isinstance(impl, np.ufunc):
        return impl
    name = e.prim.name
    if name == "div" and not e.params and e.outvars[0].aval.dtype.kind in "fc":
        return np.true_divide
    if name == "rem" and e.outvars[0].aval.dtype.kind == "f":  # (integers: XLA's x % 0 is x, not fmod's 0)
        return np.fmod
    return None


def _extra_operand(e: Eqn):
    """integer_pow as a ufunc with a literal second operand: (ufunc, literal) or None."""
    if e.prim.name == "integer_pow" and set(e.params) == {"y"} and isinstance(e.params["y"], int) \
            and e.outvars[0].aval.dtype.kind in "fc":
        # (only y == 2, x * x: other exponents multiply in the impl's order, as JAX's, not pow's one rounding)
        return (np.multiply, None) if e.params["y"] == 2 else None
    return None


def _dot_pattern(e: Eqn):
    """For dot_general equations that are one matmul of (possibly transposed) operands: the pair of
    suffixes ("" or ".T") to apply to the operands; else None."""
    if e.prim.name != "dot_general":
        return None
    p = e.params
    pt = p.get("preferred_element_type")  # (not `in (None, dtype)`: np.dtype("float64") == None is True)
    if pt is not None and np.dtype(pt) != e.invars[0].aval.dtype:
        return None
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    a, b = e.invars
    if lb or rb or len(lc) != 1 or a.aval.dtype != b.aval.dtype:
        return None
    na, nb = a.aval.ndim, b.aval.ndim
    if na == 2 and nb == 2:
        ta = {(1,): "", (0,): ".T"}[tuple(lc)]
        tb = {(0,): "", (1,): ".T"}[tuple(rc)]
        return ta, tb
    if na == 1 and nb == 2:
        return "", {(0,): "", (1,): ".T"}[tuple(rc)]
    if na == 2 and nb == 1:
        return {(1,): "", (0,): ".T"}[tuple(lc)], ""
    return None


# reduce_sum over leading and later axes, from this many elements, runs as two sums (_leading_first)
SPLIT_SUM_MIN = 4096


def _leading_first(axes: tuple, aval):
    """(leading axes, the rest renumbered) for a sum over axes 0..k-1 and axes after a kept one (a
    convolution's bias gradient, g.sum((0, 2, 3))): summing the leading axes first adds whole contiguous
    slabs (vector adds), leaving a k-times smaller array whose trailing axes NumPy reduces contiguously;
    NumPy's one sum over all of them walks the input with a strided inner loop. 75 -> 46 us for a
    32x16x28x28 float32 gradient. The order of the additions changes (a rounding difference, as between
    any two summation orders). None where the split does not apply."""
    s = set(axes)
    k = 0
    while k in s:
        k += 1
    if k == 0 or k == len(s) or aval.size < SPLIT_SUM_MIN or aval.dtype.kind not in "fc":
        return None
    return tuple(range(k)), tuple(a - k for a in sorted(s) if a >= k)


# impls that always return a new writeable array, or a view of one made inside the impl (never of an input)
_FRESH_IMPLS = frozenset(("concatenate", "extremum_grad", "conv_general_dilated", "reduce_window_sum",
                          "reduce_window_max", "reduce_window_min", "select_and_scatter_add",
                          "select_and_gather_add"))


# operations that never call BLAS (nor run code that might): the BLAS's thread count is the same after them
_BLAS_FREE = ELEMENTWISE | frozenset((
    "reshape squeeze expand_dims transpose broadcast_in_dim slice concatenate pad rev iota gather scatter "
    "scatter_add scatter_mul scatter_min scatter_max dynamic_slice dynamic_update_slice reduce_sum reduce_max "
    "reduce_min reduce_prod reduce_and reduce_or argmax argmin cumsum cumprod cummax cummin sort select_n "
    "copy split clamp extremum_grad reduce_window_sum reduce_window_max reduce_window_min "
    "select_and_scatter_add select_and_gather_add threefry2x32").split())


def _product_mac(e: Eqn) -> int:
    """Multiply-adds of a dot_general that is one matmul (_dot_pattern): as the impl passes to fit."""
    a = e.invars[0].aval
    (lc, _), _ = e.params["dimension_numbers"]
    k = a.shape[lc[0]]
    return math.prod(e.outvars[0].aval.shape) * k


# --- the generator ----------------------------------------------------------------------------------

class _Gen:
    def __init__(self, jaxpr: Jaxpr, items, xp, donated=frozenset()):
        self.jaxpr, self.items, self.xp = jaxpr, items, xp
        self.donated = donated if xp is np else frozenset()  # input Vars the code may write into
        self.donated_used = set()  # those it writes into
        self.glb = {"np": np, "__name__": "funcgrad.jit_generated"}  # (module name: see the warning filter in funcgrad/__init__.py)
        self.gids = {}
        self.names = {}
        self.lines = []
        self.kernels = []
        self.nglob = 0
        self.const_val = dict(zip(jaxpr.constvars, jaxpr.consts))
        self.scalar_names = {}
        self.dry = False
        self.lazy = self._lazy_broadcasts() if xp is np else set()
        self.pairs = {}     # id(A) -> B: B starts on a worker just before A (parallel.py)
        self.pending = {}   # id(B) -> name of its Deferred
        self.split = set()  # ids of matrix products split between two threads (parallel.py)
        self.cuda = {}      # id(group) -> its cuda_kernels.KernelSource (CuPy backend)
        self.blas = False   # emit the BLAS thread policy's switches (core/threads.py) before matmul lines

    def _lazy_broadcasts(self) -> set:
        """broadcast_in_dim results read only by ufunc lines that have another full-size operand: they
        need not be materialised (not even as a broadcast view): the ufunc broadcasts them."""
        prod = {}
        readers = {}
        for it in self.items:
            if isinstance(it, _fusion.FusedGroup):
                for v in it.inputs:
                    readers.setdefault(v, []).append(None)
                continue
            for v in it.outvars:
                prod[v] = it
            for v in it.invars:
                readers.setdefault(v, []).append(it)
        outset = set(self.jaxpr.outvars)

        def full(v, shape):
            p = prod.get(v)
            return tuple(v.aval.shape) == shape and (p is None or p.prim.name != "broadcast_in_dim") \
                and not (v in self.const_val and uniform_value(self.const_val[v], limit=0) is not None)

        lazy = set()
        for v, p in prod.items():
            if p.prim.name != "broadcast_in_dim" or v in outset or v not in readers:
                continue
            shape = tuple(v.aval.shape)
            ok = True
            for r in readers[v]:
                if r is None or (ufunc_of(r) is None and r.prim.name != "select") or \
                        not any(w is not v and full(w, shape) for w in r.invars):
                    ok = False
                    break
            if ok:
                lazy.add(v)
        return lazy

    # names ------------------------------------------------------------------------------------------
    def name(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None and self.dry:
            return "_"
        if n is None:
            n = self.names[v] = f"v{len(self.names)}"
        return n

    def global_(self, value, hint="g") -> str:
        if self.dry:
            return hint
        key = (id(value), hint)
        n = self.gids.get(key)
        if n is not None and self.glb.get(n) is value:
            return n
        n = f"{hint}{self.nglob}"
        self.nglob += 1
        self.glb[n] = value
        self.gids[key] = n
        return n

    def select_name(self, e: Eqn) -> str:
        """`_select` (elementwise.select_bits: branch-free, for big real operands and a full-shape predicate)
        or `_where` (np.where), the function a NumPy select line calls."""
        out = e.outvars[0].aval
        if select_bits_ok(out.dtype, out.size) and tuple(e.invars[0].aval.shape) == tuple(out.shape):
            self.glb["_select"] = select_bits
            return "_select"
        self.glb["_where"] = np.where
        return "_where"

    def ufunc_name(self, uf) -> str:
        n = "_" + uf.__name__
        self.glb[n] = uf
        return n

    def scalar(self, v: Var):
        """The 0-d array name for a uniform constant (NumPy's cheapest scalar operand), or None."""
        if v not in self.const_val or self.xp is not np:
            return None
        if self.dry:
            return "_" if uniform_value(self.const_val[v], limit=0) is not None and v.aval.shape else None
        if v in self.scalar_names:
            return self.scalar_names[v]
        u = uniform_value(self.const_val[v], limit=0)
        n = None
        if u is not None and v.aval.shape:
            n = self.global_(np.asarray(u, dtype=v.aval.dtype).reshape(()), "s")
        self.scalar_names[v] = n
        return n

    def operands(self, e: Eqn, broadcasting: bool, ufunc=None):
        """Operand names; uniform constants as 0-d arrays when the op broadcasts and another operand
        (or the out= buffer) has the full shape; for ufuncs slow with a scalar operand (maximum, ...),
        as a contiguous array filled with the value instead."""
        names = [self.name(v) for v in e.invars]
        if broadcasting and e.outvars[0].aval.shape:
            sc = [self.scalar(v) for v in e.invars]
            if any(s is None for s in sc):
                if ufunc is not None and ufunc.__name__ in SLOW_SCALAR:
                    sc = [self.filled(v) if s is not None else None for v, s in zip(e.invars, sc)]
                names = [s if s is not None else n for s, n in zip(sc, names)]
        return names

    def filled(self, v: Var):
        """A contiguous read-only array of v's shape holding its one value (None if too big)."""
        if v.aval.size > _FILLED_LIMIT:
            return self.scalar(v)
        if self.dry:
            return "_"
        val = uniform_value(self.const_val[v], limit=0)
        return self.global_(filled_block(tuple(v.aval.shape), np.asarray(val, v.aval.dtype).reshape(())), "k")

    # one equation ---------------------------------------------------------------------------------
    def expr(self, e: Eqn):
        """(expression, expression with {out}, fresh): how to compute e; the second is None when the
        line cannot write into a given buffer."""
        name = e.prim.name
        xp = self.xp
        if xp is np:
            uf = ufunc_of(e)
            if uf is not None:
                ins = self.operands(e, True, uf)
                f = self.ufunc_name(uf)
                a = ", ".join(ins)
                return f"{f}({a})", f"{f}({a}, {_out(uf, '{out}')})", bool(e.outvars[0].aval.shape)
            extra = _extra_operand(e)
            if extra is not None:
                uf, y = extra
                f = self.ufunc_name(uf)
                x = self.name(e.invars[0])
                a = f"{x}, {x}" if y is None else f"{x}, {y!r}"
                return f"{f}({a})", f"{f}({a}, {{out}})", bool(e.outvars[0].aval.shape)
            if name == "select" and len(e.invars) == 3:
                ins = self.operands(e, True)
                return f"{self.select_name(e)}({', '.join(ins)})", None, bool(e.outvars[0].aval.shape)
            if name == "dot_general":
                pat = _dot_pattern(e)
                if pat is not None:
                    fn = "_matmul"
                    if id(e) in self.split:  # half of it on a worker (parallel.py)
                        fn = "_split_matmul"
                        self.glb[fn] = parallel.split_matmul
                    else:
                        self.glb[fn] = np.matmul
                    a, b = (self.name(v) for v in e.invars)
                    s = f"{fn}({a}{pat[0]}, {b}{pat[1]}"
                    return s + ")", s + ", {out})", bool(e.outvars[0].aval.shape)
            if e.prim is gemm.gemm_update_p:  # c + alpha * op(a) @ op(b) into out (c itself when it dies)
                self.glb["_gemm_update"] = gemm.gemm_update
                c, a, b = (self.name(v) for v in e.invars)
                p = e.params
                s = f"_gemm_update({p['alpha']!r}, {a}, {p['ta']}, {b}, {p['tb']}, {c}"
                return s + ")", s + ", {out})", True
            if name == "convert_element_type" and e.invars[0].aval.dtype.kind != "c":
                dt = self.global_(np.dtype(e.params["new_dtype"]), "dt")
                return f"{self.name(e.invars[0])}.astype({dt})", None, bool(e.outvars[0].aval.shape)
            if name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod") and set(e.params) == {"axes"}:
                x = self.name(e.invars[0])
                axes = tuple(e.params["axes"])
                meth = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min", "reduce_prod": "prod"}[name]
                if meth in ("sum", "prod"):
                    # the ufunc's reduce, not the method, whose Python wrapper in NumPy would be the frame an
                    # inf - inf or inf * 0 warning is charged to (funcgrad's filter covers the generated code)
                    dt = self.global_(e.invars[0].aval.dtype, "dt")
                    red = self.global_(np.add.reduce if meth == "sum" else np.multiply.reduce, meth)
                    split = _leading_first(axes, e.invars[0].aval) if meth == "sum" else None
                    if split is not None:  # (a bias gradient: g.sum((0, 2, 3)))
                        return f"{red}({red}({x}, {split[0]!r}, {dt}), {split[1]!r}, {dt})", None, True
                    return f"{red}({x}, {axes!r}, {dt})", None, bool(e.outvars[0].aval.shape)
                return f"{x}.{meth}({axes!r})", None, bool(e.outvars[0].aval.shape)
        x = self.name(e.invars[0]) if e.invars else None
        out_shape = tuple(e.outvars[0].aval.shape) if len(e.outvars) == 1 else None
        if name in ("reshape", "squeeze", "expand_dims") and not e.prim.multiple_results:
            return f"{x}.reshape({out_shape!r})", None, False
        if name == "transpose":
            perm = tuple(e.params["permutation"])
            if perm == (1, 0):
                return f"{x}.T", None, False
            return f"{x}.transpose({perm!r})", None, False
        if name == "broadcast_in_dim":
            shape, dims = tuple(e.params["shape"]), tuple(e.params["broadcast_dimensions"])
            expanded = [1] * len(shape)
            for i, d in enumerate(dims):
                expanded[d] = e.invars[0].aval.shape[i]
            expanded = tuple(expanded)
            src = x if expanded == tuple(e.invars[0].aval.shape) else f"{x}.reshape({expanded!r})"
            if e.outvars[0] in self.lazy:  # every reader is a ufunc that broadcasts it itself
                return (x if not e.invars[0].aval.shape else src), None, False
            if expanded == shape:
                return src, None, False
            self.glb["_broadcast_to"] = xp.broadcast_to
            return f"_broadcast_to({src}, {shape!r})", None, False
        if name == "slice" and not e.prim.multiple_results:
            p = e.params
            parts = []
            for s, l, k in zip(p["start_indices"], p["limit_indices"], p["strides"]):
                parts.append(f"{s}:{l}" + (f":{k}" if k != 1 else ""))
            return f"{x}[{', '.join(parts) + (',' if len(parts) == 1 else '')}]", None, False
        if name == "stop_gradient":
            return x, None, False
        if name == "extremum_grad" and xp is np:  # g, x, y with a uniform constant y as a 0-d array
            fn = self.global_(functools.partial(e.prim.impl_for(xp), **e.params), "f")
            return f"{fn}({', '.join(self.operands(e, True))})", None, True
        impl = e.prim.impl_for(xp)
        fn = self.global_(functools.partial(impl, **e.params) if e.params else impl, "f")
        call = f"{fn}({', '.join(self.name(v) for v in e.invars)})"
        return call, None, name in _FRESH_IMPLS and not e.prim.multiple_results


    # the program ------------------------------------------------------------------------------------
    def generate(self) -> str:
        jaxpr = self.jaxpr
        for i, (v, c) in enumerate(zip(jaxpr.constvars, jaxpr.consts)):
            self.names[v] = f"c{i}"
            self.glb[f"c{i}"] = buffer_of(c)
        args = [self.name(v) for v in jaxpr.invars]
        items = self.items
        outset = set(jaxpr.outvars)
        don = self.donated if config.donate else frozenset()
        ext = (set(jaxpr.invars) - don) | set(jaxpr.constvars)

        # last use (item index) of every variable; outputs live to the end
        end = len(items)
        last = {}
        for k, it in enumerate(items):
            for v in _reads(it):
                last[v] = k
        for v in jaxpr.outvars:
            last[v] = end + 1

        # alias analysis: roots[v] = the fresh buffers v may share memory with
        roots = {v: frozenset((v,)) for v in don}
        fresh_vars = set(don)
        plans = []
        for k, it in enumerate(items):
            if isinstance(it, _fusion.FusedGroup):
                plans.append(None)
                for v in it.outputs:
                    roots[v] = frozenset((v,))
                    fresh_vars.add(v)
                continue
            e = it
            self.dry = True
            ex = self.expr(e)
            self.dry = False
            plans.append(ex)
            if ex[2] and len(e.outvars) == 1:
                roots[e.outvars[0]] = frozenset(e.outvars)
                fresh_vars.add(e.outvars[0])
            else:
                r = frozenset().union(*[roots.get(v, frozenset()) for v in e.invars]) if e.invars else frozenset()
                for v in e.outvars:
                    roots[v] = r
        alias_last = {}
        for v, rs in roots.items():
            lu = last.get(v, -1)
            for r in rs:
                if alias_last.get(r, -1) < lu:
                    alias_last[r] = lu
        donate = config.donate and self.xp is np

        lines = [f"def compiled({', '.join(args)}):"]
        self.lines = lines
        blas_state = None  # the BLAS's thread count on entry is whatever the last product left
        for k, it in enumerate(items):
            reads = _reads(it)
            dying = [v for v in dict.fromkeys(reads) if last.get(v) == k and v not in ext]
            if don:  # donated inputs first: reusing a fresh buffer instead saves nothing (see above)
                dying.sort(key=lambda v: v not in don)
            if isinstance(it, _fusion.FusedGroup):
                donors = {}
                if donate:
                    in_roots = set()
                    for v in it.inputs:
                        if v not in fresh_vars:
                            in_roots |= roots.get(v, frozenset())
                    first_read = {}
                    last_read = {}
                    for n, e in enumerate(it.eqns):
                        for v in e.invars:
                            v = it.broadcasts[v][0] if v in it.broadcasts else v
                            first_read.setdefault(v, n)
                            last_read[v] = n
                    made_at = {e.outvars[0]: n for n, e in enumerate(it.eqns)}
                    used = set()
                    for j, o in enumerate(it.outputs):
                        for v in dying:
                            if v in fresh_vars and v not in outset and v not in used and v not in in_roots \
                                    and alias_last.get(v, -1) <= k and v in last_read \
                                    and v.aval.shape == o.aval.shape and v.aval.dtype == o.aval.dtype \
                                    and last_read[v] <= made_at[o]:
                                donors[j] = it.inputs.index(v)
                                used.add(v)
                                break
                self.emit_group(it, k, donors)
            else:
                e = it
                expr, expr_out, fresh = self.expr(e)
                paired = id(e) in self.pairs or id(e) in self.pending
                if self.blas:
                    blas_state = self.emit_fit(e, blas_state)
                if id(e) in self.pairs:  # start its partner on a worker first (parallel.py)
                    b = self.pairs[id(e)]
                    fn, bargs = self.call_form(b)
                    self.pending[id(b)] = dname = f"_d{k}"
                    self.glb["_spawn"] = parallel.spawn
                    lines.append(f"    {dname} = _spawn({fn}, {', '.join(bargs)})")
                if id(e) in self.pending:
                    expr = f"{self.pending[id(e)]}.wait()"
                donor = None
                if donate and not paired and expr_out is not None and len(e.outvars) == 1 and e.outvars[0].aval.shape:
                    oa = e.outvars[0].aval
                    in_roots = set()
                    for v in e.invars:
                        if v not in fresh_vars:
                            in_roots |= roots.get(v, frozenset())
                    cands = dying
                    if e.prim is gemm.gemm_update_p:  # its addend c first (no copy); never a product operand
                        cands = sorted((v for v in dying if v not in e.invars[1:]), key=lambda v: v is not e.invars[0])
                    for v in cands:
                        if v in fresh_vars and v not in outset and alias_last.get(v, -1) <= k \
                                and v.aval.shape == oa.shape and v.aval.dtype == oa.dtype \
                                and v not in in_roots:
                            donor = v
                            break
                    if donor is not None and e.prim.name == "dot_general" and donor in e.invars:
                        donor = None  # matmul must not write over its own operand
                if donor is not None:
                    if donor in don:
                        self.donated_used.add(donor)
                    rhs = expr_out.format(out=self.name(donor))
                    if e.outvars[0] not in self.names:
                        self.names[e.outvars[0]] = self.name(donor)  # the result takes over the name
                        dying = [v for v in dying if v is not donor]
                else:
                    rhs = expr
                outs = [self.name(v) for v in e.outvars]
                if e.prim.multiple_results:
                    lhs = ", ".join(outs) + ("," if len(outs) == 1 else "") if outs else "_"
                else:
                    lhs = outs[0]
                lines.append(f"    {lhs} = {rhs}")
            dead = [self.name(v) for v in dying if v not in outset]
            produced = it.outputs if isinstance(it, _fusion.FusedGroup) else it.outvars
            dead += [self.name(v) for v in produced if v not in last]
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        lines.append(f"    return ({''.join(self.name(v) + ', ' for v in jaxpr.outvars)})")
        return "\n".join(lines)

    def emit_fit(self, e: Eqn, state):
        """Emit the BLAS thread switch (core/threads.py's fit) that matmul line e needs, only where the
        wanted count may differ from the one set before it. `state` is what is known before e: 1 (one
        thread: a small product's fit ran since the last operation that may switch), None (unknown: at
        entry, after a large product, after an impl that may call BLAS). Returns the state after e."""
        if id(e) in self.pending:  # B of a pair: it started on a worker with A's setting
            return state
        mac = _product_mac(e) if _dot_pattern(e) is not None else \
            gemm.product_mac(e) if e.prim is gemm.gemm_update_p else None
        if id(e) in self.pairs:  # A of a pair: two products at once share the ceiling
            b = self.pairs[id(e)]
            if mac is not None:  # (an impl A calls fit itself)
                bmac = _product_mac(b) if _dot_pattern(b) is not None else 0
                self.glb["_fit_shared"] = threads.fit_shared
                self.lines.append(f"    _fit_shared({max(mac, bmac)}, 2)")
            return None
        if mac is None:
            return state if e.prim.name in _BLAS_FREE else None
        if id(e) in self.split:  # two halves at once (parallel.split_matmul)
            self.glb["_fit_shared"] = threads.fit_shared
            self.lines.append(f"    _fit_shared({mac // 2}, 2)")
            return 1 if mac // 2 < threads.GRAIN else None
        if mac < threads.GRAIN:
            if state != 1:  # (inline: a quarter of fit's call when nothing changes, the usual case)
                self.glb["_threads"] = threads
                self.lines.append(f"    if _threads._current != 1: _threads.fit({mac})")
            return 1
        self.glb["_fit"] = threads.fit
        self.lines.append(f"    _fit({mac})")
        return None

    # fused kernels ----------------------------------------------------------------------------------
    def emit_group(self, g: _fusion.FusedGroup, k: int, donors=None):
        if not g.outputs:
            return  # nothing reads any of its results (dead code left when dce is disabled)
        if id(g) in self.cuda:
            self.emit_elementwise_kernel(g, self.cuda[id(g)])
            return
        if self.xp is np and self.emit_numexpr(g):
            return
        kname = f"_kernel{len(self.kernels)}"
        spec = self.kernel(g, kname)
        spec.donors = tuple((donors or {}).get(j) for j in range(len(g.outputs)))
        self.donated_used.update(g.inputs[d] for d in (donors or {}).values() if g.inputs[d] in self.donated)
        if donors:
            self.lines.append(f"    # fused kernel {kname} writes output(s) {sorted(donors)} into dying input buffer(s)")
        self.glb["_run_fused"] = run_fused
        ins = ", ".join(self.input_expr(g, v) for v in g.inputs)
        outs = [self.name(v) for v in g.outputs]
        lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
        sname = self.global_(spec, "spec")
        self.lines.append(f"    {lhs} = _run_fused({sname}, ({ins}{',' if len(g.inputs) == 1 else ''}))")

    def emit_numexpr(self, g: _fusion.FusedGroup) -> bool:
        """Emit g as numexpr programs (numexpr_eval.py) when the configured evaluator takes it."""
        spec = numexpr_eval.plan(g, lambda v: v.aval.dtype, config.fusion_evaluator)
        if spec is None:
            return False
        ins = [self.input_expr(g, v) for v in g.inputs]
        for x, expanded in g.broadcasts.values():
            s = self.input_expr(g, x)
            ins.append(s if not x.aval.shape or s != self.name(x) else f"{s}.reshape({expanded!r})")
        outs = [self.name(v) for v in g.outputs]
        sname = self.global_(spec, "nespec")
        self.glb["_ne_run"] = numexpr_eval.run
        self.kernels.append(f"# numexpr group {sname} over {g.shape}:\n" +
                            "\n".join("#   " + line for line in spec.text.split("\n")))
        lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
        self.lines.append(f"    {lhs} = _ne_run({sname}, ({', '.join(ins)}{',' if len(ins) == 1 else ''}))")
        return True

    def emit_elementwise_kernel(self, g: _fusion.FusedGroup, src: cuda_kernels.KernelSource) -> None:
        """Emit g as one call of its ElementwiseKernel (CuPy backend; cuda_kernels.py). The kernel
        object is built here, once per distinct source; broadcast operands are passed reshaped to their
        expanded shape and uniform NumPy constants as scalars (the kernel broadcasts both). Outputs are
        preallocated only when no argument has the group's full shape."""
        kname = self.global_(cuda_kernels.kernel(self.xp, src), "_ek")
        args = []
        full = False
        for v, expanded in src.args:
            s = self.cuda_scalar(v)
            if s is not None:
                args.append(s)
                continue
            n = self.name(v)
            shape = tuple(v.aval.shape)
            if expanded is not None and shape and shape != expanded:
                n = f"{n}.reshape({expanded!r})"
                shape = expanded
            full = full or shape == g.shape
            args.append(n)
        if not full:
            self.glb["_empty"] = self.xp.empty
            args += [f"_empty({g.shape!r}, {self.global_(dt, 'dt')})" for dt in src.out_dtypes]
        self.kernels.append(f"# {kname}: " + "\n#   ".join(src.text().split("\n")))
        outs = [self.name(v) for v in g.outputs]
        lhs = outs[0] if len(outs) == 1 else ", ".join(outs)
        self.lines.append(f"    {lhs} = {kname}({', '.join(args)})")

    def cuda_scalar(self, v: Var):
        """For a constant that holds one value in a NumPy buffer: a global NumPy scalar of its dtype."""
        if v not in self.const_val or not isinstance(buffer_of(self.const_val[v]), (np.ndarray, np.generic)):
            return None  # (a device constant is passed as the array it is)
        u = uniform_value(self.const_val[v], limit=0)
        if u is None:
            return None
        return self.global_(np.asarray(u, dtype=v.aval.dtype)[()], "s")

    def call_form(self, e: Eqn):
        """(function name, argument expressions) computing e: a call another thread can make."""
        pat = _dot_pattern(e) if self.xp is np and e.prim.name == "dot_general" else None
        names = [self.name(v) for v in e.invars]
        if pat is not None:
            self.glb["_matmul"] = np.matmul
            return "_matmul", [names[0] + pat[0], names[1] + pat[1]]
        impl = e.prim.impl_for(self.xp)
        return self.global_(functools.partial(impl, **e.params) if e.params else impl, "f"), names

    def input_expr(self, g, v):
        s = self.scalar(v)
        return s if s is not None else self.name(v)

    def kernel(self, g: _fusion.FusedGroup, kname: str):
        """Generate the block kernel of group g; returns its _KernelSpec."""
        shape = g.shape
        kin = {}      # var read by members -> local name inside the loop
        params = []
        pre = []      # loop-invariant setup
        body = []
        sliced = []
        direct = {v for e in g.eqns for v in e.invars}
        for i, v in enumerate(g.inputs):
            p = f"i{i}"
            params.append(p)
            is_scalar = self.scalar(v) is not None or not v.aval.shape
            sliced.append(v in direct and not is_scalar)
            kin[v] = p if is_scalar else f"a{i}"
            if v in direct and not is_scalar:
                body.append(f"a{i} = {p}[s:e]")
        nb = 0
        for w, (x, expanded) in g.broadcasts.items():
            p = f"i{g.inputs.index(x)}"
            local = f"b{nb}"
            nb += 1
            if self.scalar(x) is not None or not x.aval.shape:
                kin[w] = p
            elif expanded[0] == shape[0] and shape[0] != 1:
                body.append(f"{local} = {p}.reshape({(shape[0],) + tuple(expanded[1:])!r})[s:e]")
                kin[w] = local
            else:
                pre.append(f"{local} = {p}.reshape({(1,) + tuple(expanded[1:])!r})")
                kin[w] = local
        outputs = set(g.outputs)
        oidx = {v: j for j, v in enumerate(g.outputs)}
        for j in range(len(g.outputs)):
            params.append(f"o{j}")
            body.append(f"q{j} = o{j}[s:e]")
        last = {}
        for n, e in enumerate(g.eqns):
            for v in e.invars:
                last[v] = n
        slots = []          # (name, dtype): block temporaries
        filled = {}         # (dtype, value bytes) -> name of a block filled with a constant
        free = {}           # dtype -> free slots
        where = dict(kin)   # var -> name holding its block
        slot_of = {}
        for n, e in enumerate(g.eqns):
            out = e.outvars[0]
            dt = out.aval.dtype
            ins = [where[v] for v in e.invars]
            uf = ufunc_of(e)
            if uf is not None and uf.__name__ in SLOW_SCALAR:
                for j, v in enumerate(e.invars):
                    if self.scalar(v) is not None:
                        val = uniform_value(self.const_val[v], limit=0)
                        key = (v.aval.dtype, np.asarray(val).tobytes())
                        if key not in filled:
                            fname = f"f{len(filled)}"
                            filled[key] = fname
                            c = self.global_(np.asarray(val, v.aval.dtype).reshape(()), "s")
                            pre.append(f"{fname} = _filled(tshape, {c})")
                        ins[j] = filled[key]
            dying_slots = [slot_of[v] for v in dict.fromkeys(e.invars) if v in slot_of and last.get(v) == n]
            if out in outputs:
                target = f"q{oidx[out]}"
            else:
                cands = [t for t in dying_slots if t[1] == dt] + free.get(dt, [])
                if cands:
                    slot = cands[0]
                    if slot in free.get(dt, []):
                        free[dt].remove(slot)
                else:
                    slot = (f"t{len(slots)}", dt)
                    slots.append(slot)
                target = slot[0]
                slot_of[out] = slot
            body.append(self.block_op(e, ins, target))
            where[out] = target
            for t in dying_slots:
                if t[0] != target and t not in free.get(t[1], []):
                    free.setdefault(t[1], []).append(t)
        src = [f"def {kname}(lo, hi, step, tshape, {', '.join(params)}):"]
        src += [f"    {p}" for p in pre]
        if slots:
            dts = ", ".join(self.global_(dt, "dt") for _, dt in slots)
            names = ", ".join(nm for nm, _ in slots)
            src.append(f"    {names}{',' if len(slots) == 1 else ''} = _scratch(tshape, ({dts},))")
        src.append("    for s in range(lo, hi, step):")
        src.append("        e = s + step")
        src.append("        if e > hi:")
        src.append("            e = hi")
        for nm in [nm for nm, _ in slots] + list(filled.values()):
            src.append(f"            {nm} = {nm}[:e - s]")
        src += [f"        {b}" for b in body]
        self.glb["_scratch"] = scratch
        self.glb["_filled"] = filled_block
        self.glb["_copyto"] = np.copyto
        source = "\n".join(src)
        self.kernels.append(source)
        exec(compile(source, f"<jit kernel {kname}>", "exec"), self.glb)
        return _KernelSpec(self.glb[kname], shape, [v.aval.dtype for v in g.outputs], sliced,
                           bool(g.broadcasts), len(g.eqns), source)

    def block_op(self, e: Eqn, ins, target: str) -> str:
        """One member of a fused group on one block, writing into `target`."""
        uf = ufunc_of(e)
        if uf is not None:
            return f"{self.ufunc_name(uf)}({', '.join(ins)}, {_out(uf, target)})"
        extra = _extra_operand(e)
        if extra is not None:
            uf, y = extra
            a = f"{ins[0]}, {ins[0]}" if y is None else f"{ins[0]}, {y!r}"
            return f"{self.ufunc_name(uf)}({a}, {target})"
        if e.prim.name == "convert_element_type" and e.invars[0].aval.dtype.kind != "c":
            return f"_copyto({target}, {ins[0]}, casting='unsafe')"
        if e.prim.name == "select":
            f = self.select_name(e)
            return f"{f}({', '.join(ins)}, {target})" if f == "_select" else f"_copyto({target}, _where({', '.join(ins)}))"
        impl = e.prim.impl_for(np)
        fn = self.global_(functools.partial(impl, **e.params) if e.params else impl, "f")
        return f"_copyto({target}, {fn}({', '.join(ins)}), casting='unsafe')"


def _out(uf, name: str) -> str:
    """The out argument of a ufunc call: positional (cheaper), except where NumPy deprecates that."""
    return f"out={name}" if uf.__name__ in ("maximum", "minimum") else name


def _reads(it):
    if isinstance(it, _fusion.FusedGroup):
        return list(it.inputs)
    return it.invars


# --- entry points -------------------------------------------------------------------------------------

def fusible(e: Eqn) -> bool:
    """Whether the NumPy backend can run e inside a block kernel."""
    if e.prim.name not in ELEMENTWISE or e.prim.multiple_results or len(e.outvars) != 1:
        return False
    out = e.outvars[0].aval
    if not out.shape or out.size < config.fusion_min_size:
        return False
    return all(tuple(v.aval.shape) == tuple(out.shape) for v in e.invars)


def broadcastable(e: Eqn) -> bool:
    return ufunc_of(e) is not None or _extra_operand(e) is not None


def cuda_fusible(e: Eqn) -> bool:
    """Whether the CuPy backend can put e in an ElementwiseKernel: any elementwise single-result
    equation over operands of its own shape that cuda_kernels translates exactly. No minimum size: on
    a GPU every op fused away saves a kernel launch and a trip through device memory."""
    if e.prim.name not in ELEMENTWISE or e.prim.multiple_results or len(e.outvars) != 1:
        return False
    shape = tuple(e.outvars[0].aval.shape)
    return all(tuple(v.aval.shape) == shape for v in e.invars) and cuda_kernels.translatable(e)


def cuda_broadcastable(e: Eqn) -> bool:
    """Every kernel parameter broadcasts (ElementwiseKernel expands its arguments itself)."""
    return True


def cuda_plan(jaxpr: Jaxpr) -> tuple[list, dict]:
    """The CuPy backend's program: (items, id(group) -> KernelSource). A group with no exact
    translation is replaced by its equations (the broadcasts it absorbed first): one call each."""
    items = _fusion.plan(jaxpr, cuda_fusible, cuda_broadcastable)
    made = {v: e for e in jaxpr.eqns for v in e.outvars}
    out, srcs = [], {}
    for it in items:
        if isinstance(it, _fusion.FusedGroup):
            src = cuda_kernels.translate(it)
            if src is None:
                out += [made[w] for w in it.broadcasts] + it.eqns
                continue
            srcs[id(it)] = src
        out.append(it)
    return out, srcs


def generate(jaxpr: Jaxpr, xp=np, fuse=None, parallel_ops: bool | None = None, donated=()) -> Compiled:
    """Compile `jaxpr` for array module xp (numpy, or cupy: fused groups become ElementwiseKernels).
    `fuse` / `parallel_ops` override config.fusion / config.parallel_ops (the native tier regenerates a
    program later, with the setting its first compile had). `donated`: positions of inputs whose buffers the
    code may overwrite (NumPy backend)."""
    fuse = config.fusion if fuse is None else fuse
    parallel_ops = config.parallel_ops if parallel_ops is None else parallel_ops
    don = frozenset(jaxpr.invars[i] for i in donated) if xp is np and config.donate else frozenset()
    if don:
        jaxpr = schedule.hoist_output_chains(jaxpr)
    if xp is np and config.patterns and not parallel_ops:  # (parallel_ops splits the products themselves)
        jaxpr = gemm.fuse_updates(jaxpr)
    srcs = {}
    if fuse and xp is np and any(fusible(e) for e in jaxpr.eqns):
        items = _fusion.plan(jaxpr, fusible, broadcastable)
    elif fuse and cuda_kernels.is_kernel_backend(xp) and any(cuda_fusible(e) for e in jaxpr.eqns):
        items, srcs = cuda_plan(jaxpr)
    else:
        items = list(jaxpr.eqns)
    pairs, split = {}, set()
    if parallel_ops and xp is np:
        split = {id(it) for it in items
                 if isinstance(it, Eqn) and parallel.splittable(it, _dot_pattern, config.parallel_min_flops)}
        items, pairs = parallel.pair_up(items, config.parallel_min_flops, exclude=split)
    gen = _Gen(jaxpr, items, xp, don)
    gen.pairs, gen.split, gen.cuda = pairs, split, srcs
    gen.blas = xp is np and any(e.prim.name == "dot_general" for e in jaxpr.eqns) and threads.switchable()
    source = gen.generate()
    full = "\n\n".join([source] + gen.kernels)
    exec(compile(source, f"<jit {id(jaxpr):x}>", "exec"), gen.glb)
    has_groups = any(isinstance(it, _fusion.FusedGroup) for it in items)
    used = frozenset(i for i, v in enumerate(jaxpr.invars) if v in gen.donated_used)
    return Compiled(gen.glb["compiled"], full, [v.aval.weak_type for v in jaxpr.outvars], jaxpr,
                    items if has_groups else None, used)
