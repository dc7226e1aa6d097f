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

The parts: native_ops.py says what lowers, native_emit.py writes a region's source, native_roll.py rolls
repeated periods into loops; this module cuts regions, compiles them and tiers.
"""
from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import threading
import types

import numpy as np

from ...core.jaxpr import Eqn, Jaxpr
from ...core.primitive import Primitive
from . import codegen as _codegen
from ._ir import buffer_of, uniform_value
from ._config import native_config as config
from .native_ops import _is_loop, expand_composites, supported
from .native_emit import _Emitter, _cast, _emit_body, _literal
from .native_roll import _ROLLED, _expand, _roll

log = logging.getLogger("funcgrad.jit")


_available = None


def available() -> bool:
    """Whether numba is installed (checked without importing it: importing takes ~0.5 s)."""
    global _available
    if _available is None:
        _available = importlib.util.find_spec("numba") is not None
    return _available


# --- what lowers ---------------------------------------------------------------------------------------


# --- the generated function ------------------------------------------------------------------------------


# --- rolling: repeated straight-line code as a loop -------------------------------------------------------


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


def find_regions(jaxpr: Jaxpr, exact: bool = False) -> list:
    """The program as a list of Eqn (NumPy path) and Region items, in program order (`exact`: see supported)."""
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
        if supported(e, exact):
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


def compile_native(jaxpr: Jaxpr, parallel_ops: bool | None = None, exact: bool = False):
    """jaxpr (optimised) as a codegen.Compiled whose regions run natively, or None when no region
    lowers. Compiles (or loads from the disk cache) with Numba: seconds for a large program, so jit
    calls this on its tiering thread. `jaxpr` is compiler.lower's result (what codegen compiles);
    `parallel_ops` is codegen's jit_parallel_ops for the code around the regions (None: the setting now).
    With `exact`, regions hold only what gives the NumPy code's results bit for bit (supported)."""
    if not available():
        return None
    jaxpr = expand_composites(jaxpr)
    items = find_regions(jaxpr, exact)
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


def tier(entry, compiled, exact: bool = False):
    """The function jit's cache entry runs first: `compiled.fn` (the NumPy code), counting calls; at
    `config.threshold` calls the native code is built (on a daemon thread when `config.background`)
    and stored as `entry.fn` (and `entry.native`), or, when nothing lowers, the NumPy code replaces the
    counter. `entry` needs writable `fn` and `native` attributes. The native code keeps the NumPy code's
    jit_parallel_ops (read now, when that code was generated: the setting may have changed since);
    `exact` is compile_native's."""
    fn = compiled.fn
    state = {"n": 0, "started": False}
    lock = threading.Lock()
    parallel_ops = _codegen.config.parallel_ops

    def work():
        try:
            nat = compile_native(compiled.jaxpr, parallel_ops, exact)
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
