"""Shared-memory storages and the pickling hooks that move Tensors between processes without copying.

A shared storage is an mmap of an anonymous memory file (`memfd_create`; on systems without it, a file
created in /dev/shm and unlinked at once). The file has no name, so the kernel frees the memory when the
last process mapping it (or holding its descriptor) ends, however it ends: nothing can leak in /dev/shm.
Sending a tensor hands the receiver a duplicate of the descriptor (multiprocessing's DupFd: passed at
spawn time, or fetched from the sender's resource sharer for a Queue), as torch's 'file_descriptor'
strategy does; the receiver maps the same pages, so writes on either side are seen by both.

`init_reductions()` registers the hooks with multiprocessing's ForkingPickler (used by every Queue, Pipe,
Pool and spawned Process); ordinary pickle.dumps still copies the data.
"""
from __future__ import annotations

import mmap
import os
import tempfile
import threading
import weakref
from multiprocessing import reduction as _mpr

import numpy as np

from .._torch import _tensor as _T
from ..nn.parameter import Parameter

__all__ = ["init_reductions", "share_memory_", "is_shared", "rebuild_tensor", "rebuild_storage"]

_byte_bounds = np.lib.array_utils.byte_bounds if hasattr(np.lib, "array_utils") else np.byte_bounds

# Private tensors smaller than this many bytes are pickled by value instead of moving to shared memory;
# 0 (the default, torch's semantics) always shares. DataLoader worker processes raise it, since for a small
# batch the descriptor hand-over costs more than copying the bytes through the pipe.
MIN_SHARE_BYTES = 0
# keep_fd=False (set around a DataLoader's result get) closes received descriptors at once: the batch can
# then not be re-sent by reference, but a loader yielding thousands of batches holds no descriptors.
_local = threading.local()


class _SharedMap(mmap.mmap):
    """A MAP_SHARED mapping of an unnamed memory file; keeps the descriptor so the memory can be handed on.
    The descriptor is closed when the mapping is garbage collected (`fd` is -1 once closed)."""

    fd = -1


