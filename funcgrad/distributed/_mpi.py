"""The MPI engine under funcgrad.distributed: mpi4py, imported only when a process group is made.

mpi4py initializes MPI when `mpi4py.MPI` is first imported, so nothing here imports it at module level:
a rank that joins through the rendezvous (funcgrad.distributed.rendezvous) must set its process-manager
environment first. `MPI()` returns the module, or raises an ImportError that names the extra to install.
"""
from __future__ import annotations

import importlib.util
import os
import sys

_EXTRA = ("funcgrad.distributed runs on MPI through mpi4py, which is not installed: "
          "pip install 'funcgrad[distributed]' (mpi4py and the MPICH wheel)")

# Variables a process manager sets for each rank it starts (MPICH's hydra, Open MPI, Intel MPI, Slurm's PMI).
_LAUNCH_RANK_VARS = ("PMI_RANK", "PMI_ID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MPI_LOCALRANKID")


def available() -> bool:
    """True when mpi4py can be imported (checked without importing it, so MPI is not initialized)."""
    if "mpi4py" in sys.modules:
        return sys.modules["mpi4py"] is not None
    return importlib.util.find_spec("mpi4py") is not None


def MPI():  # noqa: N802 (the module's own name)
    """The mpi4py.MPI module (initializing MPI on first use), or ImportError naming the extra."""
    try:
        from mpi4py import MPI as mod
    except ImportError as e:
        raise ImportError(_EXTRA) from e
    return mod


def launched_by_mpi() -> bool:
    """Whether this process was started by an MPI process manager (mpiexec/srun), i.e. has a COMM_WORLD
    of its job's size waiting for it."""
    return any(v in os.environ for v in _LAUNCH_RANK_VARS)
