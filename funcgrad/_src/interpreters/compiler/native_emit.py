"""The native tier's code generation: a region's equations become the source of one Numba function (the
_Emitter writes loops over each fused group's elements, calls for ufunc loops, matrix products, reductions,
scan/while bodies and rolled loops)."""
from __future__ import annotations

import numpy as np

from ...core.jaxpr import Eqn, Jaxpr, Var
from . import fusion as _fusion
from ._ir import buffer_of, uniform_value
from .native_ops import (_BINARY, _DTYPES, _REDUCE, _RESHAPES, _UNARY, _call_form, _dot_dims, _elementwise_form,
                        supported, ufunc_loop)
from .native_roll import _ROLLED


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
    elif kind == "extremum_grad":  # g * (1 where x wins, 1/2 on a tie, 0 elsewhere, NaN included): patterns.py
        x, y = ops[1], ops[2]
        win = f"{x} > {y}" if data == "max" else f"{x} < {y}"
        one, half, zero = (_literal(c, out) for c in (1.0, 0.5, 0.0))
        expr = f"({ops[0]} * ({one} if {win} else ({half} if {x} == {y} else {zero})))"
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
    return _elementwise_form(e) is not None or _is_outer(e)


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
