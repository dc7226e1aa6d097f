"""torch.fx's symbolic tracing: `symbolic_trace(module_or_fn)` runs the program on Proxies and records a Graph.

funcgrad's torch-face functions do not dispatch on `__torch_function__`, so while a trace runs (and while a
Transformer rebuilds a graph) the callables of the torch namespaces (`funcgrad.*` as `torch.*`,
`funcgrad.nn.functional.*`, `linalg`, `fft`, `special`) are replaced by recording wrappers: a call whose
arguments hold a Proxy becomes a call_function node of the original function; any other call runs the
original. The same is done for the traced function's globals that name one of those callables (`from funcgrad
import relu`), for `math`'s functions, and for the functions given to `wrap`. The wrappers compare equal to
(and hash as) the functions they stand for, and nodes always record the original, so `node.target ==
torch.add` holds during and after a trace. Installing and removing them is serialised by a lock; another
thread calling a wrapper meanwhile just runs the original. `Module.__call__` and `Module.__getattr__` are
routed through the tracer of the calling thread only (leaf modules become call_module nodes, parameters
get_attr nodes)."""
from __future__ import annotations

import builtins
import functools
import inspect
import math
import threading
import types
from typing import Any, Callable


from .._torch._tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ..nn.parameter import Parameter
from .graph import Graph
from .graph_module import GraphModule
from .node import torch_namespace, unwrap
from .proxy import ParameterProxy, Proxy, TraceError, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "TraceError"]

_NAMESPACES = ("", "nn.functional", "linalg", "fft", "special")
# facade names that are not operations on values (transforms, switches): never recorded
_NOT_OPS = frozenset({"jit", "compile", "vmap", "cond", "grad", "no_grad", "enable_grad", "set_grad_enabled",
                      "inference_mode", "manual_seed", "seed", "load", "save"})


class _Recording:
    """Stands for function `orig` during a trace: records a call whose arguments hold a Proxy, runs any other.
    Equal to orig and hashed as orig, so tables keyed by torch functions keep working."""

    def __init__(self, orig: Callable) -> None:
        self.__fx_orig__ = orig
        self.__fx_wrapped__ = False  # a wrap() / autowrap function: its nodes are marked meta["is_wrapped"]
        functools.update_wrapper(self, orig)

    def __call__(self, *args, **kwargs):
        tracer = _proxy_tracer(args) or _proxy_tracer(kwargs)
        if tracer is None:
            return self.__fx_orig__(*args, **kwargs)
        proxy = tracer.create_proxy("call_function", self.__fx_orig__, args, kwargs)
        if self.__fx_wrapped__:
            proxy.node.meta["is_wrapped"] = True
        return proxy

    def __eq__(self, other) -> bool:
        return unwrap(other) is self.__fx_orig__

    def __hash__(self) -> int:
        return hash(self.__fx_orig__)

    def __repr__(self) -> str:
        return repr(self.__fx_orig__)

    def __getattr__(self, name: str):
        return getattr(self.__fx_orig__, name)


def _proxy_tracer(a):
    """The tracer of the first Proxy in a (nested tuples, lists, dicts), or None."""
    if isinstance(a, Proxy):
        return a.tracer
    if isinstance(a, (tuple, list)):
        for x in a:
            t = _proxy_tracer(x)
            if t is not None:
                return t
    elif isinstance(a, dict):
        for x in a.values():
            t = _proxy_tracer(x)
            if t is not None:
                return t
    return None


# --- installing the wrappers --------------------------------------------------------------------------------

_lock = threading.RLock()
_local = threading.local()  # .tracers: the stack of this thread's active tracers
_wrapped: list = []  # (globals dict, name) registered by wrap()
_installed = {"depth": 0, "saved": []}
_originals: dict = {}  # id(original function) -> its _Recording (built at the first trace)


def _namespace_functions():
    """(module, name, function) for every operation of the torch namespaces."""
    for ns in _NAMESPACES:
        mod = torch_namespace()
        for part in ns.split(".") if ns else ():
            mod = getattr(mod, part)
        for k, v in list(vars(mod).items()):
            if k.startswith("_") or k in _NOT_OPS or isinstance(v, _Recording):
                continue
            if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, functools.partial)):
                yield mod, k, v


