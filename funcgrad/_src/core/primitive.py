"""Primitive cards and the registry.

A `Primitive` holds everything about one operation in one place:

- `impl(xp)` returns the backend function for array module `xp` (numpy or cupy) taking raw buffers;
- `abstract_eval(*avals, **params)` is the shape/dtype rule, raising a clear error on bad input;
- `jvp`: one rule per argument, `rule(t, ans, *args, **params)` -> that argument's tangent contribution
  (or `jvp_full(primals, tangents, ans, **params)` for rules that do not split by argument);
- `vjp`: one rule per argument, `rule(g, ans, *args, **params)` -> that argument's cotangent
  (or `vjp_full(cts, ans, args, needs, **params)`);
- `batch(args, dims, **params)` -> (out, out_dim): the vmap rule;
- `codegen`: an optional expression template used by jit's code generator;
- `onnx`: optional, the ONNX operator computing it alone (funcgrad.onnx's rule, as data; others have one
  in funcgrad/onnx/rules_<family>.py);
- `tape_rule(lower, params, traced)` -> (outs, params): optional, how a value-carrying trace computes the
  primitive (`traced[i]`: operand i is that trace's own, so may be differentiated), keeping in the
  recorded params what the vjp will need (scan's and custom_vjp's residuals).

Rules are written with funcgrad operations, so they are themselves differentiable and batchable.
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from . import options as _options
from .array import Array, ArrayBase, DeletedBuffer, get_aval, to_array, wrap, canonical_array
from .backend import xp_of
from .errors import user_location
from .trace import Tracer, _leak_error, find_top

registry: dict[str, "Primitive"] = {}


# --- eager recording (the Tensor engine's fast path) ------------------------------------------------------
# While a thread records, every eager bind on concrete Arrays appends (prim, params, args, out) to that
# thread's list: a single-op Tensor operation is recorded for backward without a trace.

class _RecState(threading.local):
    rec = None


_rec_state = _RecState()


class _Hooks:
    """The reasons an eager bind has to do more than compute, one entry each: recordings active in any
    thread, and NaN/inf checks. Empty (false) in the common case, so bind tests one attribute instead of a
    thread-local. A list, so that threads add and remove reasons without a lock (append and pop are atomic)."""
    active: list = []


hooks = _Hooks()
_reasons = hooks.active


def _add_hook(delta: int) -> None:
    if delta > 0:
        _reasons.append(None)
    else:
        _reasons.pop()


def record_eager(fn: Callable, args) -> tuple:
    """(fn(*args), binds): run fn eagerly on concrete Arrays, listing every primitive bind it made as
    (prim, params, args, out) in order."""
    st = _rec_state
    prev = st.rec
    rec = st.rec = []
    _reasons.append(None)
    try:
        out = fn(*args)
    finally:
        _reasons.pop()
        st.rec = prev
        if prev is not None:  # a nested recording: the outer one sees these binds too
            prev.extend(rec)
    return out, rec


# --- floating-point checks (config "jax_debug_nans" / "jax_debug_infs") ---------------------------------

class _FpChecks:
    """Which eager results are checked: NaNs, infinities (`on` is either)."""
    nans = False
    infs = False
    on = False


fp_checks = _FpChecks()


def set_fp_checks(nans: bool, infs: bool) -> None:
    """Turn the NaN / inf checks of eager results on or off (config "jax_debug_nans" / "jax_debug_infs")."""
    was = fp_checks.on
    fp_checks.nans, fp_checks.infs = bool(nans), bool(infs)
    fp_checks.on = fp_checks.nans or fp_checks.infs
    if fp_checks.on != was:
        _add_hook(1 if fp_checks.on else -1)


_options.register(fp_checks, {"debug_nans": "nans", "debug_infs": "infs"}, check=lambda name, value: bool(value),
                  after=lambda: set_fp_checks(fp_checks.nans, fp_checks.infs))


def _check_fp(prim, out) -> None:
    """Raise FloatingPointError, naming the primitive, when `out` holds a NaN (or inf) being checked for."""
    for o in (out if prim.multiple_results else (out,)):
        if getattr(getattr(o, "dtype", None), "kind", "") not in ("f", "c"):
            continue
        xp = xp_of(o)
        if fp_checks.nans and bool(xp.isnan(o).any()):
            raise FloatingPointError(f"invalid value (nan) encountered in {prim.name} (at {user_location(3)}); "
                                     "funcgrad.config 'jax_debug_nans' is on")
        if fp_checks.infs and bool(xp.isinf(o).any()):
            raise FloatingPointError(f"invalid value (inf) encountered in {prim.name} (at {user_location(3)}); "
                                     "funcgrad.config 'jax_debug_infs' is on")


def _all_weak(weaks, params) -> bool:
    return bool(weaks) and all(weaks)


class Primitive:
    """One operation's card. See the module docstring for what each rule means."""

    def __init__(self, name: str, *, impl: Callable, abstract_eval: Callable,
                 jvp=None, vjp=None, batch=None, jvp_full=None, vjp_full=None,
                 multiple_results: bool = False, differentiable: bool = True,
                 weak_type: Callable | None = None, tape_rule: Callable | None = None,
                 codegen: str | None = None, onnx: str | None = None, register: bool = True):
        if name in registry and register:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.impl_factory = impl
        self.impl = impl(np)
        self._impls = {"numpy": self.impl}
        self.abstract_eval = abstract_eval
        self.jvp = jvp
        self.vjp = vjp
        self.jvp_full = jvp_full
        self.vjp_full = vjp_full
        self.batch = batch
        self.multiple_results = multiple_results
        self.differentiable = differentiable
        self.weak_type_rule = weak_type or _all_weak
        self.tape_rule = tape_rule
        self.codegen = codegen
        self.onnx = onnx
        if register:
            registry[name] = self

    def __repr__(self) -> str:
        return self.name

    def impl_for(self, xp) -> Callable:
        """The implementation for array module `xp`."""
        f = self._impls.get(xp.__name__)
        if f is None:
            f = self._impls[xp.__name__] = self.impl_factory(xp)
        return f

    def bind(self, *args, **params):
        """Apply the primitive: straight to its impl on concrete Arrays, else to the top trace."""
        n = len(args)
        if n == 2:  # (unrolled for the common arities: this is the eager hot path)
            a, b = args
            ca, cb = a.__class__, b.__class__
            if ca is not Array or cb is not Array:  # a tracer or a non-Array operand
                if ca is Tracer:  # a tracer beside an Array or a tracer of its own trace: record there
                    tr = a._trace
                    if tr.alive and (cb is Array or (cb is Tracer and b._trace is tr)):
                        return tr.process(self, args, params)
                elif cb is Tracer and ca is Array:
                    tr = b._trace
                    if tr.alive:
                        return tr.process(self, args, params)
                return self._bind_general(args, params)
            bufs = (a._buf, b._buf)
            weak = a.weak_type and b.weak_type
        elif n == 1:
            a = args[0]
            if a.__class__ is not Array:
                if a.__class__ is Tracer and a._trace.alive:  # one tracer: record at its trace
                    return a._trace.process(self, args, params)
                return self._bind_general(args, params)
            bufs = (a._buf,)
            weak = a.weak_type
        else:
            bufs = []
            weak = bool(args)
            for a in args:
                if a.__class__ is not Array:
                    return self._bind_general(args, params)
                bufs.append(a._buf)
                if not a.weak_type:
                    weak = False
        impl = self.impl if not n or bufs[0].__class__ is np.ndarray else self.impl_for(args[0].device.xp)
        try:
            out = impl(*bufs, **params) if params else impl(*bufs)  # (an empty ** costs ~0.1 us)
        except Exception as e:
            self._raise_eager_error(args, params, e)
        if self.weak_type_rule is not _all_weak:
            weak = self.weak_type_rule([a.weak_type for a in args], params)
        if self.multiple_results:
            res = [wrap(o, weak) for o in out]
        elif out.__class__ is np.ndarray:
            res = Array(out, weak)
        else:
            res = wrap(out, weak)
        if hooks.active:
            self._run_hooks(out, params, args, res)
        return res

    def _run_hooks(self, out, params, args, res) -> None:
        if fp_checks.on:
            _check_fp(self, out)
        rec = _rec_state.rec
        if rec is not None:
            rec.append((self, params, args, res))

    def _bind_general(self, args, params):
        top = None
        for a in args:
            if a.__class__ is Tracer:  # the usual case here: record at the highest live trace
                tr = a._trace
                if not tr.alive:
                    raise _leak_error(a)
                if top is None or tr.level > top.level:
                    top = tr
            elif a.__class__ is not Array:
                break
        else:
            if top is None:
                return self.bind(*args, **params)
            return top.process(self, args, params)
        args = [a if isinstance(a, ArrayBase) else canonical_array(a) for a in args]
        top = find_top(args)
        if top is None:
            return self.bind(*args, **params)
        return top.process(self, args, params)

    def _raise_eager_error(self, args, params, err):
        # The fast path skips the shape/dtype rule; on failure run it to produce our own message.
        for a in args:
            if a.__class__ is Array and a._buf.__class__ is DeletedBuffer:
                raise a._buf.error() from None  # (a deleted operand: JAX's error, before any shape rule)
        self.abstract_eval(*[get_aval(a) for a in args], **params)
        shapes = ", ".join(a.aval.str_short() for a in args)
        msg = f"{self.name} failed on ({shapes}) at {user_location(4)}: {err}"
        try:
            new = type(err)(msg)
        except Exception:
            raise err
        raise new from err


def shape_error(op: str, msg: str, exc=TypeError):
    """Raise `exc` for a bad call to `op`, naming the user's source line."""
    raise exc(f"{op}: {msg} (at {user_location(3)})")


__all__ = ["Primitive", "registry", "shape_error", "record_eager", "fp_checks", "set_fp_checks"]
