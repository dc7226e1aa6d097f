"""funcgrad.save / funcgrad.load in PyTorch's checkpoint format, plus the weights_only allow-list.

`save` writes what torch.save writes: a zip archive `<name>/data.pkl` (a protocol-2 pickle in which every
tensor is `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)` and every
storage a persistent id naming `<name>/data/<key>`, whose data starts at a multiple of 64 bytes in the file),
`<name>/byteorder` and `<name>/version`. Real PyTorch can load these files, and `load` reads files written by
torch.save, all without importing torch: the `torch.*` globals in a file are mapped to funcgrad's own rebuild
functions, dtypes, Size, device, layouts and Parameter; torch's sparse tensors load as funcgrad's sparse COO
tensors (CSR/CSC/BSR/BSC too, as funcgrad has no compressed layouts), float8 tensors as funcgrad's float8
tensors (ml_dtypes arrays; without ml_dtypes a RuntimeError names the extra that installs it), and torch objects
funcgrad has no counterpart for (qschemes, quantized / sub-byte / complex32 dtypes) as placeholders that save back
as themselves (tensors of those dtypes are refused with a RuntimeError naming the dtype). Tensors that shared a storage when
saved share one again after loading (views keep their offset and strides). Files of funcgrad's earlier
pickle-free format (`funcgrad/manifest.json` plus .npy arrays) still load.

Loading reads each storage record straight into its final array (peak memory about the data itself), or with
`mmap=True` maps it copy-on-write from the file. A file that is not a checkpoint is refused with what it is
(empty, truncated zip, plain pickle, torch's legacy format, anything else), as is a corrupt byteorder record.

`load(f, weights_only=True)` (the default, as in torch >= 2.6) runs the pickle through funcgrad's restricted
interpreter (_weights_unpickler.py): globals resolve only to tensors, storages, dtypes, plain containers and
what `add_safe_globals` / `safe_globals` allow-list; BUILD / SETITEM / APPEND act only on objects the load
made; refusals raise pickle.UnpicklingError naming what was refused. `weights_only=False` runs Python's full
unpickler: only for files from a trusted source.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import functools
import io
import operator
import json
import os
import pickle
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..nn.parameter import Parameter as _Parameter

from ._weights_unpickler import WeightsUnpickler
from .._src.core.trace import Tracer as _Tracer
from ._dtype import dtype as _DType, _QDtype, QUANTIZED as _QDTYPES
from . import _quantized as _Q
from . import _formats as _F

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _tensor_mod():
    return sys.modules["funcgrad._torch._tensor"]


def _dtype_mod():
    return sys.modules["funcgrad._torch._dtype"]


# --- torch's storage classes and dtype names ------------------------------------------------------------------
_STORAGE_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                  "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_STORAGE_DTYPES = {v: k for k, v in _STORAGE_NAMES.items()}
_STORAGE_DTYPES.update({"QUInt8Storage": "quint8", "QInt8Storage": "qint8", "QInt32Storage": "qint32",
                        "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"})
_TORCH_DTYPE_NAMES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                      "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "float", "double", "half",
                      "long", "int", "short", "cfloat", "cdouble"}
# torch dtypes funcgrad has no arrays for: they load as placeholders (tensors of them are refused clearly)
_FOREIGN_DTYPES = {"bfloat16", "complex32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                   "float8_e8m0fnu", "float4_e2m1fn_x2", "quint8", "qint8", "qint32", "quint4x2", "quint2x4",
                   "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"} | {f"int{i}" for i in range(1, 8)} | {
                   f"uint{i}" for i in range(1, 8)}
_QSCHEMES = {"per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
             "per_channel_affine_float_qparams"}


class _TorchPlaceholder:
    """A torch object funcgrad has no counterpart for (a dtype such as torch.float8_e4m3fn or torch.quint8, a
    qscheme such as torch.per_tensor_affine): it loads as this stand-in, one per name, which prints as torch's
    and is written back as the same torch global by funcgrad.save."""
    __slots__ = ("name", "kind")
    _instances: dict = {}

    def __init__(self, name, kind):
        self.name, self.kind = name, kind

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return (_placeholder, (self.name, self.kind))


def _placeholder(name: str, kind: str) -> _TorchPlaceholder:
    p = _TorchPlaceholder._instances.get(name)
    if p is None:
        p = _TorchPlaceholder._instances[name] = _TorchPlaceholder(name, kind)
    return p


def _fg_dtype(name: str):
    """funcgrad's dtype for a torch dtype name; a clear error for one funcgrad lacks (bfloat16 without
    ml_dtypes, quantized types)."""
    d = _dtype_mod()._NAMES.get(name)
    if d is None:
        extra = " (install ml_dtypes for bfloat16 support)" if name == "bfloat16" else ""
        if name in _dtype_mod().FLOAT8_NAMES:
            extra = (" here: float8 tensors need ml_dtypes, which funcgrad's `safetensors` extra installs "
                     "(pip install 'funcgrad[safetensors]')")
        kind = " (quantized tensors)" if name.startswith(("q", "quint")) else ""
        raise RuntimeError(f"funcgrad.load: the checkpoint holds a tensor of torch.{name}{kind}, a dtype funcgrad "
                           f"has no arrays for{extra}")
    return d


class _StorageType:
    """Stands for torch.<X>Storage / torch.UntypedStorage in a pickle (dtype None = untyped bytes)."""

    def __init__(self, name, dtype_name):
        self.name, self.dtype_name = name, dtype_name

    def __repr__(self):
        return f"torch.{self.name}"


_UNTYPED = _StorageType("UntypedStorage", None)


class _LoadedStorage:
    """A storage read from a checkpoint: a flat writable buffer and the funcgrad _Storage around it."""

    def __init__(self, buf):
        self.buf = buf
        self.st = _tensor_mod()._Storage(buf)


# --- rebuild functions that torch.* globals resolve to -----------------------------------------------------
def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    return _build_view(storage, storage_offset, size, stride, requires_grad, None)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    return _build_view(storage, storage_offset, size, stride, requires_grad, dtype)


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _build_view(storage, storage_offset, size, stride, False, None)


def _build_view(storage, offset, size, stride, requires_grad, dtype):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError(f"funcgrad.load: expected a storage, got {type(storage).__name__}")
    buf = storage.buf
    if dtype is not None:
        if not isinstance(dtype, (_DType, _TorchPlaceholder)):
            raise pickle.UnpicklingError(f"funcgrad.load: expected a dtype, got {type(dtype).__name__}")
        want = _fg_dtype(dtype.name).dtype
        if buf.dtype != want:
            if buf.dtype != np.uint8 or buf.size % want.itemsize:
                raise RuntimeError(f"funcgrad.load: storage of {buf.dtype} cannot hold {dtype}")
            buf = buf.view(want)
            storage.buf = buf
            storage.st.buf = buf
    try:
        size, stride = tuple(operator.index(s) for s in size), tuple(operator.index(s) for s in stride)
        offset = operator.index(offset)
    except TypeError:
        raise pickle.UnpicklingError(f"funcgrad.load: a tensor's size, stride and offset must be integers, got "
                                     f"{size!r}, {stride!r}, {offset!r}") from None
    if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"funcgrad.load: invalid tensor layout size={size} stride={stride} offset={offset}")
    if all(s > 0 for s in size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= buf.size:
            raise RuntimeError(f"funcgrad.load: tensor of size {list(size)}, stride {list(stride)} and offset {offset} "
                               f"is out of bounds for a storage of {buf.size} elements")
    item = buf.itemsize
    base = buf[offset:] if offset < buf.size else buf[:0]
    strides = tuple(s * item for s in stride)
    if base.dtype.isbuiltin != 1:  # ml_dtypes' types (bfloat16, float8): as_strided cannot rebuild them itself
        view = np.lib.stride_tricks.as_strided(base.view(f"u{item}"), shape=size, strides=strides).view(base.dtype)
    else:
        view = np.lib.stride_tricks.as_strided(base, shape=size, strides=strides)
    t = _tensor_mod()._make(view)
    t._st = storage.st
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _Parameter(data, requires_grad)
    _set_obj_state(p, state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor subclass with attributes: func(*args) must give a new tensor (a rebuild function's), which
    becomes a `new_type` and takes `state`; anything else would let `state` land on a shared object."""
    if not isinstance(new_type, type) or not issubclass(new_type, _fg.Tensor):
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: {new_type!r} is not a Tensor type")
    if not isinstance(args, tuple):
        raise pickle.UnpicklingError("_rebuild_from_type_v2: args must be a tuple")
    ret = func(*args)
    if not isinstance(ret, _fg.Tensor) or func not in _TENSOR_REBUILDS:
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: {getattr(func, '__name__', func)!r} does not rebuild "
                                     "a tensor")
    if type(ret) is not new_type and new_type is not _fg.Tensor:
        ret = _fg.Tensor._make_subclass(new_type, ret.detach(), ret.requires_grad)
    _set_obj_state(ret, state)
    return ret


