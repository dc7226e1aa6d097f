"""The default process group and sub-groups: init_process_group, new_group, ranks and sizes.

How a process finds its job (in order):
1. Started by an MPI process manager (funcgrad's launcher, `mpiexec`, `srun`): MPI's COMM_WORLD is the
   job; `rank`/`world_size` given explicitly or through RANK/WORLD_SIZE must agree with it.
2. world_size 1: this process alone (MPI's COMM_SELF).
3. Otherwise (processes the script started itself, e.g. with mp.spawn): rank and world_size come from the
   arguments, RANK/WORLD_SIZE (init_method "env://") or "tcp://ADDR:PORT"; the processes meet at
   MASTER_ADDR:MASTER_PORT and are joined into one MPI job (funcgrad.distributed.rendezvous).
"gloo" and "mpi" both run on MPI; "nccl" is refused until the GPU backend exists.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
from datetime import timedelta
from urllib.parse import urlparse

from .._src.core import processes
from .._torch._dtype import device as _device
from . import _mpi, rendezvous
from ._types import Backend, GroupMember, _NO_GROUP, _NoProcessGroupError, group
from .process_group import ProcessGroup

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "is_available", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "is_ucc_available", "is_xccl_available",
           "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend", "new_group",
           "get_process_group_ranks", "get_global_rank", "get_group_rank", "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)
_CPU_BACKENDS = ("gloo", "mpi")
_groups: list[ProcessGroup] = []  # every group made since init, the default first


def is_available() -> bool:
    """True when the MPI engine (mpi4py) is installed: process groups can be made."""
    return _mpi.available()


def is_mpi_available() -> bool:
    """Whether the MPI backend can be used (mpi4py importable: the `distributed` extra)."""
    return _mpi.available()


def is_gloo_available() -> bool:
    """"gloo" (torch's CPU backend) is served by MPI here."""
    return _mpi.available()


def is_nccl_available() -> bool:
    """False: NCCL is a CUDA backend."""
    return False


def is_ucc_available() -> bool:
    """False: the UCC backend is not built."""
    return False


def is_xccl_available() -> bool:
    """False: the XCCL backend (Intel GPUs) is not built."""
    return False


def is_torchelastic_launched() -> bool:
    """True under a torchrun-style launcher (funcgrad's sets TORCHELASTIC_RUN_ID, as torchrun does)."""
    return "TORCHELASTIC_RUN_ID" in os.environ


def is_initialized() -> bool:
    """Whether the default process group has been initialised (init_process_group)."""
    return GroupMember.WORLD is not None


def _default() -> ProcessGroup:
    pg = GroupMember.WORLD
    if pg is None:
        raise _NoProcessGroupError(_NO_GROUP)
    return pg


def _group(g) -> ProcessGroup:
    """The group a collective runs on: the default for None/group.WORLD."""
    if g is None:
        return _default()
    if g == GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError("this rank is not a member of the process group it was given "
                           "(new_group returned GroupMember.NON_GROUP_MEMBER here)")
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup made by init_process_group/new_group, got {type(g).__name__}")
    return g


def _backend_name(backend) -> str:
    if backend is None:
        return "gloo"
    name = str(backend).lower()
    # "cpu:gloo,cuda:nccl": the CPU entry is the one that runs here
    if ":" in name or "," in name:
        pairs = dict(p.split(":", 1) for p in name.split(",") if ":" in p)
        name = pairs.get("cpu", next(iter(pairs.values()), name))
    if name in ("nccl", "ucc", "xccl"):
        raise RuntimeError(f"init_process_group: backend {name!r} needs GPUs, which funcgrad.distributed does "
                           f"not drive yet; use backend='gloo' (or 'mpi') for CPU tensors")
    if name not in _CPU_BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r}; funcgrad runs 'gloo' and 'mpi' "
                         f"(both on MPI)")
    return name


def _seconds(timeout) -> float:
    if timeout is None:
        return default_pg_timeout.total_seconds()
    return timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)


def _env_int(name: str):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"init_process_group: environment variable {name}={v!r} is not an integer") from None


