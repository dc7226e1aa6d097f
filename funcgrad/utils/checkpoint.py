"""torch.utils.checkpoint: trade compute for memory by re-running a segment in the backward pass.

The segment runs under no_grad, so none of its intermediate values are kept; backward runs it again
with grad enabled (restoring the random state it saw the first time, so dropout masks repeat) and
backpropagates through that recomputation. Parameters of a Module segment are explicit inputs of the
recorded node, so `autograd.grad` with respect to them works; leaves the segment reaches only through a
closure receive their gradient by accumulation into `.grad` during that inner backward (torch's
reentrant behaviour).
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Iterable

from ..autograd import backward as _backward
from ..autograd import grad as _grad
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from .._torch._creation import get_rng_state, set_rng_state
from .._torch._tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn", "detach_variable",
           "set_checkpoint_early_stop", "CheckpointError", "CheckpointFunction"]


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not reproduce the forward pass."""


def noop_context_fn():
    """The default context_fn of checkpoint: two null contexts (forward, recomputation)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def set_checkpoint_early_stop(enable: bool):
    """Accepted for compatibility: recomputation always runs the whole segment here."""
    return contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Each tensor of a tuple detached, keeping its requires_grad (checkpoint's helper for recomputation)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


def _module_params(fn) -> list:
    """The parameters of a Module (or of the Module behind a bound method) that require grad."""
    from ..nn.modules.module import Module
    owner = fn if isinstance(fn, Module) else getattr(fn, "__self__", None)
    if isinstance(owner, Module):
        return [p for p in owner.parameters() if p.requires_grad]
    return []


def _outputs(out) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, Tensor)]
    raise TypeError(f"checkpoint: the checkpointed function must return a Tensor or a tuple of Tensors, "
                    f"got {type(out).__name__}")


class CheckpointFunction(Function):
    """The reentrant checkpoint (use_reentrant=True) as one autograd Function, torch's CheckpointFunction: the
    forward runs without recording, the backward runs it again (with the saved RNG state) and differentiates."""

    @staticmethod
    def forward(ctx, run, n_args, preserve_rng, context_fn, *inputs):
        ctx.run = run
        ctx.n_args = n_args
        ctx.context_fn = context_fn
        ctx.rng_state = get_rng_state() if preserve_rng else None
        ctx.save_for_backward(*[x for x in inputs if isinstance(x, Tensor)])
        ctx.inputs = inputs
        fwd_ctx, _ = context_fn()
        with no_grad(), fwd_ctx:
            out = run(*inputs[:n_args])
        ctx.single = isinstance(out, Tensor)
        return out

    @staticmethod
    def backward(ctx, *grads):
        ctx.saved_tensors  # raises if an input was modified in place since the forward pass
        inputs = ctx.inputs
        args = detach_variable(tuple(inputs[:ctx.n_args]))
        params = list(inputs[ctx.n_args:])
        _, recompute_ctx = ctx.context_fn()
        saved = get_rng_state() if ctx.rng_state is not None else None
        try:
            if saved is not None:
                set_rng_state(ctx.rng_state)
            with enable_grad(), recompute_ctx:
                out = ctx.run(*args)
        finally:
            if saved is not None:
                set_rng_state(saved)
        outs = _outputs(out)
        if len(outs) != len(grads):
            raise CheckpointError("torch.utils.checkpoint: the recomputed forward returned a different number "
                                  f"of tensors ({len(outs)}) than the original one ({len(grads)})")
        pairs = [(o, g) for o, g in zip(outs, grads) if o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        wrt = [a for a in args if isinstance(a, Tensor) and a.requires_grad] + params
        wrt_ids = {id(t) for t in wrt}
        roots, seeds = [o for o, _ in pairs], [g for _, g in pairs]
        # Leaves reached through a closure (not arguments, not the Module's parameters) accumulate here.
        others = _closure_leaves(roots, wrt_ids)
        got = dict(zip(map(id, wrt), _grad(roots, wrt, seeds, retain_graph=bool(others),
                                           allow_unused=True))) if wrt else {}
        if others:
            _backward(roots, seeds, inputs=others)
        res = [None, None, None, None]
        res += [got.get(id(a)) if isinstance(a, Tensor) else None for a in args]
        res += [got.get(id(p)) for p in params]
        return tuple(res)


def _closure_leaves(outs: list, known: set) -> list:
    """Leaf tensors requiring grad that the recomputed graph reaches, other than `known` ones."""
    found, seen, stack = [], set(), [o.grad_fn for o in outs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None and id(var) not in known and id(var) not in {id(f) for f in found}:
            found.append(var)
        stack.extend(n for n, _ in getattr(node, "next_functions", ()))
    return found


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, early_stop: bool = True, **kwargs) -> Any:
    """Run `function(*args, **kwargs)` without keeping its intermediate values; recompute them in backward."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "use_reentrant=False is recommended; the default is use_reentrant=True.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if kwargs:
        run = lambda *a: function(*a, **kwargs)  # noqa: E731
    else:
        run = function
    params = _module_params(function)
    if not is_grad_enabled():
        return run(*args)
    if not (params or any(isinstance(a, Tensor) and a.requires_grad for a in args)):
        if use_reentrant:
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
            with no_grad():
                return run(*args)
        return run(*args)  # only closure leaves can need grad: keep the graph (nothing to recompute from)
    return CheckpointFunction.apply(run, len(args), preserve_rng_state, context_fn, *args, *params)


def checkpoint_sequential(functions: Iterable | Any, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run a Sequential (or list of modules) in `segments` chunks, checkpointing all but the last."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                      "passed explicitly.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn.modules.container import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    n = len(functions)
    size = n // segments
    end = -1
    from ..nn.modules.container import Sequential as _Seq
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        seg = _Seq(*functions[start:end + 1])
        input = checkpoint(seg, input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return _Seq(*functions[end + 1:])(input)
