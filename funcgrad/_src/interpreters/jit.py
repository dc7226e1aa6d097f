"""jit: trace once per input signature, optimise the jaxpr, generate straight-line backend code, cache.

Called on concrete arrays, a jitted function hashes the signature, finds the compiled function and calls
it. With donate_argnums, the Arrays it donates (those funcgrad owns alone) may be overwritten by the
generated code, which then deletes them, as JAX does. Called under another transform (grad of jit, vmap of jit, jit of jit) it binds the `pjit` call
primitive, whose rules transform the traced jaxpr and compile the result, so it stays compiled.
"""
from __future__ import annotations

import functools
import inspect
import logging
import sys
import threading
import types
import warnings
import weakref
from collections import OrderedDict
from typing import Callable

import numpy as np

from ..core.array import Array, ArrayBase, canonical_array, get_aval, to_array, wrap

_PY_SCALARS = (bool, int, float, complex)
from ..core.aval import ShapeDtypeStruct as _ShapeDtypeStruct, ShapedArray
from ..core.errors import user_location
from ..core.jaxpr import Jaxpr, eval_jaxpr
from ..core.primitive import Primitive, fp_checks
from ..core.trace import Tracer, hoist_tracer_consts
from ..core.backend import backend_devices, xp_of
from ..core.dtypes import bool_ as _bool, defaults as _defaults
from ..core import processes
from ..core.tree_util import (broadcast_prefix, keystr, tree_flatten, tree_flatten_with_path,
                              tree_unflatten, treedef_is_leaf)
from . import compiler
from .compiler import native
from .batching import trace_to_jaxpr, vmap
from .jit_config import config  # (jit's options: jit.config stays their public home)
from ..prims.shape import full
from .ad import jvp, vjp
from ..prims.callbacks import drop_effects
from ..prims.collectives import in_named_axis, spanning_processes

log = logging.getLogger("funcgrad.jit")


# Held to insert into and evict from any jitted function's cache (a hit takes no lock; tracing runs
# outside it). One lock for all (misses are rare), re-entrant for a finaliser that calls jit while
# an eviction drops entries; a module global rather than an attribute, so jitted functions still deepcopy.
_cache_lock = threading.RLock()


class _Shared:
    """The compiled signatures of one function under one set of jit options, shared by every `jit(f)` of that
    function (as JAX keys its cache by the function): `jax.jit(f)(x)` in a loop compiles once, not per wrapper.
    cache: key -> entry (LRU order); roots/bytes: the constant buffers the entries keep alive; fast_keys:
    __call__'s flat items of nested arguments -> their key."""
    __slots__ = ("cache", "roots", "bytes", "fast_keys", "__weakref__")

    def __init__(self):
        self.cache: OrderedDict = OrderedDict()
        self.roots: dict = {}  # id(constant buffer) -> [buffer, nbytes, entries holding it]
        self.bytes = 0  # bytes of the distinct constant buffers the cached entries hold
        self.fast_keys: dict = {}


_SHARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> {options: _Shared}


def _compile_settings() -> tuple:
    """The settings code generation reads when it compiles (passes, codegen's and the native tier's): part of
    the shared cache's key, so that a `jit(f)` made after a setting changed compiles under the new one."""
    cg = compiler.config.codegen
    return (tuple(compiler.config.passes), tuple(vars(cg).items()), tuple(vars(native.config).items()))


def _shared(fun, options: tuple) -> _Shared:
    """fun's cache under `options`, made on first use; alive while fun is. Only plain functions share (a
    bound method or a partial is a new object at each `jit(obj.f)`; a callable object may define __eq__)."""
    if fun.__class__ is not types.FunctionType:
        return _Shared()
    with _cache_lock:
        per = _SHARED.get(fun)
        if per is None:
            per = _SHARED[fun] = {}
        st = per.get(options)
        if st is None:
            st = per[options] = _Shared()
        return st


def _hashable_static(v, where: str):
    try:
        hash(v)
    except TypeError:
        raise ValueError(f"jit: static argument {where} of type {type(v).__name__} is not hashable; "
                         "static arguments must be hashable (use a tuple instead of a list, or make the "
                         "argument non-static)") from None
    return v


def _leaf_key(x):
    """(shape, dtype, weak type) for a NumPy-backed leaf, plus the device (or tracer) otherwise.

    The fast path of JitFunction.__call__ builds the same tuple inline for Arrays on the CPU."""
    if x.__class__ is Array:
        b = x._buf
        if b.__class__ is np.ndarray:
            return (b.shape, b.dtype, x.weak_type)
        return (b.shape, b.dtype, x.weak_type, str(x.device))
    if isinstance(x, Tracer):
        a = x.aval
        return (a.shape, a.dtype, a.weak_type, Tracer)
    a = get_aval(x)  # Python scalars: weakly typed, their dtype depends on enable_x64
    if isinstance(x, (np.ndarray, np.generic)):
        return (a.shape, a.dtype, a.weak_type)
    if isinstance(x, (bool, int, float, complex)):
        return (a.shape, a.dtype, a.weak_type, "python scalar")
    return (a.shape, a.dtype, a.weak_type, ("type", type(x).__name__))


def _walk_plain(xs, items: list, bufs: list, leaves: list) -> bool:
    """Flatten a call's arguments for JitFunction.__call__'s fast path, when they are CPU Arrays, Python
    scalars and lists / tuples of them: appends each leaf's _leaf_key (a container's (type, length)
    before its items) to `items`, its buffer to `bufs` and the leaf to `leaves`. False for anything else
    (the full signature then decides). Equal `items` mean the same pytree structure and leaf keys."""
    for a in xs:
        c = a.__class__
        if c is Array:
            b = a._buf
            if b.__class__ is not np.ndarray:
                return False
            items.append((b.shape, b.dtype, a.weak_type))
            bufs.append(b)
        elif c is float or c is int or c is bool:
            dt = _defaults.float_ if c is float else _defaults.int_ if c is int else _bool
            items.append(((), dt, True, "python scalar"))
            bufs.append(np.array(a, dt))
        elif c is list or c is tuple:
            items.append((c, len(a)))
            if not _walk_plain(a, items, bufs, leaves):
                return False
            continue
        else:
            return False
        leaves.append(a)
    return True


