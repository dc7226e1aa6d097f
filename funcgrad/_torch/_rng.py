"""torch.random: the default generator's seeding and state, and fork_rng (grafted onto funcgrad.random,
whose JAX-style stateless keys are a different thing, by funcgrad/__init__.py)."""
from __future__ import annotations

import contextlib
import warnings

from ._creation import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda"):
    """Inside, draw from the default generator freely: its state is restored on exit. `devices` names the
    CUDA devices whose generators are forked too (there are none without a GPU)."""
    if not enabled:
        yield
        return
    if devices is not None and len(list(devices)) and device_type == "cuda":
        from . import cuda
        if not cuda.is_available():
            warnings.warn(f"torch.random.{_caller}: {_devices_kw} were given but CUDA is not available; only the "
                          "CPU generator is forked", UserWarning, stacklevel=3)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]
