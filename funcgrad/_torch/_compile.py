"""torch.compile on funcgrad's jit.

`compile(model)` returns an OptimizedModule (for an nn.Module; `_orig_mod` is the module) or a function that
runs the program through `funcgrad.jit`: the module's parameters and buffers enter the jitted function as
arguments (through `functional_call`), so later updates of them (an optimizer step, `load_state_dict`) are
seen, and the buffers a call writes (BatchNorm's running statistics) are written back into the module after
it. One compiled program is kept per call signature: the tensors' shapes and dtypes, the other arguments'
values, the modules' training flags and their parameters' and buffers' shapes. A program is rebuilt when
something it holds as a constant changes (a tensor or Python scalar a function closes over or reads as a
global, a module's own attribute such as a flag forward tests): see `_Compiled._guard`.

Gradients flow: with grad mode on and a parameter or input requiring grad, the compiled call is recorded on
the autograd tape as one node (a `pjit` equation whose vjp is itself jitted), so `compiled(x).sum().backward()`
fills the parameters' `.grad` as eager does.

What jit cannot trace runs eagerly for that call signature, with one log line on the logger
"funcgrad.compile" saying why: Python control flow on a tensor's value, `.item()` / `bool()` / `.tolist()`,
an in-place write to an input or a parameter, random draws (dropout in training mode: they would be frozen
into the compiled program), an unsupported operation, or a function that closes over a tensor requiring
grad. With `fullgraph=True` these raise instead. Tensors a compiled function closes over without requiring
grad are constants of the compiled program. `mode`, `dynamic` and `options` are accepted and checked as
torch's; every backend of `list_backends()` (and a callable backend) compiles through jit."""
from __future__ import annotations

import functools
import logging
from typing import Any, Callable


from .._src.core.errors import ConcretizationError
from .._src.core.tree_util import tree_flatten, tree_unflatten
from .._src.interpreters.jit import jit as _jit
from ..autograd import no_grad
from ..nn.modules.module import Module
from ..nn.utils.stateless import _reparametrized
from . import _creation, _tensor
from ._dispatch import _apply_multi

__all__ = ["compile", "OptimizedModule", "InvalidBackend"]

logger = logging.getLogger("funcgrad.compile")

BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "tvm", "openxla")
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class InvalidBackend(RuntimeError):
    """torch._dynamo.exc.InvalidBackend: a backend name compile does not know."""


class _Eager(Exception):
    """Why a call signature cannot be compiled (it runs eagerly)."""


_EAGER = object()  # a cache value: run this signature eagerly
_SCALARS = frozenset((bool, int, float, complex, str, type(None)))   # guarded by value
_SKIP = frozenset((dict, set, list, tuple))    # Module's own tables (parameters, hooks, ...): not guarded


