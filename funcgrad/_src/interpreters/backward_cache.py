"""Compiled backward walks for tapes that repeat.

Eager `grad` records a fresh tape on every call, and walking it in reverse costs a few microseconds of
Python per equation (the rules are funcgrad operations, each dispatched on its own). A training loop
records the same tape structure call after call, so the walk is the same too: only the values differ.

`compiled_backward` fingerprints a tape (its equations' primitives and params, how they are wired, every
abstract value) while gathering the buffers the walk may read. The second time a fingerprint is seen, the
walk is traced once on abstract stand-ins for those buffers (the same `walk`, so the same rules and
accumulation order), optimised and compiled by jit's compiler into one straight-line function; from then
on that function runs on the gathered buffers. What it computes is what the interpreted walk computes.

Only plain tapes qualify: NumPy buffers, no transform active around the call (higher orders keep the
interpreted walk, whose rules are then traced), no eager hooks (debug_nans / debug_infs, the Tensor
recorder), jit not disabled, and no primitive whose params carry per-call state (scan's and custom_vjp's
residuals, custom_jvp's user rule, traced control-flow bodies). Anything else, an unhashable param, or a
failure while compiling (recorded, so not retried) falls back to the interpreted walk.

The torch face's graph nodes use the same idea one node at a time (`node_backward`): per node signature,
the node's backward is compiled once it has been met `config.node_compile_after` times.

`funcgrad.config.update("backward_cache_size", n)` bounds the cache (LRU); 0 turns it off (node backwards too). Inserting and
evicting hold a lock; a hit takes none (a walk evicted by another thread after its lookup still runs).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np

from ..core import options as _options
from ..core.array import Array, get_aval, wrap
from ..core.jaxpr import Eqn, Var
from ..core.primitive import hooks, registry
from ..core.trace import _state as _trace_state, new_trace
from . import compiler
from .jit_config import config as jit_config


class _Config:
    backward_cache_size = 64
    compile_on_first = False  # (tests: compile at the first meeting, to run every tape through the cache)
    node_compile_after = 4  # a torch-face node signature's backward is compiled at its this-many-th meeting


config = _Config()

# Primitives whose params change from call to call or hold user callables: a tape holding one is never
# compiled (scan and custom_vjp_call have tape rules too).
_PER_CALL = frozenset({"custom_jvp_call", "cond", "while", "remat"})
_FAILED = object()  # a fingerprint whose walk could not be compiled

_cache: OrderedDict = OrderedDict()  # fingerprint -> (compiled function, output weak types, present mask)
_seen: OrderedDict = OrderedDict()  # fingerprints met once (compiled on the second meeting)
_lock = threading.Lock()
_cacheable: dict = {}  # primitive -> whether tapes holding it may be compiled
_AMBIGUOUS = (float, bool, complex)  # param values equal across types (1 == 1.0 == True, 0.0 == -0.0)


def _is_cacheable(prim) -> bool:
    ok = _cacheable.get(prim)
    if ok is None:
        ok = _cacheable[prim] = (registry.get(prim.name) is prim and prim.tape_rule is None
                                 and prim.name not in _PER_CALL)
    return ok


def _params_key(p: dict) -> tuple:
    for v in p.values():
        if v.__class__ in _AMBIGUOUS:
            return tuple((k, v.__class__, repr(v)) if v.__class__ in _AMBIGUOUS else (k, v) for k, v in p.items())
    return tuple(p.items())


def _fingerprint(eqns, in_vars, out_vars, cts):
    """(fingerprint, buffers) of a tape, or None when it does not qualify.

    Variables are numbered in order of first appearance (inputs, then each equation's new constants and
    outputs); `buffers` holds their values in that order. The fingerprint holds each input's and constant's
    abstract value, each equation's (primitive, params, operand numbers, output abstract values), the
    number of inputs, the numbers of the outputs and the cotangents' abstract values: equal fingerprints,
    equal walks."""
    index = {}
    bufs = []
    items = []

    def number(v, with_aval=True) -> bool:
        """Give v the next number and record its buffer (False: its value is not a NumPy-backed Array)."""
        val = v.val
        if val.__class__ is not Array or val._buf.__class__ is not np.ndarray:
            return False
        index[v] = len(bufs)
        bufs.append(val._buf)
        if with_aval:
            items.append(v.aval)
        return True
    for v in in_vars:
        if not number(v):
            return None
    for e in eqns:
        prim = e.prim
        ok = _cacheable.get(prim)
        if not ok and (ok is not None or not _is_cacheable(prim)):
            return None
        refs = []
        for v in e.invars:
            r = index.get(v)
            if r is None:  # a constant of the tape
                if not number(v):
                    return None
                r = index[v]
            refs.append(r)
        outs = e.outvars
        for v in outs:
            if not number(v, with_aval=False):
                return None
        p = e.params
        items.append((prim, _params_key(p) if p else (), tuple(refs),
                      outs[0].aval if len(outs) == 1 else tuple([v.aval for v in outs])))
    out_refs = tuple([None if v is None else index.get(v, -1) for v in out_vars])
    ct_avals = []
    for c in cts:
        if c is None:
            ct_avals.append(None)
            continue
        if c.__class__ is not Array or c._buf.__class__ is not np.ndarray:
            return None
        b = c._buf
        ct_avals.append((b.shape, b.dtype, c.weak_type))
    return (len(in_vars), tuple(items), out_refs, tuple(ct_avals)), bufs


def usable() -> bool:
    """Whether a backward walk starting now may use the cache (no transform tracing on this thread: its
    trace stack, read directly since this runs once per torch-face graph node)."""
    return (config.backward_cache_size > 0 and not hooks.active and not jit_config.disable_jit
            and not _trace_state.stack)


def compiled_backward(eqns: Sequence[Eqn], in_vars: Sequence[Var], out_vars: Sequence, cts: Sequence,
                      walk: Callable):
    """The cotangents `walk(eqns, in_vars, out_vars, cts)` returns, computed by the compiled walk cached
    for this tape's fingerprint; None when the tape does not qualify or is met for the first time."""
    fp = _fingerprint(eqns, in_vars, out_vars, cts)
    if fp is None:
        return None
    key, bufs = fp
    try:
        entry = _cache.get(key)
    except TypeError:  # an unhashable param
        return None
    if entry is None:
        with _lock:
            if key not in _seen and not config.compile_on_first:
                _seen[key] = None
                if len(_seen) > 4 * config.backward_cache_size:
                    _seen.popitem(last=False)
                return None
            _seen.pop(key, None)
        entry = _compile(eqns, in_vars, out_vars, cts, walk)
        with _lock:
            _cache[key] = entry
        trim()
    elif len(_cache) > 1:
        try:
            _cache.move_to_end(key)
        except KeyError:  # evicted by another thread since the lookup: this walk still uses it
            pass
    if entry is _FAILED:
        return None
    fn, weak, present = entry
    outs = fn(*[c._buf for c in cts if c is not None], *bufs)
    res = []
    k = 0
    for p in present:
        if p:
            o = outs[k]
            res.append(Array(o, weak[k]) if o.__class__ is np.ndarray else wrap(o, weak[k]))
            k += 1
        else:
            res.append(None)
    return res


