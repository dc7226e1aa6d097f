"""nn.Module: registration of parameters, buffers and submodules, state dicts, modes and hooks (PyTorch's API)."""
from __future__ import annotations

import collections
import collections.abc
import itertools
import os
import sys
import warnings

import numpy as np

from ..._torch._creation import tensor as _tensor
from ..._torch._dtype import bfloat16, device as _device, dtype as _dtype, float16, float32, float64
from ..._torch._tensor import Tensor
from ...autograd.function import Function
from ...autograd.graph import RemovableHandle
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ..parameter import Parameter

class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns; shown as torch shows it (notebooks print it after loading)."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")

    __str__ = __repr__


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line for line in s]
    return first + "\n" + "\n".join(s)


def _as_tensor(v):
    """A checkpoint entry as a Tensor: funcgrad Tensors as they are; torch tensors and arrays converted."""
    if isinstance(v, Tensor):
        return v
    try:
        if hasattr(v, "detach") and hasattr(v, "numpy"):
            v = v.detach().cpu().numpy()
        return _tensor(np.asarray(v))
    except Exception:
        return None


# Global hooks for all modules (torch.nn.modules.module.register_module_*_hook): they run before each module's
# own hooks. _global_any holds every global hook, so Module.__call__'s fast path tests one dict.
_global_any: dict = {}
_global_forward_pre_hooks: dict = {}
_global_forward_hooks: dict = {}
_global_forward_hooks_always_called: set = set()
_global_forward_hooks_with_kwargs: set = set()
_global_backward_pre_hooks: dict = {}
_global_backward_hooks: dict = {}


def _add_global_hook(store: dict, hook, flags=()) -> RemovableHandle:
    h = RemovableHandle(store, extra_dict=[_global_any, *flags])
    store[h.id] = _global_any[h.id] = hook
    for f in flags:
        f.add(h.id)
    return h


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """A forward pre-hook hook(module, args) for every module (before each module's own)."""
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
    """A forward hook hook(module, args, output) for every module (before each module's own)."""
    flags = ([_global_forward_hooks_with_kwargs] if with_kwargs else []) + (
        [_global_forward_hooks_always_called] if always_call else [])
    return _add_global_hook(_global_forward_hooks, hook, flags)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """A backward pre-hook hook(module, grad_output) for every module (before each module's own)."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """A backward hook hook(module, grad_input, grad_output) for every module (before each module's own)."""
    return _add_global_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated torch name: registered here as a full backward hook."""
    return register_module_full_backward_hook(hook)


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _user_stacklevel() -> int:
    """The warnings.warn stacklevel, for the function calling this, of the innermost frame outside funcgrad:
    a warning raised inside the backward engine then points at the user's .backward() line, as torch's do."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f, level = f.f_back, level + 1
    return level


def _hook_function(backward, materialize=True):
    """An identity autograd.Function over any number of tensors whose backward is `backward(grads)`."""

    class BackwardHookFunction(Function):
        @staticmethod
        def forward(ctx, *tensors):
            ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
            ctx.set_materialize_grads(materialize)
            return tensors

        @staticmethod
        def backward(ctx, *grads):
            return backward(grads)
    return BackwardHookFunction


class _BackwardHook:
    """Full backward hooks of one module call, as torch's: identity nodes on the tensor inputs and outputs.
    The output node sees grad_output (and runs the backward pre-hooks); the input node sees grad_input and
    runs the hooks, which may replace it. If no input requires grad the hooks run at the output node with
    grad_input all None."""

    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0
        self.inputs_require_grad = False

    def wrap_inputs(self, args):
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(pos)
        self.inputs_require_grad = is_grad_enabled() and any(args[i].requires_grad for i in pos)
        if not self.inputs_require_grad:
            return args
        new = _hook_function(self._on_grad_input).apply(*[args[i] for i in pos])
        args = list(args)
        for i, t in zip(pos, new):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple) or not is_grad_enabled():
            return out
        pos = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        if not any(outs[i].requires_grad for i in pos):
            return out
        fn = _hook_function(self._on_grad_output, materialize=False)
        new = fn.apply(*[outs[i] for i in pos])
        outs = list(outs)
        for i, t in zip(pos, new):
            outs[i] = t
        return outs[0] if single else tuple(outs)

    def _on_grad_output(self, grads):
        m = self.module
        grads = _through_hooks([*_global_backward_pre_hooks.values(), *m._backward_pre_hooks.values()],
                               tuple(grads), lambda h, g: h(m, g), "Backward pre hook", "grad_output")
        self.grad_output = grads
        if not self.inputs_require_grad:
            if m._backward_hooks or _global_backward_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=_user_stacklevel())
            self._run_hooks((None,) * self.n_inputs)
        return grads

    def _on_grad_input(self, grads):
        return self._run_hooks(tuple(grads))

    def _run_hooks(self, grad_input):
        m = self.module
        return _through_hooks([*_global_backward_hooks.values(), *m._backward_hooks.values()], grad_input,
                              lambda h, g: h(m, g, self.grad_output), "Backward hook", "grad_input")


