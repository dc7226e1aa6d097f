"""Global configuration: `funcgrad.config.update("enable_x64", True)` and friends.

jit settings:
  log_compiles            log each compile (logger "funcgrad.jit"), naming what in the signature changed
  jit_cache_size          the bound of each jitted function's LRU cache of compiled signatures
  jit_cache_max_bytes     the bound (default 256 MiB; None: none) of the bytes of constants (arrays built
                          while tracing, closed-over arrays) that each jitted function's cache keeps alive;
                          least recently used signatures are evicted beyond it (f._cache_bytes() reads it)
  disable_jit             run jitted functions eagerly
  jit_passes              the enabled optimisation passes (names from funcgrad._src.interpreters.compiler.PASSES)
  jit_fusion              fuse elementwise chains over large arrays into blocked kernels
  jit_fusion_min_size     the number of elements from which an elementwise chain is fused
  jit_fusion_block_size   the elements per block of a fused kernel
  jit_fusion_threads      the threads a fused kernel may share its blocks among
  jit_fusion_parallel_min_size  the work (elements x operations) from which a fused kernel uses those threads
  jit_fusion_evaluator    who runs fused groups: "numpy" (blocked kernels, the default) or "numexpr" (needs
                          the optional numexpr package; see transforms/compiler/numexpr_eval.py)
  jit_parallel_ops        use a second thread: large matrix products split in two, independent
                          convolutions run two at a time (off: see transforms/compiler/parallel.py)
  jit_donate_buffers      reuse dead intermediate buffers as out= of later operations
  backward_cache_size     how many compiled backward walks of repeated eager grad/vjp tapes are kept (LRU;
                          0: always interpret; see transforms/backward_cache.py)

threads:
  intra_op_threads        the most BLAS threads one matrix product, convolution or solve may use (torch's
                          set_num_threads / get_num_threads, also funcgrad.set_num_threads); products too
                          small to gain run on one thread (core/threads.py; needs threadpoolctl, the `fast`
                          extra). Default: the BLAS's own count when first needed

random settings:
  jax_threefry_partitionable  funcgrad.random's split/bits layout: True (JAX >= 0.5's default) or False
                              (JAX's original layout); read at call or trace time

JAX's options (each also spelled with the `jax_` prefix, as in jax.config):
  enable_x64              the default float (and complex) dtype is 64-bit
  debug_nans, debug_infs  raise FloatingPointError naming the first operation whose result holds a NaN
                          (an infinity); jitted functions then run op by op
  numpy_rank_promotion    "allow" (default), "warn" or "raise" on implicit rank promotion of non-scalar
                          operands in funcgrad.numpy's broadcasting functions
  platform_name, platforms  "cpu" (and "gpu"/"cuda" where CuPy sees a GPU); anything else raises
  default_matmul_precision, traceback_filtering, check_tracer_leaks, ...  accepted; funcgrad already
                          behaves as one of their settings (full float32 matmuls, unfiltered tracebacks)

As in JAX, each option's starting value can come from the environment: JAX_ENABLE_X64=1, JAX_PLATFORMS=cpu,
JAX_DEBUG_NANS=true, JAX_DISABLE_JIT=1, ... (the option's name in capitals with the `JAX_` prefix), read
when funcgrad is imported; a malformed value raises ValueError naming the variable.
"""
from __future__ import annotations

import os
import sys
import warnings

from . import dtypes
from . import options as _options
from .backend import cupy as _cupy

_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "fastest",
               "bfloat16_3x", "tensorfloat32_3x", "ANY_F8_ANY_F8_F32", "BF16_BF16_F32", "F32_F32_F32")
# JAX options accepted because funcgrad already behaves as one of their settings: NumPy multiplies
# float32 matrices in float32 ("highest"); tracebacks are never filtered; a leaked tracer raises when
# used; there is no compilation cache to persist.
_ACCEPTED = ("default_matmul_precision", "traceback_filtering", "check_tracer_leaks", "enable_checks",
             "compilation_cache_dir", "persistent_cache_min_compile_time_secs",
             "persistent_cache_min_entry_size_bytes", "softmax_custom_jvp", "default_prng_impl",
             "numpy_dtype_promotion", "dynamic_shapes", "explain_cache_misses", "log_checkpoint_residuals")
_OWN = ("enable_x64", "platform_name", "platforms") + _ACCEPTED


def _canonical(name: str) -> str:
    """JAX spells every option with a `jax_` prefix; funcgrad accepts both spellings."""
    if name.startswith("jax_") and name != "jax_threefry_partitionable":
        return name[4:]
    return "jax_threefry_partitionable" if name == "threefry_partitionable" else name