def _compile(eqns, in_vars, out_vars, cts, walk):
    """Trace `walk` on abstract stand-ins for every numbered variable and compile the result."""
    order = []
    seen = set()
    for v in in_vars:
        seen.add(v)
        order.append(v)
    for e in eqns:
        for v in e.invars:
            if v not in seen:
                seen.add(v)
                order.append(v)
        for v in e.outvars:
            seen.add(v)
            order.append(v)
    try:
        with new_trace("backward", carries_values=False) as tr:
            ct_args = [tr.new_arg(get_aval(c)) for c in cts if c is not None]
            var_args = [tr.new_arg(v.aval) for v in order]
            shadow = {v: Var(v.aval, t, v.is_const) for v, t in zip(order, var_args)}
            s_eqns = [Eqn(e.prim, [shadow[v] for v in e.invars], [shadow[v] for v in e.outvars], e.params)
                      for e in eqns]
            it = iter(ct_args)
            s_cts = [None if c is None else next(it) for c in cts]
            res = walk(s_eqns, [shadow[v] for v in in_vars],
                       [None if v is None else shadow.get(v) for v in out_vars], s_cts)
            present = [r is not None for r in res]
            jaxpr = tr.to_jaxpr(ct_args + var_args, [r for r in res if r is not None])
        compiled = compiler.compile_jaxpr(jaxpr)
    except Exception:  # e.g. a rule that needs concrete values: keep interpreting this tape
        return _FAILED
    return compiled.fn, compiled.out_weak, present


# --- one torch-face graph node at a time -------------------------------------------------------------
# A torch graph node (autograd/graph.py's Recorded) is a few primitive binds; a training loop makes the same
# nodes (the same binds, wiring and abstract values: one signature) over and over. Its backward, interpreted,
# dispatches every funcgrad operation of its vjp rules; compiled once per signature it is a few NumPy calls.

class NodeBackward:
    """The compiled backward of one node signature, per pattern of given cotangents (their abstract values,
    None where absent): meetings are counted and the walk compiled at the `node_compile_after`-th.
    `shape`, `dtype`, `entry` memoise the entry of the last single strongly typed cotangent looked up
    (node_fn): a node's cotangent has its output's shape and dtype, so that is every lookup but the first."""
    __slots__ = ("meets", "fns", "gen", "shape", "dtype", "entry")

    def __init__(self) -> None:
        self.meets = 0
        self.fns = {}
        self.gen = _node_gen
        self.shape = self.dtype = self.entry = None


_node_gen = 0  # bumped by clear_cache: every NodeBackward made before it starts again from no meetings


