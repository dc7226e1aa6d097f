"""jit's compiler: optimisation passes over a jaxpr, then code generation to one Python function.

    from funcgrad._src.interpreters import compiler
    opt = compiler.optimize(jaxpr)                         # all enabled passes
    opt = compiler.optimize(jaxpr, passes=("dce", "cse"))  # just these, in the pipeline's order
    fn = compiler.compile_jaxpr(opt)                       # a Compiled: fn(*buffers), fn.source

Passes (each a pure function jaxpr -> jaxpr, one small module each, in pipeline order):
  inline    inline.py    nested jit calls replaced by their equations
  fold      fold.py      constant folding
  simplify  simplify.py  algebraic simplification (x*1, x+0, neg(neg x), transpose/reshape chains, ...)
  pads      pads.py      sums of zero-padded disjoint blocks (the backward of a split) as one concatenate
  cse       cse.py       common-subexpression elimination (and merging of equal constants)
  forward   forward.py   outputs equal to an input are that input
  dce       dce.py       dead-code elimination (incl. unused residuals of a vjp, unused scan outputs)
The pipeline runs twice when the first round changed something (a rewrite often enables another).
`config.passes` holds the enabled pass names (funcgrad.config.update("jit_passes", (...)) sets it).

Code generation (codegen.py) lowers further (custom_jvp/custom_vjp/remat calls inlined, stop_gradient
dropped, multi-equation patterns such as relu's backward replaced by one internal operation
(patterns.py): the generated code is never differentiated), plans elementwise fusion (fusion.py, backend-
neutral) and emits straight-line NumPy code with buffer reuse and blocked fused kernels, or, for CuPy,
straight-line CuPy code with one generated ElementwiseKernel per fused group (cuda_kernels.py).
With donated inputs (jit's donate_argnums) it writes results into them, after schedule.py has moved each
parameter update next to its gradient. On NumPy, a matrix product and the update or bias add consuming it
become one BLAS gemm into the update's buffer (gemm.py).

The native tier (native.py, with numba installed: the `fast` extra) lowers the regions of a lowered jaxpr
that Numba can take to machine code; jit swaps it in after `jit_native_threshold` calls.
"""
from __future__ import annotations

import os

import numpy as np

from ...core import options as _options
from ...core.jaxpr import Jaxpr
from . import codegen, fusion, native, numexpr_eval
from ._ir import Renamer, rebuild
from .codegen import Compiled, config as codegen_config
from .cse import cse
from .dce import dce
from .fold import fold_constants
from .forward import forward_inputs, forwarded_outputs
from .inline import inline_all_calls, inline_calls
from .pads import sum_of_pads
from .patterns import rewrite_extremum_grads
from .simplify import simplify

PASSES = {
    "inline": inline_calls,
    "fold": fold_constants,
    "simplify": simplify,
    "pads": sum_of_pads,
    "cse": cse,
    "forward": forward_inputs,
    "dce": dce,
}
ALL_PASSES = tuple(PASSES)


class CompilerConfig:
    """Which passes run (`passes`), and the code generator's settings (`codegen`)."""

    def __init__(self):
        self.passes = ALL_PASSES
        self.codegen = codegen_config

    def enabled(self, passes=None) -> tuple:
        names = self.passes if passes is None else passes
        if isinstance(names, str):
            names = (names,)
        unknown = [n for n in names if n not in PASSES]
        if unknown:
            raise ValueError(f"unknown compiler pass(es) {unknown}; known: {', '.join(PASSES)}")
        return tuple(n for n in PASSES if n in names)


config = CompilerConfig()

# funcgrad.config's names for the compiler's settings (the passes, and code generation's)
_CODEGEN_OPTIONS = {"jit_fusion": "fusion", "jit_fusion_min_size": "fusion_min_size",
                    "jit_fusion_block_size": "fusion_block_size", "jit_fusion_threads": "fusion_threads",
                    "jit_fusion_parallel_min_size": "fusion_parallel_min_size", "jit_donate_buffers": "donate",
                    "jit_fusion_evaluator": "fusion_evaluator", "jit_parallel_ops": "parallel_ops"}
_EVALUATORS = ("numpy", "numexpr")