class Config:
    """Settings read by the library. Change them with `update(name, value)`, read them with
    `read(name)` or as attributes (`config.jax_enable_x64`, `config.x64_enabled`).

    The x64 mode, the platform and the accepted JAX options are kept here; every other setting lives on
    the module that reads it, registered with funcgrad._src.core.options (jit's cache bounds, the compiler's
    passes and code generation, the backward cache, the PRNG layout, NaN/inf checks, rank promotion)."""

    def __init__(self):
        self.enable_x64 = False
        self._values = {"platform_name": "", "platforms": None,
                        "default_matmul_precision": None, "traceback_filtering": "auto",
                        "numpy_dtype_promotion": "standard", "default_prng_impl": "threefry2x32"}

    @property
    def _names(self) -> tuple:
        return ("enable_x64",) + _options.names() + _OWN[1:]

    def update(self, name: str, value) -> None:
        key = _canonical(name)
        if key == "enable_x64":
            self.enable_x64 = bool(value)
            dtypes.set_x64(bool(value))
        elif _options.known(key):
            _options.write(key, value)
        elif key in ("platform_name", "platforms"):
            self._check_platforms(name, value)
            self._values[key] = value
        elif key == "numpy_dtype_promotion" and value != "standard":
            raise NotImplementedError("jax_numpy_dtype_promotion: funcgrad implements only 'standard' "
                                      f"promotion, got {value!r}")
        elif key == "default_matmul_precision" and value not in _PRECISIONS:
            raise ValueError(f"jax_default_matmul_precision: unknown precision {value!r}")
        elif key in _ACCEPTED:
            self._values[key] = value
        else:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._names)}")

    @staticmethod
    def _check_platforms(name, value):
        """Platforms are "cpu" and, where CuPy sees a GPU, "gpu"/"cuda" (comma-separated lists allowed)."""
        if value in (None, ""):
            return
        for p in str(value).split(","):
            p = p.strip().lower()
            if p == "cpu" or (p in ("gpu", "cuda") and _cupy() is not None):
                continue
            raise RuntimeError(f"{name}: unable to initialize backend {p!r}: funcgrad has 'cpu'"
                               + (" and 'gpu'" if _cupy() is not None else " only (no CuPy GPU found)"))

    def read(self, name: str):
        key = _canonical(name)
        if key == "enable_x64":
            return self.enable_x64
        if _options.known(key):
            return _options.read(key)
        if key in self._values or key in _ACCEPTED:
            return self._values.get(key)
        raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._names)}")

    def __getattr__(self, name: str):
        # (only reached for names that are not real attributes: config.jax_enable_x64, ...)
        if name.startswith("__") or name == "_values":
            raise AttributeError(name)
        if name == "x64_enabled":
            return self.enable_x64
        try:
            return self.read(name)
        except ValueError:
            raise AttributeError(f"funcgrad.config has no option {name!r}") from None

    def config_with_absl(self) -> None:
        """As jax.config.config_with_absl, called by programs before absl's app.run: apply the settings
        given on the command line as --jax_NAME=VALUE (or --jax_NAME / --nojax_NAME for booleans)."""
        self.parse_flags_with_absl()

    def parse_flags_with_absl(self) -> None:
        """Apply --jax_NAME=VALUE command-line settings (sys.argv) that name an option of this config."""
        for arg in sys.argv[1:]:
            if not arg.startswith(("--jax_", "--nojax_")):
                continue
            name, eq, value = arg[2:].partition("=")
            on = not name.startswith("no")
            name = name if on else name[2:]
            if _canonical(name) not in self._names:
                continue
            if not eq:
                self.update(name, on)
            elif value.lower() in ("true", "false", "1", "0"):
                self.update(name, value.lower() in ("true", "1"))
            else:
                self.update(name, int(value) if value.isdigit() else value)

    def apply_environment(self, environ=None) -> None:
        """Set every known option named by a JAX_<NAME> environment variable (as JAX reads them at import):
        booleans from JAX's spellings (1/0, true/false, yes/no, on/off, t/f, y/n), integers, None, or text."""
        environ = os.environ if environ is None else environ
        for name in self._names:
            var = "JAX_" + _canonical(name).upper()
            if var in environ:
                value = _parse_env(var, environ[var], self.read(name))
                try:
                    self.update(name, value)
                except RuntimeError as e:  # an unavailable platform: JAX too fails only when first used
                    warnings.warn(f"{var}: {e}", RuntimeWarning, stacklevel=2)

    @property
    def log_compiles(self):
        return self.read("log_compiles")

    @property
    def jit_cache_size(self):
        return self.read("jit_cache_size")


_TRUE, _FALSE = ("1", "true", "t", "yes", "y", "on"), ("0", "false", "f", "no", "n", "off")


def _parse_env(var: str, text: str, current):
    """An environment variable's text as an option value of the current value's kind."""
    low = text.strip().lower()
    if isinstance(current, bool) or current is None and low in _TRUE + _FALSE:
        if low not in _TRUE + _FALSE:
            raise ValueError(f"{var}={text!r}: expected a boolean (1/0, true/false, yes/no, on/off)")
        return low in _TRUE
    if isinstance(current, int) or current is None and low.lstrip("-").isdigit():
        try:
            return int(low)
        except ValueError:
            raise ValueError(f"{var}={text!r}: expected an integer") from None
    if low in ("none", ""):
        return None
    return text


config = Config()

# The module itself answers as the Config does (funcgrad.config.update(...), .read(...), settings as
# attributes), so code that reaches the module rather than the instance works: `from jax.config import
# config` in older JAX programs imports this module under the name jax.config, which rebinds the package
# attribute funcgrad.config to it.
update = config.update
read = config.read
config_with_absl = config.config_with_absl
parse_flags_with_absl = config.parse_flags_with_absl


def __getattr__(name):
    return getattr(config, name)