def _set_obj_state(obj, state):
    """torch._utils._set_obj_state on a tensor made by this load: attribute names only (no dunder names, which
    would reach the class)."""
    if not state:
        return
    if isinstance(state, tuple):
        if len(state) != 2:
            raise pickle.UnpicklingError(f"Invalid serialized state: {state!r}")
        d, slots = state
    else:
        d, slots = state, None
    for part in (d, slots):
        if not part:
            continue
        if not isinstance(part, dict) or not all(isinstance(k, str) and not (k.startswith("__") and k.endswith("__"))
                                                 for k in part):
            raise pickle.UnpicklingError("funcgrad.load: a tensor's saved state must map attribute names (not "
                                         f"dunder names) to values; got {part!r}"[:300])
        for k, v in part.items():
            setattr(obj, k, v)


def _get_layout(name):
    """torch.serialization._get_layout: the layout tag named "torch.<layout>"."""
    tag = _F.layout._instances.get(name[6:] if isinstance(name, str) and name.startswith("torch.") else None)
    if tag is None:
        raise RuntimeError(f"funcgrad.load: unknown tensor layout {name!r}")
    return tag


def _rebuild_sparse_tensor(layout, data):
    """A sparse tensor saved by torch: COO as funcgrad's sparse COO tensor; CSR/CSC/BSR/BSC (which funcgrad has
    no layout for) as the sparse COO tensor of the same entries. Indices are checked as torch checks them."""
    if layout is _F.sparse_coo:
        if len(data) == 3:
            (indices, values, size), coalesced = data, None
        else:
            indices, values, size, coalesced = data
        return _fg.sparse_coo_tensor(indices, values, size, is_coalesced=coalesced)
    if layout not in (_F.sparse_csr, _F.sparse_csc, _F.sparse_bsr, _F.sparse_bsc):
        raise NotImplementedError(f"rebuilding sparse tensor for layout {layout}")
    compressed, plain, values, size = data
    size = tuple(operator.index(n) for n in size)
    comp, pl = np.asarray(compressed.numpy(), np.int64), np.asarray(plain.numpy(), np.int64)
    vals = values
    blocked = layout in (_F.sparse_bsr, _F.sparse_bsc)
    if comp.ndim != 1 or pl.ndim != 1 or len(size) != 2 or vals.ndim != (3 if blocked else 1):
        raise NotImplementedError(f"funcgrad.load: batched or hybrid {layout} tensors are not supported")
    bs = tuple(vals.shape[1:]) if blocked else (1, 1)
    col_major = layout in (_F.sparse_csc, _F.sparse_bsc)
    ncomp = size[1] // bs[1] if col_major else size[0] // bs[0]
    nnz = pl.shape[0]
    if comp.shape[0] != ncomp + 1 or (comp.shape[0] and (comp[0] != 0 or comp[-1] != nnz)) or \
            np.any(np.diff(comp) < 0) or vals.shape[0] != nnz:
        raise RuntimeError(f"funcgrad.load: invalid {layout} tensor: its compressed indices do not describe "
                           f"{nnz} entries of a {list(size)} tensor")
    major = np.repeat(np.arange(ncomp, dtype=np.int64), np.diff(comp))
    rows, cols = (pl, major) if col_major else (major, pl)
    if blocked:                            # every block's entries, in row-major order within the block
        i, j = np.meshgrid(np.arange(bs[0]), np.arange(bs[1]), indexing="ij")
        rows = (rows[:, None] * bs[0] + i.reshape(1, -1)).reshape(-1)
        cols = (cols[:, None] * bs[1] + j.reshape(1, -1)).reshape(-1)
        vals = vals.reshape(-1)
    return _fg.sparse_coo_tensor(_fg.tensor(np.stack([rows, cols])), vals, size)