def _describe_leaf(k) -> str:
    shape, dtype, weak = k[0], k[1], k[2]
    s = f"{np.dtype(dtype).name}[{','.join(map(str, shape))}]"
    if weak:
        s += "(weak)"
    if len(k) > 3 and k[3] == "python scalar":
        s += " (Python scalar)"
    elif len(k) > 3 and isinstance(k[3], str):
        s += f" on {k[3]}"
    elif len(k) > 3 and k[3] is Tracer:
        s += " (traced)"
    elif len(k) > 3 and isinstance(k[3], tuple):
        s += f" (a {k[3][1]})"
    return s


class _Entry:
    """One cache entry: the optimised jaxpr, the output structure and (once built) the compiled code."""
    __slots__ = ("jaxpr", "out_tree", "compiled", "fn", "out_weak", "forwarded", "single", "xp", "roots",
                 "native", "donate_idx", "donating")
    hoisted = ()

    def __init__(self, jaxpr, out_tree, xp):
        self.jaxpr, self.out_tree, self.xp = jaxpr, out_tree, xp
        self.compiled = self.fn = self.native = None  # native: the Numba tier's code, once swapped in
        self.roots = None  # ids of the constant buffers charged to the cache while it is cached, else None
        self.donate_idx = None  # the leaves of the donated arguments (JitFunction._donated_leaves)
        self.donating = None  # {donated leaf positions: (Compiled writing into them, positions it consumes)}
        self.out_weak = [v.aval.weak_type for v in jaxpr.outvars]
        fw = compiler.forwarded_outputs(jaxpr)
        self.forwarded = fw if any(i is not None for i in fw) else None
        self.single = treedef_is_leaf(out_tree)

    def build(self):
        if self.fn is None:
            compiled = compiler.compile_jaxpr(self.jaxpr, self.xp)
            with _cache_lock:  # two threads may compile the same entry at once: the first keeps its code,
                if self.fn is None:  # so the cache's bytes count the constants of the code it holds
                    self.compiled, self.fn = compiled, compiled.fn
                    if native.wanted(self.xp):  # counts calls, then swaps in native code (compiler/native.py)
                        self.fn = native.tier(self, compiled)
        return self.fn

    def finish(self, outs, leaves):
        weak = self.out_weak
        res = [Array(o, w) if o.__class__ is np.ndarray else wrap(o, w) for o, w in zip(outs, weak)]
        fw = self.forwarded
        if fw is not None:
            for k, i in enumerate(fw):
                if i is not None and leaves[i].__class__ is Array:
                    res[k] = leaves[i]  # the caller's own (immutable) Array, unchanged
        if self.single:
            return res[0]
        return tree_unflatten(self.out_tree, res)


def _buffer_roots(entry) -> dict:
    """The memory a cache entry keeps alive through constants: {id(root): (root, nbytes)} over the
    buffers of its jaxpr's constants and the arrays its compiled code holds, each view traced to the array
    that owns its memory (a broadcast scalar counts its one element, two views of a buffer count once)."""
    out = {}
    vals = [getattr(c, "_buf", c) for c in entry.jaxpr.consts]
    if entry.fn is not None:
        glb = getattr(entry.fn, "__globals__", None) or {}
        vals += [v for v in glb.values() if hasattr(v, "nbytes") and hasattr(v, "base")]
    for v in vals:
        if not hasattr(v, "nbytes"):
            continue
        root = v
        while getattr(root, "base", None) is not None and hasattr(root.base, "nbytes") and \
                hasattr(root.base, "base"):
            root = root.base
        if id(root) not in out:
            out[id(root)] = (root, int(root.nbytes))
    return out


class _ClosureEntry:
    """A trace of a function that closes over tracers of an enclosing transform (never cached): its
    jaxpr takes those tracers (`hoisted`) as leading arguments."""
    __slots__ = ("jaxpr", "out_tree", "hoisted")

    def __init__(self, jaxpr, out_tree, hoisted):
        self.jaxpr, self.out_tree, self.hoisted = jaxpr, out_tree, hoisted

    def build(self):
        raise TypeError("jit: a function that closes over traced values of an enclosing transform can "
                        "only be called, not lowered or compiled on its own; pass those values as "
                        "arguments instead")


class Lowered:
    """What jit will run for one signature: the optimised jaxpr and the generated Python source."""

    def __init__(self, jaxpr: Jaxpr, compiled, call=None):
        self.jaxpr, self._compiled, self._call = jaxpr, compiled, call

    def as_text(self) -> str:
        """The optimised jaxpr (what runs, before code generation)."""
        return str(self.jaxpr)

    def fused_text(self) -> str:
        """The program as code generation sees it, with fused elementwise groups spelled out."""
        return self._compiled.plan_text()

    def source(self) -> str:
        """The generated Python source (the straight-line function, then any fused block kernels)."""
        return self._compiled.source

    def compile(self) -> "Compiled":
        return Compiled(self)


class Compiled(Lowered):
    """`jit(f).lower(*args).compile()`: callable on arguments of the lowered signature only (the static
    arguments were fixed by `lower` and are not passed again), as JAX's compiled stage."""

    def __init__(self, lowered: Lowered):
        super().__init__(lowered.jaxpr, lowered._compiled, lowered._call)

    def compile(self) -> "Compiled":
        return self

    def __call__(self, *args, **kwargs):
        return self._call(args, kwargs)


_MISSING = object()


def _xp_of(leaves):
    for x in leaves:
        b = getattr(x, "_buf", None)
        if b is not None and b.__class__ is not np.ndarray:
            return xp_of(b)
    return np