class _Compiled:
    """The compiled form of fn (a function, or a module's forward through functional_call)."""

    def __init__(self, fn: Callable, module: Module | None, fullgraph: bool, name: str) -> None:
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.name = name
        self.cache: dict = {}

    # --- the state a call reads --------------------------------------------------------------------
    def _state(self):
        """(modules, named parameters, named buffers) the call reads: the module's own, or the modules a
        function closes over."""
        if self.module is not None:
            mods = [self.module]
        else:
            mods = _closed_modules(self.fn)
        params, bufs, seen = [], [], set()
        for i, m in enumerate(mods):
            for n, p in m.named_parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    params.append((i, n, p))
            for n, b in m.named_buffers():
                if id(b) not in seen and b is not None:
                    seen.add(id(b))
                    bufs.append((i, n, b))
        return mods, params, bufs

    def __call__(self, *args, **kwargs):
        T = _tensor.Tensor
        leaves, tree = tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, T))
        if any(isinstance(x, T) and x._v is None for x in leaves):  # inside a funcgrad.func transform
            return self.fn(*args, **kwargs)
        mods, params, bufs = self._state()
        tensor_pos = [i for i, x in enumerate(leaves) if isinstance(x, T)]
        try:
            key = (tree, tuple((x.shape, x.dtype) if isinstance(x, T) else (type(x), x) for x in leaves),
                   tuple(m.training for mod in mods for m in mod.modules()),
                   tuple((i, n, p.shape, p.dtype) for i, n, p in params),
                   tuple((i, n, b.shape, b.dtype) for i, n, b in bufs))
            hash(key)
        except TypeError as e:
            return self._eager(None, f"an argument is not hashable ({e})", args, kwargs)
        entry = self.cache.get(key)
        if entry is _EAGER:
            return self.fn(*args, **kwargs)
        if entry is None or entry[0] != self._guard(mods)[0]:   # new, or a value it froze in has changed
            try:
                built = self._build(leaves, tree, tensor_pos, mods, params, bufs)
            except _Eager as e:
                return self._eager(key, str(e), args, kwargs)
            entry = self.cache[key] = (*self._guard(mods), built)   # (as the trace left them)
        return self._run(entry[2], leaves, tensor_pos, params, bufs)

    def _guard(self, mods):
        """What a compiled program holds as constants besides its arguments, as a comparable fingerprint: the
        tensors and Python scalars a function reads from its closure and globals, and the modules' own
        attributes (a flag or factor forward reads, a tensor that is not a buffer): tensors by identity,
        storage and version counter (an in-place update or a .data swap), scalars by value. A call whose
        fingerprint differs from the compiled one recompiles (torch's guards), so nothing stale is used.
        Also the objects the fingerprint names, kept alive with the entry so that their ids stay theirs."""
        T = _tensor.Tensor
        named = [("", v) for v in (() if self.module is not None else _closure_values(self.fn))]
        named += [item for mod in mods for m in mod.modules() for item in vars(m).items()]
        guard, keep = [], []
        for n, v in named:
            tv = type(v)
            if tv in _SCALARS:
                guard.append((n, tv, v))
            elif tv not in _SKIP and isinstance(v, T):
                guard.append((n, id(v), id(v._st), id(v._v), v._version))
                keep.append(v)
        return tuple(guard), keep

    def _eager(self, key, reason: str, args, kwargs):
        if self.fullgraph:
            raise RuntimeError(f"torch.compile(fullgraph=True): cannot compile {self.name} into one graph: {reason}")
        logger.warning("torch.compile: %s runs eagerly for this call signature: %s", self.name, reason)
        if key is not None:
            self.cache[key] = _EAGER
        return self.fn(*args, **kwargs)

    # --- building ----------------------------------------------------------------------------------
    def _build(self, leaves, tree, tensor_pos, mods, params, bufs):
        """Trace the call once (the jaxpr is kept by jit for later calls), checking what it cannot hold."""
        np_, nb = len(params), len(bufs)
        box: dict = {}
        statics = list(leaves)
        fn, module = self.fn, self.module

        def flat(*arrs):
            traced = [_tensor._traced(a) for a in arrs]
            before = [t._a for t in traced]
            values: list = [dict() for _ in mods]
            for (i, n, _), t in zip(params + bufs, traced):
                values[i][n] = t
            full = list(statics)
            for pos, t in zip(tensor_pos, traced[np_ + nb:]):
                full[pos] = t
            a, kw = tree_unflatten(tree, full)
            with _all_reparametrized(mods, values):
                out = module(*a, **kw) if module is not None else fn(*a, **kw)
            out_leaves, out_tree = tree_flatten(out, is_leaf=lambda x: isinstance(x, _tensor.Tensor))
            box["out_tree"] = out_tree
            box["out_static"] = [None if isinstance(x, _tensor.Tensor) else x for x in out_leaves]
            box["written"] = [t._a is not b for t, b in zip(traced, before)]
            return [x._arr() for x in out_leaves if isinstance(x, _tensor.Tensor)] + \
                [t._arr() for t in traced[np_:np_ + nb]]

        jitted = _jit(flat)
        arrays = [p._arr() for _, _, p in params] + [b._arr() for _, _, b in bufs] + \
            [leaves[i]._arr() for i in tensor_pos]
        try:
            with no_grad():
                jitted.eval_shape(*arrays)
        except _creation.TracedDrawError:
            raise _Eager("it draws random numbers (dropout in training mode, say), which a compiled program would "
                         "repeat on every call")
        except _tensor._TracedTensorError as e:
            raise _Eager(f"data-dependent Python control flow or a Python value of a tensor ({_first_line(e)})")
        except ConcretizationError as e:
            raise _Eager(f"data-dependent Python control flow or a Python value of a tensor ({_first_line(e)})")
        except Exception as e:  # noqa: BLE001 (any failure of the trace: the eager call reports it, if real)
            raise _Eager(f"tracing failed with {type(e).__name__}: {_first_line(e)}")
        written = box["written"]
        if any(written[:np_]):
            raise _Eager("it writes in place to a parameter")
        if any(written[np_ + nb:]):
            raise _Eager("it writes in place to an input tensor")
        if self.module is None and _closed_grad_tensors(self.fn):
            raise _Eager("it closes over a tensor that requires grad (pass it as an argument, or close over the "
                         "module that holds it)")

        def run(*arrs):
            return jitted(*arrs)
        run.records_on_a_tape = True  # record the jitted call itself (one pjit node), not its eager binds
        return run, box["out_tree"], box["out_static"], frozenset(i for i in range(nb) if written[np_ + i])

    def _run(self, entry, leaves, tensor_pos, params, bufs):
        run, out_tree, out_static, written_bufs = entry
        # a buffer the call writes enters as a copy: the write-back below must not change what the tape saved
        ts = [p for _, _, p in params] + [b.detach().clone() if i in written_bufs else b
                                          for i, (_, _, b) in enumerate(bufs)] + [leaves[i] for i in tensor_pos]
        res = _apply_multi("CompiledFunction", run, ts)
        n_out = sum(x is None for x in out_static)
        outs = iter(res[:n_out])
        if written_bufs:
            new = res[n_out:]
            with no_grad():
                for i in sorted(written_bufs):
                    bufs[i][2].copy_(new[i])
        return tree_unflatten(out_tree, [next(outs) if s is None else s for s in out_static])


