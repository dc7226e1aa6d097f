"""The names both faces claim at funcgrad's top level, each settled explicitly: funcgrad/__init__.py imports
JAX's names (funcgrad/_jax/top.py), then torch's (funcgrad/_torch/top.py), then these, which win.

CLAIMS says, for each name, what funcgrad.<name> is and why. tests/test_facade.py checks that every name
both faces' top levels export is listed here and that funcgrad.<name> is the binding below.
"""
from . import nn, profiler, random  # noqa: F401
from ._jax import top as _jax
from ._torch import top as _torch
from ._torch.func import _top_level_vmap
from ._torch import ops_namespace as _ops_namespace

CLAIMS: dict[str, str] = {
    "vmap": "both: jax.vmap, and torch.vmap (torch.func.vmap) when an argument is a Tensor or one of torch's "
            "keywords (in_dims, out_dims, randomness, chunk_size) is given; the positional parameters agree",
    "jit": "JAX's: jax.jit is what programs call; torch.jit is used through its attributes (script, trace, "
           "ignore, ...), which are hung on the same function",
    "random": "one package: jax.random's keys and samplers, and torch.random's seed, manual_seed, "
              "get_rng_state, ... (disjoint names)",
    "nn": "one package: torch.nn's modules, functional and init, and jax.nn's lowercase functions and "
          "initializers (torch.nn's classes are capitalised: no name clashes)",
    "profiler": "one re-export module: jax.profiler's annotations and torch.profiler's profile, schedule, "
                "record_function (disjoint names)",
    "ops": "one module: jax.ops' segment_sum and the other segment reductions are its attributes, and torch.ops' "
           "namespaces every other name (aten's operators, quantized's kernels, the custom ops library.custom_op "
           "and cpp_extension register) with load_library (funcgrad/_torch/ops_namespace.py)",
    "distributed": "torch's (process groups, collectives): jax.distributed.initialize has nothing to set up "
                   "in one process",
}

vmap = _top_level_vmap(_jax.vmap)
jit = _jax.jit
_torch.jit.attach(jit)  # torch.jit.script / trace / ignore ... on the same name
ops = _jax.ops
_ops_namespace.attach(ops)  # torch.ops.aten / quantized / <custom namespace> on the same module
distributed = _torch.distributed

__all__ = sorted(CLAIMS)