def _buf_refs(x) -> int:
    b = x._buf
    return sys.getrefcount(b)


def _base_refs(b) -> int:
    base = b.base
    return sys.getrefcount(base)


_SOLE_REFS = _buf_refs(Array(np.empty(1)))  # _buf_refs of an Array that alone holds its buffer
_SOLE_BASE_REFS = _base_refs(np.empty(4).reshape(2, 2))  # _base_refs of a view alone holding its base


def _sole_owner(x) -> bool:
    """Whether Array x's buffer is funcgrad's alone: a contiguous writeable NumPy array that nothing else
    refers to (no NumPy array of the caller's, no view, no other Array, no compiled constant), owning its
    memory or a view of a memory owner only it refers to (a reshaped result, Numba's memory of native code)."""
    b = x._buf
    if b.__class__ is not np.ndarray or not b.flags.writeable or not b.flags.c_contiguous:
        return False
    base = b.base
    if base is not None and (getattr(base, "base", None) is not None or _base_refs(b) > _SOLE_BASE_REFS + 1):
        return False  # (+1: the local `base`)
    del b, base  # (then count the references)
    return _buf_refs(x) <= _SOLE_REFS


def _not_usable(avals, why: str, stacklevel: int) -> None:
    shapes = ", ".join(f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]" for a in avals)  # (JAX's)
    warnings.warn(f"Some donated buffers were not usable: {shapes}.\n{why}", UserWarning, stacklevel=stacklevel + 1)


