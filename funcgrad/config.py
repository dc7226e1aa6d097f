"""Global configuration: `funcgrad.config.update("enable_x64", True)` and friends.

jit settings:
  log_compiles            log each compile (logger "funcgrad.jit"), naming what in the signature changed
  jit_cache_size          the bound of each jitted function's LRU cache of compiled signatures
  disable_jit             run jitted functions eagerly
  jit_passes              the enabled optimisation passes (names from funcgrad.transforms.compiler.PASSES)
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

random settings:
  jax_threefry_partitionable  funcgrad.random's split/bits layout: True (JAX >= 0.5's default) or False
                              (JAX's original layout); read at call or trace time
"""
from __future__ import annotations

from .core import dtypes
from .transforms.compiler import codegen as _codegen
from .transforms.compiler import config as _compiler_config
from .transforms.jit import config as _jit_config

_JIT = ("log_compiles", "jit_cache_size", "disable_jit")
_CODEGEN = {"jit_fusion": "fusion", "jit_fusion_min_size": "fusion_min_size",
            "jit_fusion_block_size": "fusion_block_size", "jit_fusion_threads": "fusion_threads",
            "jit_fusion_parallel_min_size": "fusion_parallel_min_size", "jit_donate_buffers": "donate",
            "jit_fusion_evaluator": "fusion_evaluator", "jit_parallel_ops": "parallel_ops"}
_EVALUATORS = ("numpy", "numexpr")


class Config:
    """Settings read by the library. Change them with `update(name, value)`."""

    _names = ("enable_x64", "jax_threefry_partitionable") + _JIT + ("jit_passes",) + tuple(_CODEGEN)

    def __init__(self):
        self.enable_x64 = False

    def update(self, name: str, value) -> None:
        if name == "enable_x64" or name == "jax_enable_x64":
            self.enable_x64 = bool(value)
            dtypes.set_x64(bool(value))
        elif name in ("jax_threefry_partitionable", "threefry_partitionable"):
            from .random._keys import flags
            flags.threefry_partitionable = bool(value)
        elif name in ("jax_log_compiles",):
            _jit_config.log_compiles = bool(value)
        elif name in _JIT:
            if name == "jit_cache_size":
                value = int(value)
                if value < 1:
                    raise ValueError(f"jit_cache_size must be at least 1, got {value}")
            setattr(_jit_config, name, value)
        elif name == "jit_passes":
            _compiler_config.passes = _compiler_config.enabled(tuple(value))
        elif name in _CODEGEN:
            if name == "jit_fusion_evaluator" and value not in _EVALUATORS:
                raise ValueError(f"jit_fusion_evaluator must be one of {', '.join(map(repr, _EVALUATORS))}, "
                                 f"got {value!r}")
            if name == "jit_fusion_evaluator" and value == "numexpr":
                from .transforms.compiler import numexpr_eval
                if not numexpr_eval.available():
                    raise ImportError("jit_fusion_evaluator='numexpr' needs the numexpr package "
                                      "(pip install numexpr, or funcgrad[fast])")
            setattr(_codegen.config, _CODEGEN[name], value)
        else:
            raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._names)}")

    def read(self, name: str):
        if name == "enable_x64":
            return self.enable_x64
        if name in ("jax_threefry_partitionable", "threefry_partitionable"):
            from .random._keys import flags
            return flags.threefry_partitionable
        if name == "jit_passes":
            return _compiler_config.passes
        if name in _CODEGEN:
            return getattr(_codegen.config, _CODEGEN[name])
        if name in _JIT:
            return getattr(_jit_config, name)
        raise ValueError(f"unknown config option {name!r}; known: {', '.join(self._names)}")

    def config_with_absl(self) -> None:
        """As jax.config.config_with_absl, called by programs before absl's app.run: apply the settings
        given on the command line as --jax_NAME=VALUE (or --jax_NAME / --nojax_NAME for booleans)."""
        self.parse_flags_with_absl()

    def parse_flags_with_absl(self) -> None:
        """Apply --jax_NAME=VALUE command-line settings (sys.argv) that name an option of this config."""
        import sys
        for arg in sys.argv[1:]:
            if not arg.startswith(("--jax_", "--nojax_")):
                continue
            name, eq, value = arg[2:].partition("=")
            on = not name.startswith("no")
            name = name if on else name[2:]
            if name not in self._names and name[4:] not in self._names and name != "jax_enable_x64":
                continue
            if not eq:
                self.update(name, on)
            elif value.lower() in ("true", "false", "1", "0"):
                self.update(name, value.lower() in ("true", "1"))
            else:
                self.update(name, int(value) if value.isdigit() else value)

    @property
    def log_compiles(self):
        return _jit_config.log_compiles

    @property
    def jit_cache_size(self):
        return _jit_config.jit_cache_size


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