def node_backward(state: NodeBackward, cts: Sequence, vals: Sequence, walk: Callable):
    """`walk(cts, vals)` (a list of cotangents, None where there is none) computed by `state`'s compiled
    function; None while the signature is not yet compiled, or could not be (then the caller interprets).
    `vals` are the node's values (NumPy-backed Arrays, in the signature's order), `cts` its output
    cotangents (Arrays or None). A result that is a given cotangent unchanged is that cotangent itself."""
    if len(cts) == 1:
        c = cts[0]
        b = c._buf
        if b.__class__ is not np.ndarray:
            return None
        key = (b.shape, b.dtype, c.weak_type)
        bufs = [b]
    else:
        key = []
        bufs = []
        for c in cts:
            if c is None:
                key.append(None)
                continue
            b = c._buf
            if b.__class__ is not np.ndarray:
                return None
            key.append((b.shape, b.dtype, c.weak_type))
            bufs.append(b)
        key = tuple(key)
    if state.gen != _node_gen:
        state.gen, state.meets, state.fns, state.dtype = _node_gen, 0, {}, None
    entry = state.fns.get(key)
    if entry is None:
        state.meets += 1
        if state.meets < config.node_compile_after and not config.compile_on_first:
            return None
        if len(state.fns) > 8:
            state.fns.clear()
        entry = state.fns[key] = _compile_node(cts, vals, walk)
    if entry is _FAILED:
        return None
    outs = call_node(entry, bufs, vals)
    if outs is None:
        return None
    _, weak, present = entry
    res = []
    k = 0
    for p in present:
        if not p:
            res.append(None)
            continue
        o = outs[k]
        for c in cts:
            if c is not None and o is c._buf:  # the walk passed this cotangent through unchanged
                res.append(c)
                break
        else:
            res.append(Array(o, weak[k]) if o.__class__ is np.ndarray else wrap(o, weak[k]))
        k += 1
    return res


def call_node(entry, bufs: list, vals: Sequence):
    """A compiled node backward `entry`'s function on the cotangent buffers `bufs` followed by the buffers of
    the node's values `vals` (its results); None when a value is not NumPy-backed."""
    for v in vals:
        b = v._buf
        if b.__class__ is not np.ndarray:
            return None
        bufs.append(b)
    return entry[0](*bufs)


def node_fn(state: NodeBackward, b: np.ndarray):
    """For a node given one cotangent, a strongly typed Array over NumPy buffer `b`: `state`'s compiled entry
    (function, output weak types, which results are present) for b's shape and dtype, called on (b, the
    node's value buffers...); None while there is none (node_backward then counts the meeting and compiles)
    or it failed. A hit costs no key: the entry is memoised on `state`."""
    if state.dtype is b.dtype and state.gen == _node_gen and state.shape == b.shape:
        return state.entry
    if state.gen != _node_gen:
        return None
    entry = state.fns.get((b.shape, b.dtype, False))
    if entry is None or entry is _FAILED:
        return None
    state.shape, state.dtype, state.entry = b.shape, b.dtype, entry
    return entry


def _compile_node(cts, vals, walk):
    """Trace `walk` on abstract stand-ins for the cotangents and values and compile it: (function, output weak
    types, which results are present), or _FAILED (a rule that needs concrete values: keep interpreting)."""
    try:
        with new_trace("node backward", carries_values=False) as tr:
            ct_args = [tr.new_arg(get_aval(c)) for c in cts if c is not None]
            val_args = [tr.new_arg(get_aval(v)) for v in vals]
            it = iter(ct_args)
            res = walk([None if c is None else next(it) for c in cts], val_args)
            present = [r is not None for r in res]
            jaxpr = tr.to_jaxpr(ct_args + val_args, [r for r in res if r is not None])
        compiled = compiler.compile_jaxpr(jaxpr)
    except Exception:  # noqa: BLE001 - any failure: this signature keeps the interpreted walk
        return _FAILED
    return compiled.fn, compiled.out_weak, present


def trim() -> None:
    """Drop the least recently used walks beyond the bound."""
    with _lock:
        while len(_cache) > config.backward_cache_size:
            _cache.popitem(last=False)
        while len(_seen) > 4 * config.backward_cache_size:
            _seen.popitem(last=False)


def cache_size() -> int:
    """How many compiled backward walks are cached."""
    return len(_cache)


def clear_cache() -> None:
    """Forget every compiled backward walk (and every fingerprint met once), the torch face's compiled node
    backwards too."""
    global _node_gen
    with _lock:
        _node_gen += 1
        _cache.clear()
        _seen.clear()


def _check_size(name: str, value) -> int:
    value = int(value)
    if value < 0:
        raise ValueError(f"backward_cache_size must be at least 0 (0 turns the cache off), got {value}")
    return value


_options.register(config, ("backward_cache_size",), check=_check_size, after=trim)