class JitFunction:
    """The callable returned by `jit(f)`."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), donate_argnums=(),
                 donate_argnames=()):
        self.fun = fun
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        self.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
        self.donate_argnames = (donate_argnames,) if isinstance(donate_argnames, str) else tuple(donate_argnames)
        self._n_params = None
        if self.static_argnums or self.static_argnames or self.donate_argnums or self.donate_argnames:
            self._resolve_static_with_signature(fun)
        self._donating = bool(self.donate_argnums or self.donate_argnames)
        self._plain = not self.static_argnums and not self.static_argnames and not self._donating
        self._options = (self.static_argnums, self.static_argnames, self.donate_argnums, self.donate_argnames)
        self._st = _shared(fun, self._options + (_compile_settings(),))
        self._cache, self._roots, self._fast_keys = self._st.cache, self._st.roots, self._st.fast_keys
        self._last_key = None
        self.compile_count = 0
        functools.update_wrapper(self, fun)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _resolve_static_with_signature(self, fun):
        """As JAX does where the signature is known: a static argnum names its parameter (so passing it
        by keyword is static too), a static argname its position (so passing it positionally is static),
        and negative argnums count from the last positional parameter. The same for donated arguments,
        which may not be static."""
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            return
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
            return
        positional = [p for p in params if p.kind in kinds]
        n = self._n_params = len(positional)
        nums = []
        for i in self.static_argnums:
            if not -n <= i < n:
                raise ValueError(f"jit: static_argnums {i} is out of range: "
                                 f"{getattr(fun, '__name__', 'fun')} takes {n} positional argument(s)")
            nums.append(i % n)
        names = list(self.static_argnames)
        for i in nums:
            if positional[i].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and positional[i].name not in names:
                names.append(positional[i].name)
        for i, p in enumerate(positional):
            if p.name in self.static_argnames and i not in nums:
                nums.append(i)
        self.static_argnums, self.static_argnames = tuple(nums), tuple(names)
        if not self.donate_argnums and not self.donate_argnames:
            return
        fname = getattr(fun, "__name__", "fun")
        for i in self.donate_argnums:
            if not -n <= i < n:
                raise ValueError(f"jit: donate_argnums {i} is out of range: {fname} takes {n} positional "
                                 "argument(s)")
        dnums = sorted({i % n for i in self.donate_argnums} |
                       {i for i, p in enumerate(positional) if p.name in self.donate_argnames})
        dnames = set(self.donate_argnames) | {positional[i].name for i in dnums
                                              if positional[i].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
        both = dnames & set(self.static_argnames)
        if both:
            raise ValueError(f"jit: static_argnames and donate_argnames cannot intersect: {sorted(both)} "
                             f"appear in both; a static argument is a Python value, it has no buffer to donate")
        self.donate_argnums, self.donate_argnames = tuple(dnums), tuple(sorted(dnames))

    def _split(self, args, kwargs):
        n = len(args)
        static_nums = set()
        for i in self.static_argnums:
            if self._n_params is not None:
                if i < n:  # a static parameter not passed positionally: by keyword, or its default
                    static_nums.add(i)
                continue
            if not -n <= i < n:
                raise ValueError(f"jit: static_argnums {i} is out of range for a call with {n} positional "
                                 f"argument(s) to {getattr(self.fun, '__name__', 'fun')}")
            static_nums.add(i % n)
        static = tuple((i, _hashable_static(args[i], f"{i}")) for i in sorted(static_nums))
        static_kw = tuple(sorted((k, _hashable_static(v, repr(k))) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return static, static_kw, dyn_args, dyn_kwargs, n

    def _raise_bad_argument(self, dyn_args, dyn_kwargs, raw, static_pos) -> None:
        """JAX's TypeError for an argument leaf that is not an array (a string, an object): it names the
        function, the leaf's type and its path from the parameter's name (`y['a'][1]`), and says to mark
        the argument static. Returns if every leaf converts (the TypeError came from elsewhere)."""
        for i, x in enumerate(raw):
            if isinstance(x, ArrayBase) or x.__class__ in _PY_SCALARS:
                continue
            try:
                canonical_array(x)
            except TypeError:
                break
        else:
            return
        paths, _ = tree_flatten_with_path((dyn_args, dyn_kwargs))
        keys = paths[i][0]
        names = None
        try:
            params = list(inspect.signature(self.fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        where = keystr(keys[1:])
        if keys and str(keys[0]) == "[0]" and len(keys) > 1:  # positional: the parameter's name, or *args[i]
            pos = [j for j in range(len(dyn_args) + len(static_pos)) if j not in static_pos][keys[1].idx]
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            named = [q.name for q in params if q.kind in kinds]
            var = [q.name for q in params if q.kind is inspect.Parameter.VAR_POSITIONAL]
            if pos < len(named):
                names = named[pos] + keystr(keys[2:])
            elif var:
                names = f"{var[0]}[{pos - len(named)}]" + keystr(keys[2:])
        elif keys and len(keys) > 1:  # by keyword: its name, or **kwargs['name']
            kw = keys[1].key
            var = [q.name for q in params if q.kind is inspect.Parameter.VAR_KEYWORD]
            if any(q.name == kw for q in params) or not var:
                names = kw + keystr(keys[2:])
            else:
                names = f"{var[0]}[{kw!r}]" + keystr(keys[2:])
        raise TypeError(
            f"Error interpreting argument to {self.fun!r} as an abstract array. The problematic value is of type "
            f"{type(raw[i])} and was passed to the function at path {names or where}.\nThis typically means that "
            "a jit-wrapped function was called with a non-array argument, and this argument was not marked as "
            "static using the static_argnums or static_argnames parameters of jax.jit.") from None

    def _signature(self, args, kwargs):
        static, static_kw, dyn_args, dyn_kwargs, n = self._split(args, kwargs)
        raw, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        # foreign leaves (NumPy arrays and scalars, ...) enter the JAX face: canonical for the x64 mode
        try:
            leaves = [x if isinstance(x, ArrayBase) or x.__class__ in _PY_SCALARS else canonical_array(x)
                      for x in raw]
        except TypeError:
            self._raise_bad_argument(dyn_args, dyn_kwargs, raw, {i for i, _ in static})
            raise
        leaf_keys = tuple(_leaf_key(x) for x in leaves)
        if not static and not static_kw and not dyn_kwargs and len(leaves) == n and \
                all(treedef_is_leaf(c) for c in in_tree.child_defs[0].child_defs):
            key = (None, leaf_keys)  # n plain positional leaves: the fast path's key
        else:
            key = (in_tree, static, static_kw, n, leaf_keys)
        return key, leaves, in_tree, static, static_kw, n, raw

    def _trace(self, leaves, in_tree, static, static_kw, n):
        store = []
        fun = self.fun

        def flat_fun(*dyn_leaves):
            dyn_args, dyn_kwargs = tree_unflatten(in_tree, dyn_leaves)
            it = iter(dyn_args)
            statics = dict(static)
            full = [statics[i] if i in statics else next(it) for i in range(n)]
            out = fun(*full, **dyn_kwargs, **dict(static_kw))
            out_leaves, out_tree = tree_flatten(out)
            store.append(out_tree)
            return out_leaves

        avals = [get_aval(x) for x in leaves]
        jaxpr = trace_to_jaxpr(flat_fun, avals, "jit")
        return jaxpr, store[-1]

    def _log_compile(self, key, in_tree, static, static_kw, leaves):
        name = getattr(self.fun, "__name__", "fun")
        sig = ", ".join(_describe_leaf(_leaf_key(x)) for x in leaves)
        prev = self._last_key
        if prev is None:
            why = "first compile"
        else:
            why = "; ".join(_signature_diff(prev, key)) or "signature evicted from the cache"
        log.warning("Compiling %s (compile #%d) for arguments (%s): %s", name, self.compile_count, sig, why)

    def _entry(self, args, kwargs, sig=None):
        key, leaves, in_tree, static, static_kw, n, _ = sig or self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            st = _shared(self.fun, self._options + (_compile_settings(),))
            if st is not self._st:  # settings changed since this jit was made: compile into f's cache for them
                self._st = st
                self._cache, self._roots, self._fast_keys = st.cache, st.roots, st.fast_keys
                entry = self._cache.get(key)
        if entry is None:
            jaxpr, out_tree = self._trace(leaves, in_tree, static, static_kw, n)
            (jaxpr,), hoisted = hoist_tracer_consts([jaxpr])
            if hoisted:
                # `fun` closes over tracers of an enclosing transform: they become leading arguments of
                # the call. Such a trace belongs to that transform's values, so it is not cached.
                return _ClosureEntry(compiler.optimize(jaxpr), out_tree, hoisted), leaves
            jaxpr = compiler.optimize(jaxpr)
            entry = _Entry(jaxpr, out_tree, _xp_of(leaves))
            with _cache_lock:  # (another thread may have traced the same signature meanwhile: keep one)
                other = self._cache.get(key)
                if other is not None:
                    return other, leaves
                self._cache[key] = entry
                self.compile_count += 1
                if config.log_compiles:
                    self._log_compile(key, in_tree, static, static_kw, leaves)
                self._last_key = key
                self._charge(entry)
        else:
            try:
                self._cache.move_to_end(key)
            except KeyError:  # evicted by another thread since the lookup: this call still uses it
                pass
        return entry, leaves

    def _charge(self, entry) -> None:
        """Count the constant buffers of `entry` (just cached or just compiled) towards the cache's bytes,
        then evict least recently used entries beyond jit_cache_size entries, or while the buffers the
        cache keeps alive, less those `entry` holds, exceed jit_cache_max_bytes: the cache holds at most
        that bound plus one signature's constants, and a large array every signature shares (one closed
        over) is not a reason to evict. Called with the lock held."""
        roots = _buffer_roots(entry)
        old = entry.roots or ()
        table = self._roots
        for r, (buf, nbytes) in roots.items():
            if r in old:
                continue
            rec = table.get(r)
            if rec is None:
                table[r] = [buf, nbytes, 1]
                self._st.bytes += nbytes
            else:
                rec[2] += 1
        entry.roots = tuple(old) + tuple(r for r in roots if r not in old)
        keep = sum(table[r][1] for r in entry.roots)
        cache = self._cache
        size = max(int(config.jit_cache_size), 1)
        limit = config.jit_cache_max_bytes
        while len(cache) > 1 and (len(cache) > size or (limit is not None and self._st.bytes - keep > limit)):
            key, gone = cache.popitem(last=False)
            if gone is entry:  # (moved to the front by other threads' hits meanwhile) it stays
                cache[key] = gone
                continue
            self._discharge(gone)

    def _discharge(self, entry) -> None:
        """Uncount an evicted entry's constant buffers (lock held)."""
        table = self._roots
        for r in entry.roots or ():
            rec = table[r]
            rec[2] -= 1
            if rec[2] == 0:
                del table[r]
                self._st.bytes -= rec[1]
        entry.roots = None

    def __call__(self, *args, **kwargs):
        nested = None
        if self._plain and not kwargs:
            # The steady state: arguments are CPU Arrays, Python scalars, or lists / tuples of them (a
            # training step's parameters); hash the signature, find the code, call it. For plain
            # positional leaves the key is the one _signature builds; for containers, _fast_keys maps
            # the flat items to it (recorded below by the call that missed).
            items, bufs, flat = [], [], []
            if _walk_plain(args, items, bufs, flat):
                if len(items) == len(flat):
                    key = (None, tuple(items))
                else:
                    nested = tuple(items)
                    key = self._fast_keys.get(nested)
                entry = self._cache.get(key) if key is not None else None
                if entry is not None and entry.fn is not None and not config.disable_jit and not fp_checks.on:
                    try:
                        self._cache.move_to_end(key)
                    except KeyError:  # evicted by another thread since the lookup: still usable
                        pass
                    return entry.finish(entry.fn(*bufs), flat)
        if config.disable_jit or fp_checks.on:  # (NaN/inf checks run op by op, naming the operation)
            return self.fun(*args, **kwargs)
        sig = self._signature(args, kwargs) if self._donating or nested is not None else None
        entry, leaves = self._entry(args, kwargs, sig)
        if nested is not None and not entry.hoisted:
            if len(self._fast_keys) >= 4 * max(int(config.jit_cache_size), 1):
                self._fast_keys.clear()  # (keys of evicted signatures: bounded, rebuilt on a miss)
            self._fast_keys[nested] = sig[0]
        if entry.hoisted or any(isinstance(x, Tracer) for x in leaves):
            outs = pjit_p.bind(*entry.hoisted, *leaves, jaxpr=entry.jaxpr,
                               name=getattr(self.fun, "__name__", "fun"))
            return tree_unflatten(entry.out_tree, outs)
        fn = entry.fn or self._build(entry)
        used = ()
        if sig is not None:
            fn, used = self._donate(entry, leaves, sig)
        bufs = [x._buf if x.__class__ is Array else to_array(x, copy=False)._buf for x in leaves]
        for i in used:  # consumed: deleted now (finish wraps a returned one anew)
            leaves[i].delete()
            leaves[i] = None
        return entry.finish(fn(*bufs), leaves)

    def _donated_leaves(self, in_tree, static, n) -> tuple:
        """The positions, among a call's leaves, of the donated arguments' leaves."""
        args_def, kw_def = in_tree.child_defs
        static_pos = {i for i, _ in static}
        nums = set(self.donate_argnums) if self._n_params is not None else \
            {i % n for i in self.donate_argnums if -n <= i < n}
        out, off = [], 0
        dyn = iter(args_def.child_defs)
        for i in range(n):
            if i in static_pos:
                continue
            c = next(dyn)
            if i in nums:
                out += range(off, off + c.num_leaves)
            off += c.num_leaves
        for k, c in zip(kw_def.aux[1], kw_def.child_defs):
            if k in self.donate_argnames:
                out += range(off, off + c.num_leaves)
            off += c.num_leaves
        return tuple(out)

    def _donate(self, entry, leaves, sig):
        """(code, positions it consumes) for a donating call: the donated Arrays funcgrad owns alone go to
        code that may write into them (the caller deletes those it consumes); the others are left as
        they are, with JAX's warning. Leaves converted from NumPy arrays or Python scalars are not the caller's
        Arrays: nothing to donate (JAX copies them to the device)."""
        _, _, in_tree, static, _, n, raw = sig
        idx = entry.donate_idx
        if idx is None:
            idx = entry.donate_idx = self._donated_leaves(in_tree, static, n)
        if not idx:
            return entry.fn, ()
        count = {}
        for x in leaves:
            if x.__class__ is Array:
                count[id(x)] = count.get(id(x), 0) + 1
        mask, shared = [], []
        for i in idx:
            x = leaves[i]
            if x is raw[i] and x.__class__ is Array:
                (mask if count[id(x)] == 1 and _sole_owner(x) else shared).append(i)
        if shared:
            _not_usable([leaves[i].aval for i in shared],
                        "funcgrad donates only the buffers it owns alone; these share memory with a NumPy "
                        "array, a view, another argument or a constant, so they are left intact (donate a "
                        "copy, jnp.array(x), to have them reused).", 3)
        if not mask:
            return entry.fn, ()
        compiled, used = self._donating_code(entry, tuple(mask), 3)
        return compiled.fn, used

    def _donating_code(self, entry, mask: tuple, stacklevel: int):
        """The code of `entry` that may write into the inputs at positions `mask`, and the positions it
        consumes (those it writes into, or returns as an output): compiled once per mask."""
        got = entry.donating.get(mask) if entry.donating else None
        if got is None:
            compiled = compiler.compile_jaxpr(entry.jaxpr, entry.xp, donated=mask)
            fw = set(entry.forwarded or ())
            used = tuple(i for i in mask if i in compiled.donated_used or i in fw)
            unused = [entry.jaxpr.in_avals[i] for i in mask if i not in used]
            if unused:  # (once per signature, as JAX warns when it compiles)
                _not_usable(unused, "funcgrad reuses a donated buffer for a result or intermediate of the "
                            "same shape and dtype; these have none it can take, so they are left intact.",
                            stacklevel + 1)
            with _cache_lock:
                if entry.donating is None:
                    entry.donating = {}
                got = entry.donating.setdefault(mask, (compiled, used))
        return got

    def lower(self, *args, **kwargs) -> Lowered:
        key, leaves, in_tree, static, static_kw, n, _ = self._signature(args, kwargs)
        entry, leaves = self._entry(args, kwargs)
        if getattr(entry, "fn", None) is None:
            self._build(entry)
        statics, static_kws = dict(static), dict(static_kw)
        keys = tuple(_leaf_key(x) for x in leaves)
        name = getattr(self.fun, "__name__", "fun")

        def call(dyn_args, dyn_kwargs):
            it = iter(dyn_args)
            full = []
            for i in range(n):
                full.append(statics[i] if i in statics else next(it, _MISSING))
            extra = list(it)
            if _MISSING in full or extra:
                raise TypeError(f"Compiled {name}: called with {len(dyn_args)} positional argument(s); it was "
                                f"compiled for {n - len(statics)} (static arguments are fixed at lower time)")
            got_leaves, got_tree = tree_flatten((tuple(a for i, a in enumerate(full) if i not in statics),
                                                 dyn_kwargs))
            got = tuple(_leaf_key(x) for x in got_leaves)
            if got_tree != in_tree or got != keys:
                raise TypeError(f"Compiled {name}: argument types differ from the types for which this "
                                f"computation was compiled: got ({', '.join(map(_describe_leaf, got))}), "
                                f"compiled for ({', '.join(map(_describe_leaf, keys))})")
            return self(*full, **dyn_kwargs, **static_kws)

        compiled = entry.compiled
        if self._donating and not isinstance(entry, _ClosureEntry):  # the code that writes into them all
            idx = entry.donate_idx = self._donated_leaves(in_tree, static, n)
            if idx:
                compiled = self._donating_code(entry, idx, 2)[0]
        return Lowered(entry.jaxpr, compiled, call)

    def eval_shape(self, *args, **kwargs):
        entry, _ = self._entry(args, kwargs)
        return tree_unflatten(entry.out_tree, entry.jaxpr.out_avals)

    def _build(self, entry):
        """Compile a cached entry, then charge what its code holds to the cache's bytes."""
        if isinstance(entry, _ClosureEntry):
            return entry.build()
        fn = entry.build()
        with _cache_lock:
            if entry.roots is not None:  # (None: evicted, or never inserted)
                self._charge(entry)
        return fn

    def _cache_size(self) -> int:
        """How many signatures are cached."""
        return len(self._cache)

    def _cache_bytes(self) -> int:
        """The bytes of the distinct constant buffers the cached signatures keep alive (bounded by
        jit_cache_max_bytes; arguments are not counted, nor what a constant shares with another entry twice)."""
        return self._st.bytes

    def clear_cache(self) -> None:
        with _cache_lock:
            for e in self._cache.values():
                e.roots = None
            self._cache.clear()
            self._fast_keys.clear()
            self._roots.clear()
            self._st.bytes = 0
            self._last_key = None