def _recording(f, wrapped: bool = False):
    r = _originals.get(id(f))
    if r is None or r.__fx_orig__ is not f:
        r = _originals[id(f)] = _Recording(f)
    r.__fx_wrapped__ = r.__fx_wrapped__ or wrapped
    return r


def _set(d: dict, name: str, value, saved: list) -> None:
    """d[name] = value (d a dict, or a class or module whose attribute is set), remembered in saved."""
    if isinstance(d, dict):
        saved.append((d, name, d.get(name, _MISSING)))
        d[name] = value
    else:
        saved.append((d, name, vars(d).get(name, _MISSING)))
        setattr(d, name, value)


_MISSING = object()


def _restore(saved: list) -> None:
    for d, name, old in reversed(saved):
        if isinstance(d, dict):
            if old is _MISSING:
                d.pop(name, None)
            else:
                d[name] = old
        elif old is _MISSING:
            delattr(d, name)
        else:
            setattr(d, name, old)


class _Patched:
    """The context of one trace: the namespace wrappers (installed by the outermost trace), the traced
    function's globals and wrap()'s functions, and this thread's tracer."""

    def __init__(self, tracer: "Tracer | None", fn_globals: dict | None, extra: tuple = ()) -> None:
        self.tracer, self.fn_globals, self.extra = tracer, fn_globals, extra

    def __enter__(self):
        _lock.acquire()
        try:
            if _installed["depth"] == 0:
                saved = _installed["saved"] = []
                for mod, k, v in _namespace_functions():
                    _set(mod, k, _recording(v), saved)
                _set(Module, "__call__", _module_call, saved)
                _set(Module, "__getattr__", _module_getattr, saved)
            _installed["depth"] += 1
            self.saved = []
            if self.fn_globals is not None:
                for k, v in list(self.fn_globals.items()):
                    if isinstance(v, _Recording):
                        continue
                    auto = getattr(math, k, None) is v and callable(v) or any(v is e for e in self.extra)
                    if auto or id(v) in _originals and _originals[id(v)].__fx_orig__ is v:
                        _set(self.fn_globals, k, _recording(v, auto), self.saved)
            for mod in getattr(self.tracer, "autowrap_modules", ()):  # (math.sqrt(x) records too, as fx's)
                for k, v in list(vars(mod).items()):
                    if not k.startswith("_") and isinstance(v, (types.BuiltinFunctionType, types.FunctionType)):
                        _set(mod, k, _recording(v, True), self.saved)
            for g, name in _wrapped:
                f = g.get(name, getattr(builtins, name, None))
                if f is not None and not isinstance(f, _Recording):
                    _set(g, name, _recording(f, True), self.saved)
            stack = getattr(_local, "tracers", None)
            if stack is None:
                stack = _local.tracers = []
            stack.append(self.tracer)
        except BaseException:
            _lock.release()
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            _local.tracers.pop()
            _restore(self.saved)
            _installed["depth"] -= 1
            if _installed["depth"] == 0:
                _restore(_installed["saved"])
        finally:
            _lock.release()


def _current():
    stack = getattr(_local, "tracers", None)
    return stack[-1] if stack else None


_orig_call = Module.__call__
_orig_getattr = Module.__getattr__


def _module_call(self, *args, **kwargs):
    tracer = _current()
    if tracer is None:
        return _orig_call(self, *args, **kwargs)
    return tracer.call_module(self, lambda *a, **k: _orig_call(self, *a, **k), args, kwargs)


def _module_getattr(self, name):
    val = _orig_getattr(self, name)
    tracer = _current()
    if tracer is None:
        return val
    return tracer.getattr(name, val, tracer._param_proxies)


def wrap(fn_or_name):
    """Record calls of this module-level function (or builtin, by name: `fx.wrap("len")`) as call_function
    nodes instead of tracing through them. Call it at the top level of the module that uses the function."""
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    if callable(fn_or_name):
        name = fn_or_name.__name__
    elif isinstance(fn_or_name, str):
        name = fn_or_name
    else:
        raise AssertionError("wrap: expected a function or the name of a global function, got "
                             f"{type(fn_or_name).__name__}")
    _wrapped.append((frame.f_globals, name))
    return fn_or_name


