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
import io
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
from ._rebuild import (_DEFAULT_SAFE, _FOREIGN_DTYPES, _LoadedStorage, _QSCHEMES, _STORAGE_DTYPES, _STORAGE_NAMES,
                      _StorageType, _TORCH_DTYPE_NAMES, _TorchPlaceholder, _dtype_mod, _fg_dtype, _placeholder,
                      _tensor_mod, _torch_globals)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


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