def _unsupported_rebuild(name, what):
    """torch._utils.<name> for a tensor kind funcgrad lacks: recognised (not an unknown global), and refused
    with a RuntimeError naming it."""
    def rebuild(*args, **kwargs):
        raise RuntimeError(f"funcgrad.load: the checkpoint holds {what}, which funcgrad does not have")
    rebuild.__name__ = rebuild.__qualname__ = name
    return rebuild


def _rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad, backward_hooks):
    """A quantized tensor saved by torch: its integer representation (a QUInt8 / QInt8 / QInt32 storage) and
    quantizer (qscheme, scale(s), zero point(s)[, axis])."""
    ints = _build_view(storage, storage_offset, size, stride, False, None)._v
    qdtype = _Q._Q_OF_NP.get(ints.dtype)
    if qdtype is None or not isinstance(quantizer_params, tuple) or not quantizer_params:
        raise pickle.UnpicklingError("funcgrad.load: _rebuild_qtensor needs a quantized storage and quantizer params")
    scheme, params = quantizer_params[0], quantizer_params[1:]
    if scheme in (_Q.per_tensor_affine, _Q.per_tensor_symmetric) and len(params) == 2:
        scale, zp = params
        if not isinstance(scale, (float, int)) or not isinstance(zp, int):
            raise pickle.UnpicklingError(f"funcgrad.load: invalid per-tensor quantizer params {params!r}"[:200])
        qp = _Q._QParams(qdtype, _Q.per_tensor_affine, float(scale), int(zp))
    elif scheme in _Q._PER_CHANNEL and len(params) == 3:
        scales, zps, axis = params
        if not isinstance(scales, _fg.Tensor) or not isinstance(zps, _fg.Tensor) or not isinstance(axis, int) or \
                scales.ndim != 1 or zps.shape != scales.shape or not 0 <= axis < max(ints.ndim, 1) or \
                scales.shape[0] != (ints.shape[axis] if ints.ndim else 1):
            raise pickle.UnpicklingError("funcgrad.load: invalid per-channel quantizer params")
        z = np.array(zps._host())
        qp = _Q._QParams(qdtype, _Q.per_channel_affine_float_qparams if z.dtype.kind == "f" else _Q.per_channel_affine,
                         np.array(scales._host(), np.float64), z, axis)
    else:
        raise RuntimeError(f"funcgrad.load: unsupported quantized tensor scheme {scheme!r}")
    return _Q.make_qtensor(ints, qp)


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, _fg.Tensor):
        raise pickle.UnpicklingError("_rebuild_device_tensor_from_cpu_tensor needs a tensor")
    t = data.to(dtype=dtype) if isinstance(dtype, _DType) else data
    if requires_grad:
        t.requires_grad_(True)
    return t


_TENSOR_REBUILDS = {_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_tensor, _rebuild_parameter,
                    _rebuild_parameter_with_state, _rebuild_device_tensor_from_cpu_tensor, _rebuild_sparse_tensor,
                    _rebuild_qtensor}
_TENSOR_REBUILDS |= {_unsupported_rebuild(name, what) for name, what in {
    "_rebuild_meta_tensor_no_storage": "a meta tensor (no data)", "_rebuild_nested_tensor": "a nested tensor",
    "_rebuild_wrapper_subclass": "a wrapper tensor subclass"}.items()}