def _signature_diff(prev, key) -> list:
    """What changed between two cache keys, in words (for log_compiles)."""
    def parts(k):
        if k[0] is None:
            return None, (), (), len(k[1]), k[1]
        return k
    t0, s0, kw0, n0, l0 = parts(prev)
    t1, s1, kw1, n1, l1 = parts(key)
    out = []
    if (t0 is None) != (t1 is None) or (t0 is not None and t0 != t1) or n0 != n1 or len(l0) != len(l1):
        out.append(f"tree structure changed ({len(l0)} -> {len(l1)} array leaves"
                   + (f", {n0} -> {n1} positional arguments" if n0 != n1 else "") + ")")
    if s0 != s1 or kw0 != kw1:
        d0, d1 = dict(s0) | dict(kw0), dict(s1) | dict(kw1)
        ch = [f"{k!r}: {d0.get(k, '<absent>')!r} -> {d1.get(k, '<absent>')!r}"
              for k in sorted(set(d0) | set(d1), key=repr) if d0.get(k, d1) != d1.get(k, d0)]
        out.append("static argument values changed (" + ", ".join(ch) + ")")
    if len(l0) == len(l1):
        kinds = (("shapes", 0), ("dtypes", 1), ("weak types", 2))
        for what, i in kinds:
            ch = [f"leaf {j}: {_describe_leaf(a)} -> {_describe_leaf(b)}"
                  for j, (a, b) in enumerate(zip(l0, l1)) if a[i] != b[i]]
            if ch:
                out.append(f"{what} changed (" + ", ".join(ch) + ")")
        dev = [f"leaf {j}" for j, (a, b) in enumerate(zip(l0, l1)) if a[3:] != b[3:]]
        if dev:
            out.append("devices / argument kinds changed (" + ", ".join(dev) + ")")
    return out