def _install_abort_hook(MPI) -> None:
    """An uncaught exception on one rank ends the whole job (MPI Abort) instead of leaving the other ranks
    waiting in a collective forever; the failing rank's traceback is printed first."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            previous(kind, value, tb)
        except Exception:  # noqa: BLE001 (the traceback must not stop the abort)
            traceback.print_exception(kind, value, tb)
        sys.stderr.flush()
        time.sleep(0.5)  # let the process manager forward the traceback before it tears the job down
        if not MPI.Is_finalized():
            MPI.COMM_WORLD.Abort(1)
    sys.excepthook = hook


def init_process_group(backend=None, init_method=None, timeout=None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None, device_id=None) -> None:
    """Joins this process to its job and makes the default process group (torch's signature; see the module
    docstring for how the job is found)."""
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if store is not None:
        raise ValueError("init_process_group: store= is not supported (funcgrad's ranks meet through MPI or "
                         "MASTER_ADDR/MASTER_PORT); pass init_method='env://' or 'tcp://ADDR:PORT'")
    addr, port = os.environ.get("MASTER_ADDR"), _env_int("MASTER_PORT")
    if init_method not in (None, "env://"):
        url = urlparse(init_method)
        if url.scheme != "tcp":
            raise ValueError(f"init_process_group: init_method {init_method!r} is not supported; use 'env://' "
                             f"or 'tcp://ADDR:PORT'")
        addr, port = url.hostname, url.port
    if rank is None or rank < 0:
        rank = _env_int("RANK") if _env_int("RANK") is not None else -1
    if world_size is None or world_size < 0:
        world_size = _env_int("WORLD_SIZE") if _env_int("WORLD_SIZE") is not None else -1
    seconds = _seconds(timeout)

    if _mpi.launched_by_mpi():
        MPI = _mpi.MPI()
        comm = MPI.COMM_WORLD
        if world_size not in (-1, comm.Get_size()):
            raise ValueError(f"init_process_group: world_size={world_size} but the MPI job has "
                             f"{comm.Get_size()} processes")
        if rank not in (-1, comm.Get_rank()):
            comm = comm.Split(0, key=rank)
            if comm.Get_rank() != rank:
                raise ValueError(f"init_process_group: rank {rank} is not a rank of this {comm.Get_size()}-"
                                 f"process job (ranks must be 0..{comm.Get_size() - 1}, each used once)")
    else:
        if world_size < 1 or rank < 0:
            raise ValueError("init_process_group: rank and world_size are needed (arguments, or RANK and "
                             "WORLD_SIZE in the environment, as a launcher sets them): "
                             f"got rank={rank}, world_size={world_size}")
        if rank >= world_size:
            raise ValueError(f"init_process_group: rank {rank} is not below world_size {world_size}")
        if world_size > 1:
            if addr is None or port is None:
                raise ValueError("init_process_group: MASTER_ADDR and MASTER_PORT must be set (or "
                                 "init_method='tcp://ADDR:PORT') so that the processes can meet")
            if "mpi4py" not in sys.modules or not _mpi.MPI().Is_initialized():
                if not _mpi.available():
                    raise ImportError(_mpi._EXTRA)
                rendezvous.join(rank, world_size, addr, port, seconds)
            else:
                raise RuntimeError("init_process_group: MPI was initialized before init_process_group in a "
                                   "process no MPI launcher started, so it cannot join the other ranks; import "
                                   "mpi4py.MPI only after init_process_group, or start the job with mpiexec")
        MPI = _mpi.MPI()
        comm = MPI.COMM_WORLD if world_size > 1 else MPI.COMM_SELF
    if comm.Get_size() > 1:
        _install_abort_hook(MPI)
    pg = ProcessGroup(comm, name, timeout=seconds)
    pg.ranks = list(range(comm.Get_size()))
    _groups.append(pg)
    GroupMember.WORLD = group.WORLD = pg
    processes.set_job(pg.rank(), pg.size(), pg)  # pmap's collectives across processes reduce through pg


def destroy_process_group(group=None) -> None:
    """Frees a group (None: every group, and the default one)."""
    if group is None:
        if GroupMember.WORLD is None:
            raise AssertionError("Process group cannot be None (no default process group has been initialized)")
        for pg in _groups:
            pg.destroy()
        _groups.clear()
        GroupMember.WORLD = globals()["group"].WORLD = None
        processes.clear_job()
        return
    pg = _group(group)
    pg.destroy()
    if pg in _groups:
        _groups.remove(pg)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """A group of the given global ranks (None: all). Every rank of the default group must call it, as in
    torch; ranks outside the group get GroupMember.NON_GROUP_MEMBER."""
    world = _default()
    members = sorted(set(range(world.size()) if ranks is None else (int(r) for r in ranks)))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is outside the default group (size {world.size()})")
    MPI = _mpi.MPI()
    me = world.rank()
    comm = world.comm.Split(0 if me in members else MPI.UNDEFINED, key=me)
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, _backend_name(backend) if backend is not None else world.backend,
                      ranks=[world.ranks[r] for r in members],
                      timeout=_seconds(timeout) if timeout is not None else world.timeout)
    _groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    """This process' rank in the group (-1 if it is not a member)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).rank()


def get_world_size(group=None) -> int:
    """The number of ranks in group (the default group if None); -1 on a rank outside it."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return _group(group).size()


def get_backend(group=None) -> str:
    """The backend name of group (the default group if None)."""
    return Backend(_group(group).backend)


def get_default_backend_for_device(device) -> str:
    """The default backend's name for a device (a torch.device or its string): "gloo" for "cpu" (and "mps"),
    "nccl" for "cuda", "xccl" for "xpu", as torch's Backend.default_device_backend_map; ValueError for a device
    type with none. pytorch/examples' DDP example picks its backend so."""
    kind = device.type if isinstance(device, _device) else _device(device).type
    backend = Backend.default_device_backend_map.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of group's members, in group-rank order."""
    return list(_group(group).ranks)


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of the member of group whose rank in group is group_rank."""
    pg = _group(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"get_global_rank: group rank {group_rank} is outside the group (size {pg.size()})")
    return pg.ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """The rank in group of the process whose global rank is global_rank."""
    return _group(group).group_rank(global_rank)
