"""What a checkpoint's `torch.*` globals resolve to when funcgrad loads it: torch's rebuild functions
(tensors, views, Parameters, sparse and quantized tensors, subclasses' state), torch's storage classes and dtype
names, and placeholders for torch objects funcgrad has no counterpart for, which save back as themselves."""
from __future__ import annotations

import codecs
import collections
import functools
import operator
import pickle
import sys
from collections import OrderedDict

import numpy as np
import funcgrad._torch as _fg

from ..nn.parameter import Parameter as _Parameter
from ._dtype import dtype as _DType
from . import _quantized as _Q
from . import _formats as _F


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


_STORAGE_DTYPES.update({"QUInt8Storage": "quint8", "QInt8Storage": "qint8", "QInt32Storage": "qint32",
                        "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4"})


_TENSOR_REBUILDS |= {_unsupported_rebuild(name, what) for name, what in {
    "_rebuild_meta_tensor_no_storage": "a meta tensor (no data)", "_rebuild_nested_tensor": "a nested tensor",
    "_rebuild_wrapper_subclass": "a wrapper tensor subclass"}.items()}