class _Unspecified:
    def __repr__(self) -> str:
        return "UnspecifiedValue"


_UNSPECIFIED = _Unspecified()


def jit(fun: Callable | None = None, /, *, in_shardings=_UNSPECIFIED, out_shardings=_UNSPECIFIED,
        static_argnums=None, static_argnames=None, donate_argnums=None, donate_argnames=None,
        keep_unused: bool = False, device=None, backend: str | None = None, inline: bool = False,
        compiler_options: dict | None = None):
    """Compile `fun`: trace once per input signature, optimise, generate straight-line code, cache it.

    On the first call with a new signature (the argument pytree's structure, each leaf's shape, dtype and
    weak type, and the values of the static arguments) `fun` is traced to a jaxpr, optimised (constant
    folding, CSE, dead-code elimination, fusion of elementwise chains) and turned into a Python function of
    NumPy (or CuPy) calls; later calls with the same signature run that code directly. Inspect it with
    `jit(f).lower(*args).as_text()` (the optimised jaxpr) and `.source()` (the generated Python).
    As in JAX, the cache belongs to the function: every `jit(f)` of one plain function with the same options
    and code-generation settings (funcgrad.config's jit_* settings, as they are when a signature is compiled)
    finds the signatures the others compiled, so `jit(f)(x)` in a loop traces once.

    Args:
        fun: the function to compile; its arguments are pytrees of arrays (and static values).
        static_argnums: positional arguments that are Python values, not arrays: part of the cache key
            (each distinct value compiles anew), usable in Python control flow. They must be hashable.
        static_argnames: the same, by parameter name.
        donate_argnums: positional arguments whose buffers the caller gives up (a training step's old
            parameters): the generated code may write results into them, and the Arrays it writes into
            (or returns) are deleted after the call (`is_deleted()`; using one raises RuntimeError "Array
            has been deleted ..."), as in JAX. Only buffers funcgrad owns alone are donated: an Array
            sharing memory with a NumPy array, a view, another argument or a compiled constant is left
            intact, as is one no result can take, with JAX's warning "Some donated buffers were not usable".
        donate_argnames: the same, by parameter name (either resolves the other through the signature).
        **jax_keywords: `in_shardings`, `out_shardings`, `keep_unused`, `device`, `backend`, `inline`,
            `compiler_options`: JAX's keywords, accepted so that JAX code runs unchanged; they do not change
            what is computed on funcgrad's single-process backends.

    Returns:
        A `JitFunction`: callable like `fun`, with `.lower(*args)` (a `Lowered`: `as_text()`,
        `source()`, `compile()`), `.eval_shape(*args)` and `.clear_cache()`. Without `fun`,
        `jit(static_argnums=...)` returns a decorator.

    Raises:
        TypeError: an unknown or misspelt keyword (`static_argnum`), as in JAX.
        ValueError: a donate_argnums out of range, or an argument both static and donated.

    Differences from JAX:
        The compiled code is Python over NumPy, not XLA: the speed-up comes from skipping tracing and
        per-op dispatch, from fusion and from buffer reuse. The cache per function is an LRU bounded by
        `jit_cache_size` and `jit_cache_max_bytes` (see `funcgrad.config`). A donated buffer is reused for
        a result computed at its last use (with the same shape and dtype), not for any output of its size
        as XLA may; under vmap/grad of the jitted function nothing is donated (JAX donates under vmap).
        Donating code runs on the NumPy code generation (not the native tier).

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> f = jax.jit(lambda x: x * 2 + 1)
        >>> f(jnp.arange(3.0))
        Array([1., 3., 5.], dtype=float32)
        >>> print(jax.jit(lambda x: x * 2.0).lower(1.0).as_text())
        { lambda ; a:f32[]. let
            b:f32[] = mul a 2.0:f32[]
          in (b,) }
        >>> g = jax.jit(lambda x, n: x ** n, static_argnums=1)
        >>> g(2.0, 3)
        Array(8., dtype=float32, weak_type=True)
    """
    kw = dict(in_shardings=in_shardings, out_shardings=out_shardings, static_argnums=static_argnums,
              static_argnames=static_argnames, donate_argnums=donate_argnums, donate_argnames=donate_argnames,
              keep_unused=keep_unused, device=device, backend=backend, inline=inline,
              compiler_options=compiler_options)
    if fun is None:
        return lambda f: jit(f, **kw)
    if not callable(fun):
        raise TypeError(f"jit: expected a callable, got {type(fun).__name__}")
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise TypeError(f"jit: compiler_options must be a dict, got {type(compiler_options).__name__}")
    return JitFunction(fun, () if static_argnums is None else static_argnums,
                       () if static_argnames is None else static_argnames,
                       () if donate_argnums is None else donate_argnums,
                       () if donate_argnames is None else donate_argnames)