@functools.lru_cache(maxsize=1)
def _torch_globals():
    """Full names of the torch globals a checkpoint may use, mapped to funcgrad objects."""
    m = {"torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
         "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
         "torch._utils._rebuild_tensor": _rebuild_tensor,
         "torch._utils._rebuild_parameter": _rebuild_parameter,
         "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
         "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
         "torch.nn.parameter.Parameter": _Parameter,
         "torch.Tensor": _fg.Tensor,
         "torch.Size": _fg.Size,
         "torch.device": _fg.device,
         "torch.storage.UntypedStorage": _UNTYPED,
         "torch.UntypedStorage": _UNTYPED,
         "torch.serialization._get_layout": _get_layout}
    for f in _TENSOR_REBUILDS:
        m["torch._utils." + f.__name__] = f
    for name, dt in _STORAGE_DTYPES.items():
        m["torch." + name] = _StorageType(name, dt)
    return m


_DEFAULT_SAFE = {"collections.OrderedDict": OrderedDict, "collections.Counter": collections.Counter,
                 "builtins.set": set, "builtins.frozenset": frozenset, "builtins.bytearray": bytearray,
                 "builtins.complex": complex, "_codecs.encode": codecs.encode}


# --- the user allow-list -------------------------------------------------------------------------------------
_safe_list: list = []


def _entry_name(entry):
    if isinstance(entry, tuple):
        return entry[1], entry[0]
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals: list) -> None:
    """Allow the given classes/functions (or (obj, "module.qualname") pairs) in weights_only loads."""
    if not isinstance(safe_globals, list):
        raise TypeError(f"safe_globals must be a list, but got {type(safe_globals).__name__}")
    _safe_list.extend(safe_globals)


def get_safe_globals() -> list:
    """The user-added globals allowed in weights_only loads."""
    return list(_safe_list)


def clear_safe_globals() -> None:
    """Forget every user-added safe global."""
    _safe_list.clear()


class safe_globals:
    """Context manager allowing the given globals in weights_only loads inside its block."""

    def __init__(self, safe_globals: list):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._saved = list(_safe_list)
        _safe_list.extend(self.safe_globals)

    def __exit__(self, *exc):
        _safe_list[:] = self._saved


def _user_safe():
    return dict(_entry_name(e) for e in _safe_list)