# --- the tracer --------------------------------------------------------------------------------------------

class Tracer(TracerBase):
    """Records a Module's forward (or a function) as a Graph (torch.fx.Tracer). Subclass it to change what is
    a leaf module (`is_leaf_module`), how a module call is recorded (`call_module`), or the nodes made
    (`create_proxy`, `create_arg`)."""

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        self.autowrap_modules = tuple(autowrap_modules)
        self.autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.scope = None
        self.module_stack: dict = {}
        self.node_name_to_scope: dict = {}
        self.submodule_paths = None
        self._param_proxies: dict = {}
        self.tensor_attrs: dict = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """funcgrad.nn's own modules (but Sequential) are leaves: called, not traced through."""
        return type(m).__module__.startswith("funcgrad.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        if self.submodule_paths is None:
            self.submodule_paths = {id(m): n for n, m in self.root.named_modules()}
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A call_module node for a leaf module; otherwise trace through forward."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A module attribute read during the trace: parameters become get_attr proxies."""
        if isinstance(attr_val, Parameter):
            for n, p in self.root.named_parameters():
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        if self.param_shapes_constant:
                            parameter_proxy_cache[n] = self.create_proxy(
                                "get_attr", n, (), {},
                                proxy_factory_fn=lambda node, n=n, p=p: ParameterProxy(self, node, n, p))
                        else:
                            parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
        return attr_val

    def create_arg(self, a: Any) -> Any:
        """Parameters, buffers and submodules of the root become get_attr nodes; other tensors are stored on
        the root as `_tensor_constant<i>` and read the same way."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            for n, p in self.root.named_modules():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, Tensor):
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        """The Graph of root's forward (or of the function root) called on Proxies; the parameters named in
        concrete_args take those values instead (they stay inputs of forward, with the value as default)."""
        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self_arg = (root,)
        else:
            self.root = Module()
            fn = root
            self_arg = ()
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = None
        self._param_proxies = {}
        self.tensor_attrs = {}
        for n, t in self.root.named_buffers():
            self.tensor_attrs.setdefault(id(t), n)
        for mname, m in self.root.named_modules():
            for k, v in vars(m).items():
                if isinstance(v, Tensor) and not isinstance(v, Parameter):
                    self.tensor_attrs.setdefault(id(v), f"{mname}.{k}" if mname else k)
        fn_globals = getattr(inspect.unwrap(fn), "__globals__", None)
        with _Patched(self, fn_globals, self.autowrap_functions):
            args = self._root_args(fn, bool(self_arg), concrete_args or {})
            result = fn(*self_arg, *args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=getattr(fn, "__annotations__", {}).get("return"))
        self.submodule_paths = None
        return self.graph

    def _root_args(self, fn, skip_self: bool, concrete_args: dict) -> list:
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1 if skip_self else 0:]
        unknown = set(concrete_args) - {p.name for p in params}
        if unknown:
            raise RuntimeError(f"symbolic_trace: concrete_args names {sorted(unknown)}, which are not parameters "
                               f"of {getattr(fn, '__qualname__', fn)}")
        args = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
                raise TraceError(f"symbolic_trace: the parameter {p} of {getattr(fn, '__qualname__', fn)} is "
                                 "not positional; funcgrad.fx traces positional parameters only")
            if p.name in concrete_args:
                self.graph.placeholder(p.name, default_value=concrete_args[p.name])
                args.append(concrete_args[p.name])
                continue
            # (through create_proxy, as fx's, so a Tracer subclass overriding it sees the inputs too)
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            args.append(self.create_proxy("placeholder", p.name, default, {},
                                          type_expr=getattr(fn, "__annotations__", {}).get(p.name)))
        return args


def symbolic_trace(root, concrete_args: dict | None = None) -> GraphModule:
    """Trace a Module or function into a GraphModule whose forward runs the recorded graph."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


def _transforming(tracer: TracerBase):
    """The trace context (wrappers installed, this thread's tracer) for a Transformer's run."""
    return _Patched(tracer, None)