# --- the pjit call primitive ----------------------------------------------------------------------

def _pjit_rule(*avals, jaxpr: Jaxpr, name: str):
    for a, b in zip(avals, jaxpr.in_avals):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"pjit {name}: argument {a.str_short()} does not match traced {b.str_short()}")
    return list(jaxpr.out_avals)


def _pjit_impl(xp):
    def run(*bufs, jaxpr: Jaxpr, name: str):
        compiled = jaxpr._cache.get("compiled")
        if compiled is None:
            compiled = jaxpr._cache["compiled"] = compiler.compile_jaxpr(jaxpr)
        return compiled(*bufs)
    return run


def _eval_fn(jaxpr):
    return lambda *a: eval_jaxpr(jaxpr, *a)


def _derived(jaxpr, key, make):
    f = jaxpr._cache.get(key)
    if f is None:
        f = jaxpr._cache[key] = make()
    return f


def _zeros(av):
    return full(av.shape, 0, av.dtype)


def _partial_fn(jaxpr, p, idx):
    """eval_jaxpr(jaxpr) as a function of the arguments at positions idx, the others fixed to p's."""
    def f(*d):
        full = list(p)
        for i, v in zip(idx, d):
            full[i] = v
        return eval_jaxpr(jaxpr, *full)
    return f


def _pjit_jvp(args, tangents, ans, *, jaxpr, name):
    # Only the arguments with a tangent are differentiated: the others (values closed over from an
    # enclosing transform, say) are held fixed inside the derivative.
    jaxpr = drop_effects(jaxpr)  # the primal (and its prints) already ran
    idx = tuple(i for i, t in enumerate(tangents) if t is not None)
    f = _derived(jaxpr, ("jvp", idx), lambda: jit(
        lambda p, t: jvp(_partial_fn(jaxpr, p, idx), [p[i] for i in idx], t)[1]))
    return f(list(args), [tangents[i] for i in idx])


