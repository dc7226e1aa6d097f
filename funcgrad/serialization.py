"""funcgrad.save / funcgrad.load in PyTorch's checkpoint format, plus the weights_only allow-list.

`save` writes what torch.save writes: a zip archive `<name>/data.pkl` (a protocol-2 pickle in which every
tensor is `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)` and every
storage a persistent id naming `<name>/data/<key>`), `<name>/byteorder` and `<name>/version`. Real PyTorch
can load these files, and `load` reads files written by torch.save, all without importing torch: the
`torch.*` globals in a file are mapped to funcgrad's own rebuild functions, dtypes, Size, device and
Parameter. Tensors that shared a storage when saved share one again after loading (views keep their
offset and strides). Files of funcgrad's earlier pickle-free format (`funcgrad/manifest.json` plus .npy
arrays) still load.

`load(f, weights_only=True)` (the default, as in torch >= 2.6) unpickles with a restricted unpickler that
resolves only tensors, storages, dtypes, plain containers and the globals allow-listed with
`add_safe_globals` / `safe_globals`; anything else raises pickle.UnpicklingError naming the global.
`weights_only=False` runs the full unpickler: only for files from a trusted source.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import collections
import io
import json
import os
import pickle
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as np

import funcgrad as _fg

from .core.trace import Tracer as _Tracer
from .tensor._dtype import dtype as _DType

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint"]

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to "
    "`True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def _tensor_mod():
    return sys.modules["funcgrad.tensor._tensor"]


def _dtype_mod():
    return sys.modules["funcgrad.tensor._dtype"]


# --- torch's storage classes and dtype names ------------------------------------------------------------------
_STORAGE_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                  "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_STORAGE_DTYPES = {v: k for k, v in _STORAGE_NAMES.items()}
_TORCH_DTYPE_NAMES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
                      "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "float", "double", "half",
                      "long", "int", "short", "cfloat", "cdouble"}


def _fg_dtype(name: str):
    """funcgrad's dtype for a torch dtype name; a clear error for one funcgrad lacks (bfloat16 without
    ml_dtypes, quantized types)."""
    d = _dtype_mod()._NAMES.get(name)
    if d is None:
        extra = " (install ml_dtypes for bfloat16 support)" if name == "bfloat16" else ""
        raise RuntimeError(f"funcgrad.load: the checkpoint holds torch.{name} data, which funcgrad does not "
                           f"support{extra}")
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
        want = _fg_dtype(dtype.name).dtype
        if buf.dtype != want:
            if buf.dtype != np.uint8 or buf.size % want.itemsize:
                raise RuntimeError(f"funcgrad.load: storage of {buf.dtype} cannot hold {dtype}")
            buf = buf.view(want)
            storage.buf = buf
            storage.st.buf = buf
    size, stride, offset = tuple(int(s) for s in size), tuple(int(s) for s in stride), int(offset)
    if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"funcgrad.load: invalid tensor layout size={size} stride={stride} offset={offset}")
    if all(s > 0 for s in size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= buf.size:
            raise RuntimeError(f"funcgrad.load: tensor of size {list(size)}, stride {list(stride)} and offset {offset} "
                               f"is out of bounds for a storage of {buf.size} elements")
    item = buf.itemsize
    base = buf[offset:] if offset < buf.size else buf[:0]
    view = np.lib.stride_tricks.as_strided(base, shape=size, strides=tuple(s * item for s in stride))
    t = _tensor_mod()._make(view)
    t._st = storage.st
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _fg.nn.Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _fg.nn.Parameter(data, requires_grad)
    _set_obj_state(p, state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if type(ret) is not new_type and new_type is not _fg.Tensor:
        ret = _fg.Tensor._make_subclass(new_type, ret.detach(), ret.requires_grad)
    _set_obj_state(ret, state)
    return ret


def _set_obj_state(obj, state):
    if not state:
        return
    if isinstance(state, tuple):
        d, slots = state
        for k, v in (d or {}).items():
            setattr(obj, k, v)
        for k, v in (slots or {}).items():
            setattr(obj, k, v)
    else:
        for k, v in state.items():
            setattr(obj, k, v)


def _torch_globals():
    """Full names of the torch globals a checkpoint may use, mapped to funcgrad objects."""
    m = {"torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
         "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
         "torch._utils._rebuild_tensor": _rebuild_tensor,
         "torch._utils._rebuild_parameter": _rebuild_parameter,
         "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
         "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
         "torch.nn.parameter.Parameter": _fg.nn.Parameter,
         "torch.Tensor": _fg.Tensor,
         "torch.Size": _fg.Size,
         "torch.device": _fg.device,
         "torch.storage.UntypedStorage": _UNTYPED,
         "torch.UntypedStorage": _UNTYPED}
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


class _StorageRef:
    """A storage to write: a flat C-contiguous array and its key."""

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

    def _g(self, module, name):
        key = (module, name)
        if key not in self.globals:
            self.globals[key] = _Global(module, name)
        return self.globals[key]

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            name = _STORAGE_NAMES.get(str(_fg_dtype_of(obj.arr)))
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
        ref, off, strides = self._storage_of(t)
        size = tuple(int(s) for s in t.shape)
        if _STORAGE_NAMES.get(str(_fg_dtype_of(ref.arr))) is None:
            return (_G_REBUILD_V3, (ref, off, size, strides, bool(t.requires_grad), OrderedDict(),
                                    self._g("torch", str(_fg_dtype_of(ref.arr)))))
        return (_G_REBUILD_V2, (ref, off, size, strides, bool(t.requires_grad), OrderedDict()))


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
            z.writestr(f"{name}/byteorder", sys.byteorder)
        for ref in p.storages.values():
            arr = ref.arr
            if arr.dtype.byteorder == ">" or (arr.dtype.byteorder == "=" and sys.byteorder == "big"):
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            z.writestr(f"{name}/data/{ref.key}", np.ascontiguousarray(arr).tobytes())
        z.writestr(f"{name}/version", "3\n")


# --- loading --------------------------------------------------------------------------------------------------
class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix, weights_only, map_location, **kw):
        super().__init__(file, **kw)
        self.zf, self.prefix, self.weights_only = zf, prefix, weights_only
        self.map_location = map_location
        self.loaded = {}
        self.torch = _torch_globals()
        self.user = _user_safe() if weights_only else {}
        bo = prefix + "byteorder"
        self.byteorder = zf.read(bo).decode() if bo in zf.namelist() else "little"

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if full in self.torch:
            return self.torch[full]
        if module == "torch" and name in _TORCH_DTYPE_NAMES:
            return _fg_dtype(name)
        if full in _DEFAULT_SAFE:
            return _DEFAULT_SAFE[full]
        if self.weights_only:
            if full in self.user:
                return self.user[full]
            raise pickle.UnpicklingError(_unsupported(full))
        if module == "torch" or module.startswith("torch."):
            alt = "funcgrad" + module[5:]
            try:
                return super().find_class(alt, name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(f"funcgrad.load: the checkpoint needs {full}, which has no funcgrad "
                                             "counterpart") from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid!r}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType):
            raise pickle.UnpicklingError(f"funcgrad.load: unknown storage type {stype!r}")
        key = str(key)
        if key in self.loaded:
            return self.loaded[key]
        _map_location(self.map_location, str(location))
        raw = self.zf.read(f"{self.prefix}data/{key}")
        dt = np.dtype(np.uint8) if stype.dtype_name is None else _fg_dtype(stype.dtype_name).dtype
        if dt.itemsize > 1:
            dt = dt.newbyteorder("<" if self.byteorder == "little" else ">")
        arr = np.frombuffer(raw, dtype=dt, count=len(raw) // dt.itemsize).astype(dt.newbyteorder("="), copy=True)
        st = _LoadedStorage(arr)
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, dict, _fg.device)):
            moved = ml(st, str(location))
            if moved is not None and not isinstance(moved, _LoadedStorage):
                raise RuntimeError("funcgrad.load: a map_location callable must return the storage it was given "
                                   f"(or None); got {type(moved).__name__}")
            st = moved or st
        self.loaded[key] = st
        return st


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
    dtypes, plain containers and allow-listed globals; TORCH_FORCE_WEIGHTS_ONLY_LOAD and
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD override it as in torch. map_location may be 'cpu', a device, a dict or
    a callable; tensors are always restored on the CPU."""
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
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    if mmap:
        raise NotImplementedError("funcgrad.load does not support mmap=True")
    pickle_load_args.setdefault("encoding", "utf-8")
    if _is_path(f):
        with open(f, "rb") as fh:
            data = fh.read()
    else:
        data = f.read()
    return _load_bytes(data, map_location, weights_only, pickle_load_args)