def _changed_settings(module, defaults: dict) -> str:
    """", name=value" for each setting of `module` named in `defaults` (name: default, in the repr's order) whose
    value is not its default, as torch's extra_reprs add them (None and bools compared by identity, others by ==);
    a setting the module lacks counts as its default."""
    s = ""
    for name, default in defaults.items():
        value = getattr(module, name, default)
        if value is not default if default is None or isinstance(default, bool) else value != default:
            s += f", {name}={value}"
    return s


def _through_hooks(hooks, grads: tuple, call, hook: str, what: str) -> tuple:
    """grads as the hooks leave them: call(h, grads) returns None (no change) or grads' replacement, a tensor or
    a tuple or list of as many (else torch's RuntimeError, naming the `hook` kind and `what` grads are)."""
    for h in hooks:
        r = call(h, grads)
        if r is not None:
            r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            if len(r) != len(grads):
                raise RuntimeError(f"{hook} returned an invalid number of {what}, got {len(r)}, but expected "
                                   f"{len(grads)}")
            grads = r
    return grads


class Module:
    """Base class of all neural network modules, as torch.nn.Module."""
    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = {}
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()
        d["_forward_pre_hooks"] = {}
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_backward_hooks"] = {}
        d["_backward_pre_hooks"] = {}
        d["_state_dict_hooks"] = {}
        d["_state_dict_pre_hooks"] = {}
        d["_load_state_dict_pre_hooks"] = {}
        d["_load_state_dict_post_hooks"] = {}

    forward = None

    def __call__(self, *args, **kwargs):
        fwd = self.forward
        if fwd is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_any):
            return fwd(*args, **kwargs)
        return self._call_with_hooks(fwd, args, kwargs)

    def _call_with_hooks(self, fwd, args, kwargs):
        for hid, h in [*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
            if hid in self._forward_pre_hooks_with_kwargs:
                r = h(self, args, kwargs)
                if r is not None:
                    if not (isinstance(r, tuple) and len(r) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {r}.")
                    args, kwargs = r
            else:
                r = h(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if (self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            bw = _BackwardHook(self)
            args = bw.wrap_inputs(args)
        try:
            out = fwd(*args, **kwargs)
        except Exception:
            for hid, h in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
                if hid in self._forward_hooks_always_called or hid in _global_forward_hooks_always_called:
                    try:
                        self._run_forward_hook(hid, h, args, kwargs, None)
                    except Exception:
                        pass
            raise
        for hid, h in [*_global_forward_hooks.items(), *self._forward_hooks.items()]:
            r = self._run_forward_hook(hid, h, args, kwargs, out)
            if r is not None:
                out = r
        if bw is not None:
            out = bw.wrap_outputs(out)
        return out

    def _run_forward_hook(self, hid, h, args, kwargs, out):
        if hid in self._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
            return h(self, args, kwargs, out)
        return h(self, args, out)

    def _add_hook(self, store, hook, prepend=False, flags=()):
        h = RemovableHandle(store, extra_dict=list(flags))
        store[h.id] = hook
        if prepend:
            store_items = list(store.items())
            store.clear()
            store[h.id] = hook
            store.update((k, v) for k, v in store_items if k != h.id)
        for flag_set in flags:
            flag_set.add(h.id)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) (or (module, args, kwargs, output) with_kwargs) after forward."""
        flags = ([self._forward_hooks_with_kwargs] if with_kwargs else []) + (
            [self._forward_hooks_always_called] if always_call else [])
        return self._add_hook(self._forward_hooks, hook, prepend, flags)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) (or (module, args, kwargs) with_kwargs) before forward; may replace the inputs."""
        flags = [self._forward_pre_hooks_with_kwargs] if with_kwargs else []
        return self._add_hook(self._forward_pre_hooks, hook, prepend, flags)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) once the gradients w.r.t. the module's inputs are known;
        it may return a replacement grad_input."""
        self._backward_hook_kind(True)
        return self._add_hook(self._backward_hooks, hook, prepend)

    def _backward_hook_kind(self, full: bool) -> None:
        """torch refuses regular and full backward hooks on one module."""
        if self._backward_hooks and self.__dict__.get("_is_full_backward_hook", full) != full:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) before the gradients w.r.t. the inputs are computed; it may return a
        replacement grad_output."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated torch API: registered as a full backward hook, with torch's FutureWarning."""
        self._backward_hook_kind(False)
        warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=2)
        return self._add_hook(self._backward_hooks, hook)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before this module's entries are written into a state_dict."""
        return self._add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after; may edit the state_dict in place."""
        return self._add_hook(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        return self._add_hook(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict; may edit the key lists in place."""
        return self._add_hook(self._load_state_dict_post_hooks, hook)

    # --- registration ---------------------------------------------------------------------------------
    def _check_name(self, name, kind):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name, param):
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly.")
        else:
            self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(mod._get_name() + " has no parameter `" + name + "`")
        return mod._parameters[name]

    def __getattr__(self, name):
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if k in d and name in d[k]:
                return d[k][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*dicts):
            for dd in dicts:
                if name in dd:
                    if dd is d:
                        del d[name]
                    else:
                        dd.pop(name)
        params = d.get("_parameters")
        if getattr(value, "_is_buffer", False):  # nn.Buffer(t): registered as a buffer
            remove_from(d, params or {}, d.get("_modules") or {})
            self.register_buffer(name, value, persistent=value._buffer_persistent)
            return
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, d["_buffers"], d["_modules"])
            d["_non_persistent_buffers_set"].discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(d, d["_parameters"], d["_buffers"])
                d["_non_persistent_buffers_set"].discard(name)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(torch.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for k in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[k]:
                del self.__dict__[k][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(dir(type(self))) | set(self.__dict__) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # --- iteration ------------------------------------------------------------------------------------
    def _named_members(self, get, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mp, m in mods:
            for k, v in get(m):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (mp + ("." if mp else "") + k, v)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    # --- state ----------------------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name (detached unless keep_vars), as torch's."""
        if args:
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            r = hook(self, destination, prefix, local_metadata)
            if r is not None:
                destination = r
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        extra = getattr(type(self), "get_extra_state", None)
        if extra is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from state_dict (torch Tensors and arrays too); strict reports
        missing and unexpected keys as torch does. Returns (missing_keys, unexpected_keys)."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)

        def load(module, local, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    cp = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(cp)}, cp)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in list(module._load_state_dict_post_hooks.values()):
                hook(module, keys)
        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        assign = local_metadata.get("assign_to_params_buffers", False)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, cur in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            v = _as_tensor(state_dict[key])
            if v is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f'Tensor-like object from checkpoint but received {type(state_dict[key])}')
                continue
            if tuple(v.shape) != tuple(cur.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {v.shape} from checkpoint, "
                                  f"the shape in current model is {cur.shape}.")
                continue
            try:
                if assign:
                    if name in self._parameters:
                        setattr(self, name, v if isinstance(v, Parameter) else Parameter(v, cur.requires_grad))
                    else:
                        self._buffers[name] = v
                else:
                    with no_grad():
                        cur.copy_(v)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{cur.shape} and whose dimensions in the checkpoint are {v.shape}, an exception "
                                  f"occurred : {ex.args}.")
        extra_key = prefix + "_extra_state"
        if getattr(type(self), "set_extra_state", None) is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local:
                        unexpected_keys.append(key)

    # --- modes and bulk operations ----------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def compile(self, *args, **kwargs):
        """torch's Module.compile: compile this module's forward in place. Here the module is left as it is
        (compiling in place would add a check to every module call): `torch.compile(module)` returns the
        compiled module. Returns None, as torch's."""
        from ..._torch._compile import compile as _compile  # (the compiler builds on Module: taken when called)
        _compile(self, *args, **kwargs)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        """Apply fn to every parameter, gradient and buffer. Parameters keep their identity (their .data is
        replaced, as torch does by default) so optimisers holding them stay valid."""
        for m in self.children():
            m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                p.data = new
            if p.grad is not None:
                with no_grad():
                    g = fn(p.grad)
                if g is not p.grad:
                    p.grad = g
        for key, b in self._buffers.items():
            if b is not None:
                self._buffers[key] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Move/cast parameters and buffers: to(device), to(dtype), to(device, dtype), to(tensor); only
        floating-point and complex tensors change dtype, as in torch."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        non_blocking = kwargs.pop("non_blocking", False)
        tensor = kwargs.pop("tensor", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        rest = list(args)
        if rest and isinstance(rest[0], Tensor):
            tensor = rest.pop(0)
        if tensor is not None:
            device, dtype = tensor.device, tensor.dtype
        for a in rest:
            if isinstance(a, bool):
                non_blocking = a
            elif isinstance(a, _dtype):
                dtype = a
            elif isinstance(a, (str, int, _device)):
                device = a
            else:
                raise TypeError(f"to() received an invalid combination of arguments - got {type(a).__name__}")
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            dt = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            if device is None and dt is None:
                return t
            return t.to(device=device, dtype=dt, non_blocking=non_blocking)
        return self._apply(convert)

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(float32)

    def double(self):
        return self._cast_floating(float64)

    def half(self):
        return self._cast_floating(float16)

    def bfloat16(self):
        return self._cast_floating(bfloat16)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def share_memory(self):
        """Move every parameter and buffer into shared memory (for torch.multiprocessing)."""
        return self._apply(lambda t: t.share_memory_())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    # --- repr -----------------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            child_lines.append("(" + key + "): " + _addindent(repr(module), 2))
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