def _first_line(e: BaseException) -> str:
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


class _all_reparametrized:
    """functional_call's swap of parameters and buffers, over several modules at once."""

    def __init__(self, mods, values) -> None:
        self.cms = [_reparametrized(m, v) for m, v in zip(mods, values)]

    def __enter__(self):
        for cm in self.cms:
            cm.__enter__()

    def __exit__(self, *exc):
        for cm in reversed(self.cms):
            cm.__exit__(*exc)


def _closure_values(fn) -> list:
    """The values fn reads from its closure and its globals (and the object of a bound method)."""
    out = []
    self_ = getattr(fn, "__self__", None)
    if self_ is not None:
        out.append(self_)
    f = getattr(fn, "__func__", fn)
    for cell in getattr(f, "__closure__", None) or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    code, g = getattr(f, "__code__", None), getattr(f, "__globals__", None)
    if code is not None and g is not None:
        out.extend(g[n] for n in code.co_names if n in g)
    return out


def _closed_modules(fn) -> list:
    return [v for v in _closure_values(fn) if isinstance(v, Module)]


def _closed_grad_tensors(fn) -> bool:
    return any(isinstance(v, _tensor.Tensor) and v.requires_grad for v in _closure_values(fn))


class OptimizedModule(Module):
    """The compiled form of a Module (torch._dynamo's OptimizedModule): calling it runs the compiled
    forward; `_orig_mod` is the module, whose attributes it also shows."""

    def __init__(self, mod: Module, compiled: _Compiled) -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = compiled
        self.training = mod.training

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled"](*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def train(self, mode: bool = True):
        self._orig_mod.train(mode)
        self.training = mode
        return self


def _check(backend, mode, options) -> None:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(backend) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()` for available "
                             "backends.")


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: str | Callable = "inductor", mode: str | None = None, options: dict | None = None,
            disable: bool = False) -> Any:
    """Compile a Module or function through funcgrad.jit (see the module docstring); with no model, a
    decorator. disable=True returns model unchanged.

    >>> fast = torch.compile(model)
    >>> loss = fast(x).sum(); loss.backward()    # model's parameters get their .grad
    """
    _check(backend, mode, options)
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, _Compiled(model, model, fullgraph, type(model).__name__))
    if not callable(model):
        raise RuntimeError("torch.compile: model must be a torch.nn.Module or a function, got "
                           f"{type(model).__name__}")
    compiled = _Compiled(model, None, fullgraph, getattr(model, "__name__", "function"))

    @functools.wraps(model)
    def compiled_fn(*args, **kwargs):
        return compiled(*args, **kwargs)
    compiled_fn._torchdynamo_orig_callable = model
    return compiled_fn