def _load_bytes(data, map_location, weights_only, pickle_load_args):
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise RuntimeError("funcgrad.load: not a zip checkpoint; torch.save's legacy (non-zip) format, written with "
                           "_use_new_zipfile_serialization=False, is not supported")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        if _OLD_PREFIX + "manifest.json" in names:
            return _load_old(z)
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pkl:
            if any(n.endswith("constants.pkl") for n in names):
                raise RuntimeError("funcgrad.load: this is a TorchScript archive, which funcgrad cannot load")
            raise RuntimeError("funcgrad.load: not a checkpoint (no data.pkl and no funcgrad manifest)")
        prefix = pkl[0][:-len("data.pkl")]
        u = _Unpickler(io.BytesIO(z.read(pkl[0])), z, prefix, weights_only, map_location,
                       **({k: v for k, v in pickle_load_args.items() if k in ("encoding", "errors")}))
        if weights_only:
            try:
                obj = u.load()
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
        else:
            obj = u.load()
    return obj


def get_unsafe_globals_in_checkpoint(f) -> list:
    """The globals of a checkpoint that a weights_only load would refuse (without unpickling it)."""
    import pickletools
    data = open(f, "rb").read() if _is_path(f) else f.read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
        raw = z.read(pkl)
    known = set(_torch_globals()) | set(_DEFAULT_SAFE) | set(_user_safe())
    out, strings = [], []
    for op, arg, _ in pickletools.genops(raw):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        if op.name == "GLOBAL":
            full = arg.replace(" ", ".")
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            full = f"{strings[-2]}.{strings[-1]}"
        else:
            continue
        mod, name = full.rsplit(".", 1)
        mod, name = _compat_pickle.NAME_MAPPING.get((mod, name), (_compat_pickle.IMPORT_MAPPING.get(mod, mod), name))
        full = f"{mod}.{name}"
        if full not in known and not (mod == "torch" and name in _TORCH_DTYPE_NAMES) and full not in out:
            out.append(full)
    return out


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
                ten = _fg.nn.Parameter(ten, requires_grad=bool(node.get("requires_grad")))
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
