"""torch.func.linearize and stack_module_state (installed into funcgrad.func)."""
from __future__ import annotations

from .transforms import linearize as _linearize


def linearize(func, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) is the Jacobian-vector product at primals."""
    from . import func as _f
    out, lin = _linearize(_f._wrap_fn(func), *_f._to_arrays(primals))

    def jvp_fn(*tangents):
        return _f._out_tensors(lin(*_f._to_arrays(tangents)))
    return _f._out_tensors(out), jvp_fn


def stack_module_state(models):
    """(params, buffers): each a dict of the models' tensors stacked along a new leading dim (for vmap over an
    ensemble with functional_call). The stacked parameters are new leaves that require grad."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = models[0]
    if not all(type(m) is type(first) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    import funcgrad as _fg

    def stack(named):
        per_model = [dict(named(m)) for m in models]
        return {k: _fg.stack([d[k].detach() for d in per_model]) for k in per_model[0]}
    params = stack(lambda m: m.named_parameters())
    for k, p in first.named_parameters():
        if p.requires_grad:
            params[k].requires_grad_(True)
    buffers = stack(lambda m: m.named_buffers())
    return params, buffers



def replace_all_batch_norm_modules_(root):
    """Every batch-norm module under root (root included) stops tracking running statistics, in place: its
    running_mean / running_var / num_batches_tracked become None, so that it normalises with the batch's own
    statistics and can run under vmap (torch.func.replace_all_batch_norm_modules_). Returns root."""
    from .nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