def _pjit_vjp(cts, ans, args, needs, *, jaxpr, name):
    jaxpr = drop_effects(jaxpr)  # the primal (and its prints) already ran
    idx = tuple(i for i, n in enumerate(needs) if n)
    f = _derived(jaxpr, ("vjp", idx), lambda: jit(
        lambda p, c: vjp(_partial_fn(jaxpr, p, idx), *[p[i] for i in idx])[1](c)))
    cts = [_zeros(av) if c is None else c for c, av in zip(cts, jaxpr.out_avals)]
    out = [None] * len(args)
    for i, c in zip(idx, f(list(args), cts)):
        out[i] = c
    return out


def _pjit_batch(args, dims, *, jaxpr, name):
    f = _derived(jaxpr, ("batch", tuple(dims)), lambda: jit(vmap(_eval_fn(jaxpr), in_axes=tuple(dims))))
    outs = f(*args)
    return list(outs), [0] * len(outs)


pjit_p = Primitive("pjit", impl=_pjit_impl, abstract_eval=_pjit_rule, jvp_full=_pjit_jvp,
                   vjp_full=_pjit_vjp, batch=_pjit_batch, multiple_results=True)
pjit_p.is_call = True
pjit_p.weak_type_rule = lambda weaks, params: False


def make_jaxpr(fun: Callable, static_argnums=(), axis_env=None, return_shape: bool = False):
    """A function that traces `fun` on its arguments and returns the program it runs, as a jaxpr.

    Args:
        fun: the function to trace.
        static_argnums: positional arguments that are Python values (not traced).
        axis_env: named axes bound outside, for collectives: not supported (must be None or empty).
        return_shape: also return the output's pytree of `ShapeDtypeStruct`.

    Returns:
        A function returning the (unoptimised) jaxpr, or `(jaxpr, shapes)` with `return_shape`. Printing
        the jaxpr shows one equation per primitive; `jit(f).lower(x).as_text()` shows the optimised one.

    Differences from JAX:
        A multi-equation jaxpr prints one equation per line (JAX puts a short one on one line).

    Examples:
        >>> import funcgrad as jax, funcgrad.numpy as jnp
        >>> print(jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0))
        { lambda ; a:f32[]. let
            b:f32[] = sin a
            c:f32[] = mul b 2.0:f32[]
          in (c,) }
    """
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if axis_env:
        raise NotImplementedError("make_jaxpr: axis_env is not supported; trace the collective under "
                                  "vmap/pmap with its axis_name instead")

    def make(*args, **kwargs):
        j = JitFunction(fun, static_argnums)
        _, leaves, in_tree, static, static_kw, n, _ = j._signature(args, kwargs)
        jaxpr, out_tree = j._trace(leaves, in_tree, static, static_kw, n)
        if not return_shape:
            return jaxpr
        shapes = [_ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in jaxpr.out_avals]
        return jaxpr, tree_unflatten(out_tree, shapes)
    return make


def pmap(fun: Callable, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size: int | None = None, donate_argnums=(), global_arg_shapes=None):
    """Map `fun` over a leading axis, one member per device, with `axis_name` available to collectives.

    funcgrad runs the members on one device as a vmap (compiled with jit), so results match JAX's pmap;
    as in JAX, the mapped axis may not be larger than the number of this process's devices (`devices`
    or the backend's device count), else ValueError. In a multi-process job (funcgrad.distributed), each
    process maps its own members, and collectives naming `axis_name` act over every process's members
    in process order (axis_index is global), as JAX's multi-process pmap does."""
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    me = processes.index()
    n_devices = len([d for d in devices if getattr(d, "process_index", me) == me]) if devices is not None \
        else len(backend_devices(backend))
    spans = devices is None or any(getattr(d, "process_index", me) != me for d in devices)

    cache = {}

    def mapped(*args, **kwargs):
        static_idx = {s % max(len(args), 1) for s in static}
        dyn_idx = [i for i in range(len(args)) if i not in static_idx]
        nproc = processes.count() if spans and axis_name is not None and not in_named_axis() else 1
        key = (len(args), tuple((i, args[i]) for i in sorted(static_idx)), tuple(sorted(kwargs)), nproc,
               processes.index())
        dyn = [args[i] for i in dyn_idx]
        ax = in_axes
        if isinstance(in_axes, (tuple, list)) and static:
            ax = tuple(in_axes[i] for i in dyn_idx)
        leaves, _ = tree_flatten(tuple(dyn))
        spec = broadcast_prefix(ax if isinstance(ax, tuple) else (ax,) * len(dyn), tuple(dyn), "pmap in_axes")
        sizes = {get_aval(x).shape[a] for x, a in zip(leaves, spec) if a is not None}
        size = next(iter(sizes)) if len(sizes) == 1 else axis_size
        if size is not None and size > n_devices:
            raise ValueError(f"compiling computation that requires {size} logical devices, but only "
                             f"{n_devices} devices are available (num_replicas={size}): pmap's mapped "
                             "axis may not exceed the device count")
        f = cache.get(key)
        if f is None:
            statics = {i: args[i] for i in static_idx}

            def inner(*dyn_and_kw):
                dyn_args, kw = dyn_and_kw[:-1], dyn_and_kw[-1]
                it = iter(dyn_args)
                return fun(*[statics[i] if i in statics else next(it) for i in range(len(args))], **kw)
            kw_axes = 0 if kwargs else None
            axes = (tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) * len(dyn)) + (kw_axes,)
            f = cache[key] = jit(vmap(inner, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                                      axis_size=axis_size))
        if nproc == 1:
            return f(*dyn, kwargs)
        with spanning_processes(axis_name, nproc):  # (claimed by the vmap when jit traces it)
            return f(*dyn, kwargs)
    mapped.__name__ = f"pmap({getattr(fun, '__name__', 'fun')})"
    mapped.__wrapped__ = fun
    return mapped