def _unsupported(full):
    return (f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full}])` or the "
            f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
            "global if you trust this class/function.")


def _wo_message(msg):
    return ("Weights only load failed. This file can still be loaded, to do so you have two options, \033[1mdo "
            "those steps only if you trust the source of the checkpoint\033[0m. \n\t(1) " + UNSAFE_MESSAGE
            + "\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the "
              "following error message.\n\tWeightsUnpickler error: " + msg + _DOCS_MESSAGE)


# --- saving ----------------------------------------------------------------------------------------------
class _Global:
    """A reference to a torch global written into the pickle by name (torch need not be importable)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # (pickle insists that a reduce function be callable)
        raise TypeError(f"{self.module}.{self.name} is a placeholder written into checkpoints")


_G_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_G_REBUILD_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_G_PARAM = _Global("torch._utils", "_rebuild_parameter")
_G_ODICT = _Global("collections", "OrderedDict")
_G_SIZE = _Global("torch", "Size")
_G_DEVICE = _Global("torch", "device")
_G_UNTYPED = _Global("torch.storage", "UntypedStorage")
_G_LAYOUT = _Global("torch.serialization", "_get_layout")


class _StorageRef:
    """A storage to write: a flat C-contiguous array and its key."""

    qname = None    # (torch's storage class of a quantized tensor's integers: QUInt8Storage, ...)

    def __init__(self, arr, key):
        self.arr, self.key = arr, key


class _Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes tensors, dtypes, Size and device the way torch.save does."""
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}        # id(funcgrad _Storage or array) -> _StorageRef
        self.keep = []            # temporaries whose ids must stay unique while pickling
        self.globals = {}

    def _save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_torch_global

    def _save_dtype(self, obj):
        self.write(pickle.GLOBAL + f"torch\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_DType] = _save_dtype
    dispatch[_TorchPlaceholder] = _save_dtype
    dispatch[_QDtype] = _save_dtype
    dispatch[_Q.qscheme] = _save_dtype

    def _g(self, module, name):
        key = (module, name)
        if key not in self.globals:
            self.globals[key] = _Global(module, name)
        return self.globals[key]

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            name = obj.qname or _STORAGE_NAMES.get(str(_fg_dtype_of(obj.arr)))
            stype = self._g("torch", name) if name is not None else _G_UNTYPED
            numel = obj.arr.size if name is not None else obj.arr.nbytes
            return ("storage", stype, obj.key, "cpu", numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _fg.Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, _fg.Size):
            return (_G_SIZE, (tuple(int(s) for s in obj),))
        if isinstance(obj, _fg.device):
            return (_G_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if isinstance(obj, _fg.layout):
            return (_G_LAYOUT, (f"torch.{obj.name}",))
        return NotImplemented

    def _storage_of(self, t):
        """(storage ref, offset, strides) of a tensor, sharing storages between views where the layout allows;
        otherwise a private contiguous copy."""
        v = t._host()
        item = v.itemsize
        st = t._st if t._v is not None else None
        buf = getattr(st, "buf", None)
        if isinstance(buf, np.ndarray) and buf.flags.c_contiguous and buf.dtype == v.dtype and \
                all(s >= 0 and s % item == 0 for s in v.strides):
            off_bytes = v.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
            if off_bytes >= 0 and off_bytes % item == 0:
                ref = self.storages.get(id(st))
                if ref is None:
                    ref = self.storages[id(st)] = _StorageRef(buf.reshape(-1), str(len(self.storages)))
                    self.keep.append(st)
                return ref, off_bytes // item, tuple(s // item for s in v.strides)
        arr = np.ascontiguousarray(v).reshape(-1)
        ref = _StorageRef(arr, str(len(self.storages)))
        self.storages[id(arr)] = ref
        self.keep.append(arr)
        strides = _tensor_mod()._contig_strides(v.shape)
        return ref, 0, strides

    def _reduce_tensor(self, t):
        if t._v is None and isinstance(t._a, _Tracer):
            raise TypeError("cannot save a tensor that holds a tracer (inside a funcgrad.func transform)")
        if getattr(t, "_is_param", False) and type(t) is not _fg.Tensor:
            data = t.detach()
            self.keep.append(data)
            return (_G_PARAM, (data, bool(t.requires_grad), OrderedDict()))
        if t.is_quantized:
            return self._reduce_qtensor(t)
        ref, off, strides = self._storage_of(t)
        size = tuple(int(s) for s in t.shape)
        if _STORAGE_NAMES.get(str(_fg_dtype_of(ref.arr))) is None:
            return (_G_REBUILD_V3, (ref, off, size, strides, bool(t.requires_grad), OrderedDict(),
                                    self._g("torch", str(_fg_dtype_of(ref.arr)))))
        return (_G_REBUILD_V2, (ref, off, size, strides, bool(t.requires_grad), OrderedDict()))


    def _reduce_qtensor(self, t):
        """torch._utils._rebuild_qtensor(storage, offset, size, stride, quantizer params, requires_grad, hooks)."""
        arr = np.ascontiguousarray(t._v).reshape(-1)
        ref = _StorageRef(arr, str(len(self.storages)))
        ref.qname = _Q_STORAGE_NAMES[t.dtype.name]
        self.storages[id(arr)] = ref
        self.keep.append(arr)
        qp = t._qp()
        if qp.per_channel:
            params = (qp.scheme, _fg.tensor(np.array(qp.scale, np.float64)), _fg.tensor(np.array(qp.zero_point)),
                      int(qp.axis))
        else:
            params = (qp.scheme, float(qp.scale), int(qp.zero_point))
        self.keep.append(params)
        return (self._g("torch._utils", "_rebuild_qtensor"),
                (ref, 0, tuple(int(s) for s in t.shape), _tensor_mod()._contig_strides(t._v.shape), params, False,
                 OrderedDict()))


_Q_STORAGE_NAMES = {v: k for k, v in _STORAGE_DTYPES.items() if v in ("quint8", "qint8", "qint32", "quint4x2")}


def _fg_dtype_of(arr):
    return _dtype_mod()._NP2T[arr.dtype].name


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """Save `obj` (tensors, state_dicts, whole modules/optimizers, any picklable object) to a path or a
    writable binary file, in torch.save's zip format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("funcgrad.save writes only the zip format "
                                  "(_use_new_zipfile_serialization=False is not supported)")
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as fh:
            _save(obj, fh, name, pickle_protocol, _disable_byteorder_record)
    else:
        _save(obj, f, "archive", pickle_protocol, _disable_byteorder_record)


def _save(obj, fh, name, protocol, no_byteorder):
    data = io.BytesIO()
    p = _Pickler(data, protocol)
    p.dump(obj)
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", data.getvalue())
        if not no_byteorder:
            z.writestr(f"{name}/byteorder", "little")      # the data below is always written little-endian
        for ref in p.storages.values():
            arr = ref.arr
            if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            _write_aligned(z, f"{name}/data/{ref.key}", np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
        z.writestr(f"{name}/version", "3\n")


_ALIGNMENT = 64


def _write_aligned(z, arcname, raw):
    """Write a stored record whose data starts at a multiple of 64 bytes in the file (as torch.save pads with an
    "FB" extra field), so that load(mmap=True) maps aligned arrays; the array is streamed, not copied."""
    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = raw.size
    zip64 = raw.size * 1.05 > zipfile.ZIP64_LIMIT
    header = 30 + len(arcname.encode("utf-8")) + 4 + (20 if zip64 else 0)
    pad = -(z.fp.tell() + header) % _ALIGNMENT
    info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
    with z.open(info, "w", force_zip64=zip64) as w:
        w.write(memoryview(raw))


# --- loading --------------------------------------------------------------------------------------------------
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")     # never allowed, even when allow-listed (as torch)
_MISSING = object()
_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19."  # torch.save(_use_new_zipfile_serialization=False)


def _map_name(module, name):
    """Python 2 names in protocol-2 pickles, mapped as pickle does."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _wo_check_call(func, args):
    """Calls a weights_only load refuses although the callable is allowed, as they would let a few bytes of pickle
    allocate any amount of memory: a Tensor class called on anything but tensors (torch.Tensor(n)) and
    bytearray(n)."""
    if func is bytearray and args and isinstance(args[0], int):
        raise pickle.UnpicklingError(f"bytearray({args[0]}) allocates memory the file does not hold: a weights_only "
                                     "load builds bytearrays from their data only")
    if isinstance(func, type) and issubclass(func, _fg.Tensor) and args and not isinstance(args[0], _fg.Tensor):
        raise pickle.UnpicklingError(f"{func.__module__}.{func.__qualname__}({type(args[0]).__name__}, ...): a "
                                     "weights_only load makes tensors from the checkpoint's storages only")


def _known_global(module, name, weights_only):
    """The funcgrad object a torch / default-safe global stands for, or _MISSING."""
    full = f"{module}.{name}"
    g = _torch_globals()
    if full in g:
        return g[full]
    if full in _DEFAULT_SAFE:
        return _DEFAULT_SAFE[full]
    if module == "torch":
        d = _dtype_mod()._NAMES.get(name) if name in _TORCH_DTYPE_NAMES or name in _dtype_mod().FLOAT8 else None
        if d is not None:
            return d
        if name in _QDTYPES:
            return _QDTYPES[name]
        if name in _TORCH_DTYPE_NAMES or name in _FOREIGN_DTYPES:
            return _placeholder(name, "dtype")
        if name in _QSCHEMES:
            return _Q.qscheme._instances[name]
    return _MISSING


def _resolver(user):
    """resolve(module, name) for the weights_only interpreter: the allowed object, else UnpicklingError."""
    def resolve(module, name):
        module, name = _map_name(module, name)
        obj = _known_global(module, name, True)
        if obj is not _MISSING:
            return obj
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            err = pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is "
                                         "blocked.")
        elif full in user:
            return user[full]
        else:
            err = pickle.UnpicklingError(_unsupported(full))
        err.global_name = full
        raise err
    return resolve


class _Archive:
    """An opened checkpoint zip whose storage records are read straight into their final arrays (one copy, no
    intermediate bytes), or mapped copy-on-write from the file with mmap=True."""

    def __init__(self, fh, zf, prefix, path, mmap, map_location):
        self.fh, self.zf, self.prefix, self.path, self.mmap = fh, zf, prefix, path, mmap
        self.map_location = map_location
        self.loaded = {}
        self._mm = None
        fh.seek(0, io.SEEK_END)
        self.size = fh.tell()
        bo = prefix + "byteorder"
        self.byteorder = "little"          # torch's default for files without the record
        if bo in zf.NameToInfo:
            rec = zf.read(bo)
            if rec not in (b"little", b"big"):
                raise ValueError(f"Unknown endianness type: {rec.decode('utf-8', 'replace')} (funcgrad.load: the "
                                 "checkpoint's byteorder record must be 'little' or 'big'; the file is corrupt)")
            self.byteorder = rec.decode()

    def _truncated(self, name):
        return RuntimeError(f"funcgrad.load: the checkpoint is truncated: record {name!r} runs past the end of "
                            f"the {self.size}-byte file (was it written or copied completely?)")

    def _data_offset(self, info):
        self.fh.seek(info.header_offset)
        head = self.fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"funcgrad.load: corrupt zip archive: bad local header for record "
                               f"{info.filename!r}")
        n, m = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
        return info.header_offset + 30 + n + m

    def _mapped(self):
        if self._mm is None:
            self._mm = np.memmap(self.path, dtype=np.uint8, mode="c")    # copy-on-write, as torch's MAP_PRIVATE
        return self._mm

    def read_array(self, name, dtype, count):
        """The `count` elements of `dtype` in record `name`, in native byte order."""
        info = self.zf.NameToInfo.get(name)
        if info is None:
            raise RuntimeError(f"funcgrad.load: the checkpoint has no record {name!r} for a storage it uses "
                               "(truncated or corrupt file)")
        nbytes = count * dtype.itemsize
        if info.file_size != nbytes:
            raise RuntimeError(f"funcgrad.load: record {name!r} holds {info.file_size} bytes but the checkpoint "
                               f"declares a storage of {count} x {dtype} = {nbytes} bytes (corrupt file)")
        swap = dtype.itemsize > 1 and self.byteorder != sys.byteorder
        if nbytes == 0:
            return np.empty(0, dtype)
        if info.compress_type == zipfile.ZIP_STORED:
            off = self._data_offset(info)
            if off + nbytes > self.size:
                raise self._truncated(name)
            if self.mmap and not swap and off % dtype.itemsize == 0:
                return self._mapped()[off:off + nbytes].view(dtype=dtype, type=np.ndarray)
            arr = np.empty(count, dtype)
            self._readinto(off, arr.view(np.uint8), name)
        else:                               # a re-compressed archive: decompress in chunks into the array
            arr = np.empty(count, dtype)
            out = arr.view(np.uint8)
            with self.zf.open(info) as r:
                got = 0
                while got < nbytes:
                    chunk = r.read(min(1 << 22, nbytes - got))
                    if not chunk:
                        raise self._truncated(name)
                    out[got:got + len(chunk)] = np.frombuffer(chunk, np.uint8)
                    got += len(chunk)
        if swap:
            arr.byteswap(inplace=True)
        return arr

    def _readinto(self, off, out, name):
        self.fh.seek(off)
        n, got = out.size, 0
        readinto = getattr(self.fh, "readinto", None)
        mv = memoryview(out)
        while got < n:
            if readinto is not None:
                k = readinto(mv[got:])
            else:
                chunk = self.fh.read(min(1 << 22, n - got))
                k = len(chunk)
                out[got:got + k] = np.frombuffer(chunk, np.uint8)
            if not k:
                raise self._truncated(name)
            got += k

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage" or len(pid) != 5:
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid!r}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"funcgrad.load: unknown storage type {stype!r}")
        if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise pickle.UnpicklingError(f"funcgrad.load: invalid storage size {numel!r}")
        key = str(key)
        if key in self.loaded:
            return self.loaded[key]
        _map_location(self.map_location, str(location))
        dt = np.dtype(np.uint8) if stype.dtype_name is None else _fg_dtype(stype.dtype_name).dtype
        st = _LoadedStorage(self.read_array(f"{self.prefix}data/{key}", dt, numel))
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, dict, _fg.device)):
            moved = ml(st, str(location))
            if moved is not None and not isinstance(moved, _LoadedStorage):
                raise RuntimeError("funcgrad.load: a map_location callable must return the storage it was given "
                                   f"(or None); got {type(moved).__name__}")
            st = moved or st
        self.loaded[key] = st
        return st


class _FullUnpickler(pickle._Unpickler):
    """weights_only=False: Python's own (pure-Python) unpickler, whose memo is a dict (the C one sizes a list by
    the largest memo index a file names), with torch.* globals mapped to funcgrad's."""
    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, archive, max_memo, **kw):
        super().__init__(file, **kw)
        self.archive, self.max_memo = archive, max_memo

    def find_class(self, module, name):
        module, name = _map_name(module, name)
        obj = _known_global(module, name, False)
        if obj is not _MISSING:
            return obj
        if module == "torch" or module.startswith("torch."):
            try:
                return super().find_class("funcgrad" + module[5:], name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(f"funcgrad.load: the checkpoint needs {module}.{name}, which has no "
                                             "funcgrad counterpart") from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self.archive.persistent_load(pid)

    def load(self):
        try:
            return super().load()
        except EOFError:
            if self.max_memo == 0:
                raise
            raise pickle.UnpicklingError("pickle data was truncated (no STOP opcode)") from None

    def _memo_index(self, i):
        if i > self.max_memo:
            raise pickle.UnpicklingError(f"corrupt pickle: memo index {i} is out of range for a pickle of "
                                         f"{self.max_memo} bytes")
        return i

    def load_long_binput(self):
        self.memo[self._memo_index(int.from_bytes(self.read(4), "little"))] = self.stack[-1]
    dispatch[pickle.LONG_BINPUT[0]] = load_long_binput

    def load_put(self):
        i = int(self.readline()[:-1])
        if i < 0:
            raise ValueError("negative PUT argument")
        self.memo[self._memo_index(i)] = self.stack[-1]
    dispatch[pickle.PUT[0]] = load_put


def _map_location(map_location, location):
    """Resolve where a storage saved at `location` goes; funcgrad restores every tensor on the CPU."""
    target = location
    if map_location is None:
        pass
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif isinstance(map_location, (str, _fg.device)) or hasattr(map_location, "type"):
        target = str(map_location)
    elif callable(map_location):
        return
    else:
        raise TypeError(f"map_location should be a str, a device, a dict or a callable, but got "
                        f"{type(map_location).__name__}")
    if str(target).split(":")[0] not in ("cpu",):
        if not _fg.cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved by funcgrad.save or torch.save (zip format) from a path or a binary file.

    weights_only (default True unless `pickle_module` is given) restricts unpickling to tensors, storages,
    dtypes, plain containers and allow-listed globals (see funcgrad._weights_unpickler);
    TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD override it as in torch. map_location
    may be 'cpu', a device, a dict or a callable; tensors are always restored on the CPU. Storages are read
    straight into their arrays; with mmap=True (f must be a path) they are mapped from the file copy-on-write
    instead (writes to the tensors stay in memory), as torch's default MAP_PRIVATE."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    truthy = ("1", "y", "yes", "true")
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force_wo and force_no_wo:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force_wo:
        weights_only = True
    elif force_no_wo and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=2)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if _is_path(f):
        with open(f, "rb") as fh:
            return _load_file(fh, os.fspath(f), bool(mmap), map_location, weights_only, pickle_load_args)
    fh = f
    if not (hasattr(f, "seekable") and f.seekable()):
        fh = io.BytesIO(f.read())          # zip needs to seek
    return _load_file(fh, None, False, map_location, weights_only, pickle_load_args)


def _not_a_checkpoint(head):
    """The error for a file that is not a zip checkpoint, saying what it is."""
    if not head:
        return EOFError("funcgrad.load: the file is empty (0 bytes), so it holds no checkpoint (was it written "
                        "completely?)")
    if head.startswith(_LEGACY_MAGIC[:12]) or head[257:262] == b"ustar":
        return RuntimeError("funcgrad.load: unsupported legacy format: this checkpoint was written by torch.save "
                            "with _use_new_zipfile_serialization=False (or by torch < 1.6); load it with torch and "
                            "save it again with a current torch.save")
    if head.startswith(b"PK\x05\x06"):
        return RuntimeError("funcgrad.load: not a torch checkpoint: the file is an empty zip archive")
    if head[:1] == b"\x80" and 2 <= head[1] <= 5:
        return RuntimeError("funcgrad.load: not a torch checkpoint: the file is a plain pickle (as pickle.dump "
                            "writes), not torch.save's zip archive; read it with pickle only if you trust it")
    return RuntimeError("funcgrad.load: not a torch checkpoint: torch.save writes a zip archive (starting with "
                        f"b'PK\\x03\\x04'), and this file starts with {head[:8]!r}")


def _load_file(fh, path, mmap, map_location, weights_only, pickle_load_args):
    start = fh.tell()
    head = fh.read(512)
    fh.seek(start)
    if not head.startswith(b"PK\x03\x04"):
        raise _not_a_checkpoint(head)
    try:
        z = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise RuntimeError(f"funcgrad.load: truncated or corrupt zip archive ({e}): the checkpoint was probably not "
                           "written or copied completely") from None
    with z:
        names = z.namelist()
        if _OLD_PREFIX + "manifest.json" in names:
            return _load_old(z)
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            if any(n.endswith("constants.pkl") for n in names):
                raise RuntimeError("funcgrad.load: this is a TorchScript archive, which funcgrad cannot load")
            raise RuntimeError("funcgrad.load: not a torch checkpoint: the zip archive has no <name>/data.pkl "
                               "record (and no funcgrad manifest)")
        prefix = pkl[0][:-len("data.pkl")]
        archive = _Archive(fh, z, prefix, path, mmap, map_location)
        raw = z.read(pkl[0])
        kw = {k: v for k, v in pickle_load_args.items() if k in ("encoding", "errors")}
        if not weights_only:
            return _FullUnpickler(io.BytesIO(raw), archive, len(raw), **kw).load()
        u = WeightsUnpickler(raw, resolve=_resolver(_user_safe()), persistent_load=archive.persistent_load,
                             build_types=lambda: tuple(_user_safe().values()), construct_types=(_Parameter,),
                             check_call=_wo_check_call, **kw)
        try:
            return u.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_wo_message(str(e))) from None


def get_unsafe_globals_in_checkpoint(f) -> list:
    """What a weights_only load of the checkpoint would refuse, found without running it: the globals it names
    that are not allowed (as "module.name", as torch), then the operations on objects it may not change (as
    "BUILD on torch.float32")."""
    if _is_path(f):
        with open(f, "rb") as fh:
            raw = _data_pkl(fh)
    else:
        raw = _data_pkl(f if hasattr(f, "seekable") and f.seekable() else io.BytesIO(f.read()))
    u = WeightsUnpickler(raw, resolve=_resolver(_user_safe()), persistent_load=None,
                         build_types=lambda: tuple(_user_safe().values()), scan=True)
    u.load()
    return list(u.refused)


def _data_pkl(fh):
    start = fh.tell()
    head = fh.read(512)
    fh.seek(start)
    if not head.startswith(b"PK\x03\x04"):
        raise _not_a_checkpoint(head)
    with zipfile.ZipFile(fh) as z:
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("funcgrad.load: not a torch checkpoint: the zip archive has no <name>/data.pkl record")
        return z.read(pkl[0])


# --- funcgrad's earlier pickle-free format (read only) ----------------------------------------------------
_OLD_MAGIC = "funcgrad.save"
_OLD_VERSION = 1
_OLD_PREFIX = "funcgrad/"


class _OldReader:
    def __init__(self, z):
        self.z = z
        self.tensors = {}
        self.dtypes = {str(t): t for t in set(_dtype_mod()._NP2T.values())}

    def array(self, i):
        with self.z.open(f"{_OLD_PREFIX}data/{int(i)}.npy") as fh:
            return np.load(io.BytesIO(fh.read()), allow_pickle=False)

    def dec(self, node):
        if node is None or isinstance(node, bool):
            return node
        if not isinstance(node, dict) or "T" not in node:
            raise ValueError("corrupt funcgrad.save file: unexpected manifest entry")
        t, v = node["T"], node.get("v")
        simple = {"int": int, "float": float.fromhex, "str": str, "bytes": bytes.fromhex}
        if t in simple:
            return simple[t](v)
        if t == "complex":
            return complex(float.fromhex(v[0]), float.fromhex(v[1]))
        if t == "tensor":
            ten = _fg.from_numpy(self.array(v))
            if node.get("parameter"):
                ten = _Parameter(ten, requires_grad=bool(node.get("requires_grad")))
            elif node.get("requires_grad"):
                ten.requires_grad_(True)
            self.tensors[int(v)] = ten
            return ten
        if t == "ref":
            return self.tensors[int(v)]
        if t == "ndarray":
            return self.array(v)
        if t == "npscalar":
            return self.array(v)[()]
        if t == "dtype":
            if v not in self.dtypes:
                raise ValueError(f"unknown dtype {v!r} in funcgrad.save file")
            return self.dtypes[v]
        if t == "size":
            return _fg.Size([int(s) for s in v])
        if t == "list":
            return [self.dec(x) for x in v]
        if t == "tuple":
            return tuple(self.dec(x) for x in v)
        if t in ("dict", "odict"):
            d = OrderedDict() if t == "odict" else {}
            for k, val in v:
                d[self.dec(k)] = self.dec(val)
            return d
        raise ValueError(f"corrupt funcgrad.save file: unknown entry type {t!r}")


def _load_old(z):
    manifest = json.loads(z.read(_OLD_PREFIX + "manifest.json").decode("utf-8"))
    if manifest.get("format") != _OLD_MAGIC:
        raise RuntimeError("not a funcgrad.save file: bad format marker")
    if manifest.get("version", 0) > _OLD_VERSION:
        raise RuntimeError(f"funcgrad.save file version {manifest.get('version')} is newer than this funcgrad "
                           f"supports ({_OLD_VERSION})")
    return _OldReader(z).dec(manifest["root"])