def _close_fd(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _new_fd(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("funcgrad", getattr(os, "MFD_CLOEXEC", 0))
    else:  # pragma: no cover - non-Linux fallback
        d = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="funcgrad_", dir=d)
        os.unlink(path)
    try:
        os.ftruncate(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _map_fd(fd: int, nbytes: int, keep_fd: bool = True) -> _SharedMap:
    """Map `nbytes` of descriptor `fd` (taking ownership of fd: kept on the map, or closed now)."""
    try:
        m = _SharedMap(fd, max(nbytes, 1))
    except BaseException:
        _close_fd(fd)
        raise
    if keep_fd:
        m.fd = fd
        weakref.finalize(m, _close_fd, fd)
    else:
        _close_fd(fd)
    return m


def _root(v: np.ndarray):
    """The object at the bottom of a NumPy view chain (for a shared tensor, its _SharedMap)."""
    b = v
    while isinstance(b, np.ndarray) and b.base is not None:
        b = b.base
    return b


def _shared_map_of(t) -> _SharedMap | None:
    v = t._v
    if v is None:
        return None
    r = _root(v)
    return r if isinstance(r, _SharedMap) else None


def is_shared(t) -> bool:
    """Whether the tensor's memory lives in a shared mapping (Tensor.is_shared)."""
    return _shared_map_of(t) is not None


def _addr(v: np.ndarray) -> int:
    return v.__array_interface__["data"][0]


def share_memory_(t):
    """Move the tensor's storage into shared memory, in place (Tensor.share_memory_); a no-op if it is
    already shared. The storage's contents are copied once; this tensor, the base it is a view of, and every
    tensor later made from either use the shared copy. Other views made *before* the call keep the old
    private memory (PyTorch moves the whole storage; funcgrad's storages do not track their views)."""
    v = t._v
    if v is None:
        raise RuntimeError("share_memory_(): cannot share a tensor that holds a tracer (inside a funcgrad.func "
                           "transform)")
    if _shared_map_of(t) is not None:
        return t
    st = t._storage()
    buf = st.buf
    lo, hi = _byte_bounds(buf)
    vlo, vhi = _byte_bounds(v)
    if not (lo <= vlo and vhi <= hi) or buf.dtype.itemsize == 0:
        buf, (lo, hi) = v, (vlo, vhi)
    m = _map_fd(_new_fd(max(hi - lo, 1)), hi - lo)
    newbuf = np.ndarray(buf.shape, buf.dtype, buffer=m, offset=_addr(buf) - lo, strides=buf.strides)
    np.copyto(newbuf, buf)
    if buf is st.buf:
        st.buf = newbuf
        # the view chain's root lives in the same storage: move it too, so a view sent to another process
        # stays a view of its base here
        movers = [t] if t._base is None or t._base._st is not st else [t, t._base]
    else:
        st = _T._Storage(newbuf)
        movers = [t]
    for x in movers:
        xv = x._v
        xlo, xhi = _byte_bounds(xv)
        if not (lo <= xlo and xhi <= hi):
            continue
        x._v = np.ndarray(xv.shape, xv.dtype, buffer=m, offset=_addr(xv) - lo, strides=xv.strides)
        x._a = None
        x._st = st
    return t


def share_module_memory(module):
    """Module.share_memory(): move every parameter, gradient and buffer into shared memory."""
    return module._apply(lambda x: x.share_memory_())


# --- pickling -----------------------------------------------------------------------------------------------

def _fd_for(m: _SharedMap) -> int:
    if m.fd < 0:
        raise RuntimeError("this shared tensor was received without keeping its file descriptor, so it "
                           "cannot be sent on; send a clone() instead")
    return m.fd


def rebuild_storage(df, nbytes: int, shape, dtype, offset: int, strides):
    """Receiver side of a storage: map the descriptor and rebuild the storage's root buffer."""
    fd = df.detach()
    m = _map_fd(fd, nbytes, keep_fd=getattr(_local, "keep_fd", True))
    return _T._Storage(np.ndarray(shape, dtype, buffer=m, offset=offset, strides=strides))


def _reduce_storage(st):
    m = _root(st.buf)
    if not isinstance(m, _SharedMap):
        raise RuntimeError("internal error: pickling a storage that is not in shared memory")
    buf = st.buf
    return rebuild_storage, (_mpr.DupFd(_fd_for(m)), len(m), buf.shape, buf.dtype,
                             _addr(buf) - _addr_of_map(m), buf.strides)


def _addr_of_map(m: _SharedMap) -> int:
    return np.frombuffer(m, np.uint8, count=1).__array_interface__["data"][0]


def rebuild_tensor(cls, st, shape, dtype, offset: int, strides, requires_grad: bool):
    """Receiver side of a tensor: a view of the (shared) storage `st` with the sender's layout."""
    m = _root(st.buf)
    v = np.ndarray(shape, dtype, buffer=m, offset=offset, strides=strides)
    t = _T._make(v)
    t._st = st
    return _as_sent(cls, t, requires_grad)


def _rebuild_by_value(cls, host, requires_grad):
    return _as_sent(cls, _T._make(np.array(host)), requires_grad)


def _as_sent(cls, t, requires_grad: bool):
    """The received tensor t as the sender's class (Tensor, Parameter or another subclass) and requires_grad."""
    if cls is Parameter:
        return Parameter(t, requires_grad)
    if cls is not _T.Tensor:
        t = _T.Tensor._make_subclass(cls, t)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    if t._v is None:
        raise RuntimeError("cannot send a tensor that holds a tracer (inside a funcgrad.func transform) to "
                           "another process")
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to send a non-leaf tensor which requires grad to another "
                           "process: autograd graphs do not cross process boundaries. Call detach() on the "
                           "tensor first if you only want to transfer its data.")
    cls = type(t)
    if _shared_map_of(t) is None and t._v.nbytes < MIN_SHARE_BYTES:
        return _rebuild_by_value, (cls, t._v, bool(t._rg))
    share_memory_(t)
    m = _shared_map_of(t)
    if m.fd < 0:  # received without its fd: we can only send a copy
        return _rebuild_by_value, (cls, t._v, bool(t._rg))
    st = t._storage()
    if _root(st.buf) is not m:
        st = _T._Storage(np.frombuffer(m, np.uint8))
    v = t._v
    return rebuild_tensor, (cls, st, v.shape, v.dtype, _addr(v) - _addr_of_map(m), v.strides, bool(t._rg))


_registered = False


def init_reductions() -> None:
    """Register the shared-memory reducers for Tensor, nn.Parameter and storages with ForkingPickler."""
    global _registered
    if _registered:
        return
    _mpr.ForkingPickler.register(_T.Tensor, _reduce_tensor)
    _mpr.ForkingPickler.register(Parameter, _reduce_tensor)
    _mpr.ForkingPickler.register(_T._Storage, _reduce_storage)
    _registered = True
