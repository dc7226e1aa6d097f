"""Code generation settings, shared by codegen.py and the blocked-kernel runtime (blocked.py), and the native
tier's (NativeConfig: native.py, native_ops.py).

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


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "funcgrad", "native")


class NativeConfig:
    """The native tier's settings, also reachable through funcgrad.config.update: jit_native (on when
    numba is installed), jit_native_threshold (calls of a compiled signature on the NumPy code before its
    native code is built; 0: at its first call), jit_native_background (build on a daemon thread, the
    NumPy code answering meanwhile; False: inside the call that reaches the threshold),
    jit_native_cache_dir (None: no disk cache), jit_native_max_size (largest array of a region),
    jit_native_max_eqns (a larger program stays on the NumPy code: Numba would compile it for minutes)."""

    def __init__(self):
        self.enabled = True
        self.threshold = 100
        self.background = True
        self.cache_dir = os.environ.get("FUNCGRAD_NATIVE_CACHE_DIR") or _default_cache_dir()
        self.max_size = 65536         # largest array (elements) a region may hold
        self.max_dot_flops = 1 << 20  # larger matrix products stay on the NumPy path (BLAS)
        self.min_ops = 2              # a region worth a call: at least this many equations, or a loop
        # Numba's compile time grows faster than linearly with a function's size (an unrolled 900-equation
        # program took minutes as one function): longer runs are cut into regions of this many equations
        self.max_region_eqns = 48
        # ... and the regions of one program together: an unrolled 900-equation RNN gradient still took 150 s
        # in 48-equation pieces, so a program with more lowerable equations than this is not compiled at all
        # (counted once repeated steps are rolled into loops: that gradient is then ~35)
        self.max_program_eqns = 400


native_config = NativeConfig()
