"""funcgrad.backends.cudnn (torch.backends.cudnn): flags remembered, cuDNN reported absent."""
from __future__ import annotations

import contextlib
import sys

from ._flags import _FlagModule

enabled = True
benchmark = False
benchmark_limit = None
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None


def is_acceptable(tensor) -> bool:
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """Set the cuDNN flags inside a with-block (restored on exit)."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: getattr(mod, n) for n in names}
    mod.enabled, mod.benchmark, mod.deterministic, mod.allow_tf32 = enabled, benchmark, deterministic, allow_tf32
    mod.benchmark_limit = None if benchmark_limit == 10 and old["benchmark_limit"] is None else benchmark_limit
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)


class _CudnnModule(_FlagModule):
    _bool_flags = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                   "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cudnn"}


sys.modules[__name__].__class__ = _CudnnModule