def _check_codegen_option(name: str, value):
    if name == "jit_fusion_evaluator":
        if value not in _EVALUATORS:
            raise ValueError(f"jit_fusion_evaluator must be one of {', '.join(map(repr, _EVALUATORS))}, "
                             f"got {value!r}")
        if value == "numexpr" and not numexpr_eval.available():
            raise ImportError("jit_fusion_evaluator='numexpr' needs the numexpr package "
                              "(pip install numexpr, or funcgrad[fast])")
    return value


_NATIVE_OPTIONS = {"jit_native": "enabled", "jit_native_threshold": "threshold",
                   "jit_native_background": "background", "jit_native_cache_dir": "cache_dir",
                   "jit_native_max_size": "max_size", "jit_native_max_eqns": "max_program_eqns"}


def _check_native_option(name: str, value):
    if name in ("jit_native", "jit_native_background"):
        return bool(value)
    if name == "jit_native_cache_dir":
        return None if value is None else os.fspath(value)
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be at least 0, got {value}")
    return value


_options.register(config, {"jit_passes": "passes"}, check=lambda name, value: config.enabled(tuple(value)))
_options.register(native.config, _NATIVE_OPTIONS, check=_check_native_option)
_options.register(codegen_config, _CODEGEN_OPTIONS, check=_check_codegen_option)


def _signature(j: Jaxpr):
    return (len(j.eqns), len(j.constvars), tuple(id(v) for v in j.outvars))


def optimize(jaxpr: Jaxpr, passes=None) -> Jaxpr:
    """Run the enabled passes (all of `config.passes`, or the names given) over `jaxpr`.

    Pure: `jaxpr` is left as it was; the result computes the same values, and differentiates and
    batches the same (jit transforms optimised jaxprs)."""
    names = config.enabled(passes)
    for _ in range(2):
        before = _signature(jaxpr)
        for n in names:
            jaxpr = PASSES[n](jaxpr)
        if _signature(jaxpr) == before:
            break
    return jaxpr


def strip_stop_gradient(jaxpr: Jaxpr) -> Jaxpr:
    """Drop stop_gradient equations (the identity on values): for code generation only."""
    if not any(e.prim.name == "stop_gradient" for e in jaxpr.eqns):
        return jaxpr
    rename = Renamer()
    eqns = []
    outset = set(jaxpr.outvars)
    for e in jaxpr.eqns:
        e = rename.eqn(e)
        if e.prim.name == "stop_gradient" and len(e.invars) == 1 and \
                (e.outvars[0] not in outset or e.outvars[0].aval == e.invars[0].aval):
            rename.set(e.outvars[0], e.invars[0])
            continue
        eqns.append(e)
    return rebuild(jaxpr, eqns, [rename(v) for v in jaxpr.outvars])


def lower(jaxpr: Jaxpr, passes=None) -> Jaxpr:
    """The jaxpr code generation works on: calls inlined, stop_gradient dropped, passes run, then the
    code-generation rewrites of patterns.py (with dce; `config.codegen.patterns` turns them off)."""
    names = config.enabled(passes)
    j = jaxpr
    if "inline" in names:
        j = inline_all_calls(j)
    j = strip_stop_gradient(j)
    if j is not jaxpr or names:
        j = optimize(j, names)
    if "dce" in names and codegen_config.patterns:
        r = rewrite_extremum_grads(j)
        if r is not j:
            j = dce(r)
    return j


def compile_jaxpr(jaxpr: Jaxpr, xp=np, passes=None, fusion=None, donated=()) -> Compiled:
    """Generate one straight-line function for `jaxpr` (after `lower`); see codegen.py. `donated`: the
    positions of inputs whose buffers the code may overwrite (jit's donate_argnums)."""
    return codegen.generate(lower(jaxpr, passes), xp, fusion, donated=donated)


__all__ = ["optimize", "compile_jaxpr", "lower", "Compiled", "PASSES", "ALL_PASSES", "config",
           "inline_calls", "inline_all_calls", "fold_constants", "simplify", "cse", "forward_inputs",
           "forwarded_outputs", "dce", "sum_of_pads", "fusion", "codegen", "strip_stop_gradient", "rewrite_extremum_grads"]
