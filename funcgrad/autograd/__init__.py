"""funcgrad.autograd: the define-by-run engine behind Tensor.backward(), as torch.autograd.

    x = funcgrad.tensor([1., 2.], requires_grad=True)
    (x * x).sum().backward()        # x.grad == [2., 4.]
    funcgrad.autograd.grad(y, x, create_graph=True)

Every derivative comes from the primitives' vjp rules (see `graph`); grad modes are thread-local.
"""
from __future__ import annotations

from . import engine, graph  # noqa: F401
from .function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                        no_grad, set_grad_enabled)
from .graph import Node  # noqa: F401
from .variable import Variable  # noqa: F401


def _tensor_mod():
    return graph._TENSOR


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    T = _tensor_mod()
    res = []
    for out, g in zip(outputs, grad_outputs):
        if g is None:
            if out._rg:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._np_dtype().kind not in "fc" and out._np_dtype().name != "bfloat16":
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                import numpy as np
                res.append(T._make(np.ones(out.shape, out._np_dtype())))
            else:
                res.append(None)
        else:
            if not isinstance(g, T.Tensor):
                g = T._make(__import__("numpy").array(g, out._np_dtype()))
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and output[0] has "
                                   f"a shape of {out.shape}.")
            if g._np_dtype() != out._np_dtype():
                g = g.to(out.dtype)
            res.append(g)
    return res


def _roots(outputs, grads):
    roots, seeds = [], []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if not o._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            continue
        fn = o._grad_fn_now()
        roots.append((fn, o._onr) if fn is not None else (o._acc_node(), 0))
        seeds.append(g)
    return roots, seeds


def _as_list(x):
    T = _tensor_mod()
    if isinstance(x, T.Tensor):
        return [x]
    return list(x)


def _seeds(grads, outputs) -> list:
    """The given gradients of the outputs as a list (None: one None, i.e. the default, per output)."""
    return [None] * len(outputs) if grads is None else _as_list(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate d(sum of tensors·grad_tensors)/d(leaf) into each leaf's .grad."""
    tensors = _as_list(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _seeds(grad_tensors, tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _as_list(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(tensors, grad_tensors)
    roots, seeds = _roots(tensors, grads)
    engine.run_backward(roots, seeds, retain_graph, create_graph, accumulate_into=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs with respect to inputs (returned, not accumulated into .grad)."""
    T = _tensor_mod()
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    grad_outputs = _seeds(grad_outputs, outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} and "
                           f"{len(outputs)}")
    if retain_graph is None:
        retain_graph = create_graph
    for i, x in enumerate(inputs):
        if not x._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs)
    roots, seeds = _roots(outputs, grads)
    capture = {}
    for i, x in enumerate(inputs):
        fn = x._grad_fn_now()
        key = (fn, x._onr) if fn is not None else (x._acc_node(), 0)
        capture.setdefault(key, i)
    res = engine.run_backward(roots, seeds, retain_graph, create_graph, capture=capture)
    out = []
    for i, x in enumerate(inputs):
        fn = x._grad_fn_now()
        key = (fn, x._onr) if fn is not None else (x._acc_node(), 0)
        g = res[capture[key]] if res else None
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                import numpy as np
                g = T._make(np.zeros(x.shape, x._np_dtype()))
        elif not create_graph and g._rg:
            g = g.detach()
        out.append(g)
    return tuple(out)


from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,  # noqa: E402,F401
                           set_detect_anomaly)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401
from . import functional  # noqa: E402,F401

__all__ = ["Function", "FunctionCtx", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "detect_anomaly", "set_detect_anomaly", "gradcheck",
           "gradgradcheck", "functional", "once_differentiable", "Variable"]
from . import forward_ad  # noqa: E402,F401
from . import profiler  # noqa: E402,F401 (torch.autograd.profiler)
