"""Code generation settings, shared by codegen.py and the blocked-kernel runtime (blocked.py).

Reachable as `funcgrad._src.interpreters.compiler.config.codegen` and through funcgrad.config.update:
jit_fusion, jit_fusion_min_size, jit_fusion_block_size, jit_fusion_threads, jit_fusion_evaluator, jit_parallel_ops, jit_donate_buffers.
"""
from __future__ import annotations

import os


class CodegenConfig:
    """Code generation settings (also reachable through funcgrad.config.update("jit_...", v))."""

    def __init__(self):
        # Fuse elementwise chains: on the NumPy backend over arrays of at least fusion_min_size
        # elements; on CuPy at any size, as ElementwiseKernels (fusion_min_size does not apply there).
        # Measured on a 2-CPU x86-64 (1 MB L2 per core, 32 MB L3): below ~256K float32 elements the
        # operands stay in L2, and straight-line in-place ufunc calls (one buffer reused by every op)
        # beat a blocked kernel's extra Python per block; above, blocks keep the chain in L2, avoid
        # allocating temporaries, and can be shared among threads.
        self.fusion = True
        self.fusion_min_size = 262144
        self.fusion_block_size = 65536          # elements per block (256 KB of float32)
        self.fusion_threads = max(1, min(os.cpu_count() or 1, 8))
        # A kernel shares its blocks among threads when elements x ops reaches this (~2-5 ms of work
        # on one core): a worker descheduled on a busy machine stalls the call for a scheduler slice
        # (~1 ms or more), which only work of that size amortises. (W1's 100-op chain on 1M
        # elements: 1e8; an SGD update p - lr * g on 400K elements: 8e5, one thread.)
        self.fusion_parallel_min_size = 8_000_000
        # Who evaluates a fused group: "numpy" (the blocked kernels) or "numexpr" (every group it can
        # take, when importable; slower on the machines measured so far: see numexpr_eval.py).
        self.fusion_evaluator = "numpy"
        # Use a second thread for heavy operations of at least parallel_min_flops (parallel.py): a
        # large 2-D matrix product is split in two halves, other independent products / convolutions
        # run two at a time. Off: the benchmarks pin BLAS to one thread, and this is a second core
        # doing BLAS work (with a multi-threaded BLAS it only adds threads).
        self.parallel_ops = False
        self.parallel_min_flops = 10_000_000
        self.patterns = True                    # code-generation rewrites (patterns.py)
        self.donate = True                      # reuse dead fresh buffers as out= (never inputs, views,
        #                                         constants or outputs)


config = CodegenConfig()
